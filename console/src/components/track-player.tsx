// A task's source video with each frame's tracked boxes drawn in sync (the video's clock picks the frame, a
// slider scrubs), or the boxes alone on a blank frame when the video cannot be shown. The task page plays a
// whole task; the collection page plays one moment (`range`): it seeks to the moment's start, plays, and
// pauses at its end.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { VideoTask } from '../api/types';
import type { TaskFrames } from '../task-frames';
import { Notice } from './notice';
import { TrackOverlay } from './track-overlay';

/** Where a task's video can be played from: a presigned link, else the URL the task read; null with a note. */
export function videoSourceOf(t: VideoTask): { url: string | null; note: string | null } {
  const presigned = t.input_url ?? t.content_url ?? null;
  if (presigned) return { url: presigned, note: null };
  const input = t.request?.input?.[0];
  if (input?.type === 'video_url' && input.url) return { url: input.url, note: null };
  if (input?.type === 'video_base64')
    return {
      url: null,
      note: 'The video was uploaded as base64 and the server offers no link to it: the boxes are drawn on a blank frame.',
    };
  return { url: null, note: 'The task does not say where its video is: the boxes are drawn on a blank frame.' };
}

export interface PlayerRange {
  startMs: number;
  endMs: number;
}
export interface FrameSpace {
  width: number;
  height: number;
}

/** A request to show the frame at `ms` of stream time; `n` changes with every request (the same time again). */
export interface SeekRequest {
  ms: number;
  n: number;
}

/**
 * `frameSize`: the source frame's size when the server recorded it (used without a playable video);
 * `seekTo`: go to that time, paused (the task page's event list);
 * `onSpace` hears the pixel space boxes are drawn in; `layer` draws more over the frame in that space (the
 * task page's counting lines and zones).
 */
export function TrackPlayer(props: {
  url: string | null;
  frames: TaskFrames;
  live: boolean;
  range?: PlayerRange;
  seekTo?: SeekRequest | null;
  frameSize?: FrameSpace | null;
  onSpace?(s: FrameSpace): void;
  layer?(space: FrameSpace): ComponentChildren;
}) {
  const video = useRef<HTMLVideoElement>(null);
  const [dims, setDims] = useState<{ width: number; height: number } | null>(null);
  const [videoError, setVideoError] = useState<string | null>(null);
  // null: follow the video's clock (or, without a video, the newest frame).
  const [pos, setPos] = useState<number | null>(null);
  // The moment's end pauses the video once per play from its start (a viewer may play on past it).
  const stopAtEnd = useRef(true);
  const frames = props.frames.frames;
  const usable = props.url !== null && videoError === null;
  const range = props.range;

  // Keep the boxes on the frame the video shows, whether it plays, is paused or seeks.
  useEffect(() => {
    if (!usable) return;
    let raf = 0;
    let lastTime = -1;
    let lastCount = -1;
    const tick = () => {
      const v = video.current;
      if (v && v.readyState >= 1 && (v.currentTime !== lastTime || frames.length !== lastCount)) {
        lastTime = v.currentTime;
        lastCount = frames.length;
        if (range && stopAtEnd.current && !v.paused && v.currentTime >= range.endMs / 1000) {
          v.pause();
          stopAtEnd.current = false;
        }
        setPos(props.frames.positionAt(v.currentTime));
      }
      raf = requestAnimationFrame(tick);
    };
    raf = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(raf);
  }, [usable, props.frames, range?.startMs, range?.endMs]);

  const playRange = () => {
    const v = video.current;
    if (!v || !range) return;
    stopAtEnd.current = true;
    v.currentTime = range.startMs / 1000;
    // Muted, so browsers allow it without a gesture; a refusal leaves the video paused at the start.
    void v.play().catch(() => undefined);
  };
  // A new moment in the same player: go to its start.
  useEffect(() => {
    if (dims) playRange();
  }, [range?.startMs, range?.endMs]);

  // An event clicked in the list: its frame, and the video paused there.
  useEffect(() => {
    const s = props.seekTo;
    if (!s) return;
    setPos(props.frames.positionAt(s.ms / 1000));
    const v = video.current;
    if (v && usable) {
      v.pause();
      v.currentTime = s.ms / 1000 + 1e-3;
    }
  }, [props.seekTo?.n]);

  const shown = pos === null ? frames.length - 1 : pos;
  const frame = shown >= 0 ? frames[shown] : undefined;
  // Source-frame pixels: the video's own size, else the size the server recorded, else what holds every box.
  const space = usable && dims ? dims : (props.frameSize ?? props.frames.extent());
  useEffect(() => props.onSpace?.(space), [space.width, space.height]);
  const seek = (p: number) => {
    setPos(p);
    const v = video.current;
    const f = frames[p];
    if (v && usable && f) {
      v.pause();
      v.currentTime = f.time + 1e-3;
    }
  };

  return (
    <section class="player" aria-label="Video with tracked objects">
      {props.url && videoError && (
        <Notice kind="warning" title="The video cannot be played here">
          {videoError} The boxes are drawn on a blank frame instead.
        </Notice>
      )}
      <div class="stage" style={usable && dims ? undefined : { aspectRatio: `${space.width} / ${space.height}` }}>
        {usable && (
          <video
            ref={video}
            src={props.url!}
            controls
            muted
            playsInline
            preload="auto"
            onLoadedMetadata={(e) => {
              const v = e.currentTarget as HTMLVideoElement;
              setDims({ width: v.videoWidth, height: v.videoHeight });
              if (range) playRange();
            }}
            onError={() => setVideoError(`The source (${props.url}) could not be loaded or decoded by this browser.`)}
          />
        )}
        {(!usable || dims) && frame && (
          <TrackOverlay targets={frame.targets} width={space.width} height={space.height} />
        )}
        {(!usable || dims) && props.layer?.(space)}
      </div>
      {frame && (
        <ul class="visually-hidden" aria-label="Objects in this frame">
          {frame.targets.map((t, i) => (
            <li
              key={i}
            >{`${t.class}, track ${t.track_id}, ${Math.round(t.confidence * 100)}%, at ${Math.round(t.roi.left)}, ${Math.round(t.roi.top)}, size ${Math.round(t.roi.width)} by ${Math.round(t.roi.height)}`}</li>
          ))}
        </ul>
      )}
      <div class="row scrub">
        <label for="frame-slider">Frame</label>
        <input
          id="frame-slider"
          type="range"
          min={0}
          max={Math.max(0, frames.length - 1)}
          step={1}
          value={Math.max(0, shown)}
          disabled={frames.length === 0}
          onInput={(e) => seek(Number((e.target as HTMLInputElement).value))}
        />
        <output for="frame-slider" data-testid="frame-info">
          {frame
            ? `frame ${frame.index} · ${frame.time.toFixed(2)} s · ${frame.targets.length} object(s)`
            : frames.length
              ? 'before the first sampled frame'
              : props.live
                ? 'waiting for frames…'
                : 'no frames'}
        </output>
        {!usable && pos !== null && props.live && (
          <button type="button" class="small" onClick={() => setPos(null)}>
            Follow live
          </button>
        )}
        {range && usable && (
          <button type="button" class="small" onClick={playRange}>
            Replay moment
          </button>
        )}
      </div>
    </section>
  );
}
