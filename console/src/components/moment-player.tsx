// One moment of a search (docs/moments.md): its task's video from the moment's start, with the boxes and
// tracks of exactly that moment, read from the task's result stream at the moment's stream_offset (the
// archive from there, live chunks after it while the task runs). Reading stops once the stream passes the
// moment's end, so replaying a moment of a long video reads only that moment's chunks.
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { ProjectApi } from '../api/project-api';
import type { Moment, VideoTask } from '../api/types';
import { followTaskStream, type StreamState } from '../api/task-stream';
import { TaskFrames } from '../task-frames';
import { fmtClock, fmtScore } from '../format';
import { href, onLinkClick } from '../router';
import { ErrorNotice, Loading, Notice } from './notice';
import { TrackPlayer, videoSourceOf } from './track-player';
import { perAnimationFrame } from '../frame-throttle';

const RUNNING = new Set(['pending', 'running', 'streaming', 'cancelling']);

export function MomentPlayer(props: {
  api: ProjectApi;
  moment: Moment;
  basePath: string;
  keyRejected(e: unknown): boolean;
  onClose(): void;
}) {
  const m = props.moment;
  const [task, setTask] = useState<VideoTask | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [state, setState] = useState<{ state: StreamState; detail?: string }>({ state: 'connecting' });
  const [, setVersion] = useState(0);
  const frames = useMemo(() => new TaskFrames(), [m.task_id, m.stream_offset]);

  useEffect(() => {
    setTask(null);
    setError(null);
    props.api.task(m.task_id).then(setTask, (e) => {
      if (!props.keyRejected(e)) setError(e);
    });
  }, [props.api, m.task_id]);

  useEffect(() => {
    if (!task) return;
    const redraw = perAnimationFrame(() => setVersion((v) => v + 1));
    const s = followTaskStream({
      url: task.stream_url,
      key: props.api.key,
      from: m.stream_offset,
      onChunk: (c) => {
        const t = c.stream_info.stream_time_ms;
        // The first chunk past the moment's end: the moment is complete.
        if (t !== undefined && t > m.end_ms) {
          s.close();
          setState({ state: 'done' });
          return;
        }
        frames.add(c);
        redraw.bump();
      },
      onState: (st, detail) => setState({ state: st, detail }),
    });
    return () => {
      s.close();
      redraw.cancel();
    };
  }, [task?.id, m.stream_offset, m.end_ms]);

  const taskPath = `${props.basePath}/tasks/${encodeURIComponent(m.task_id)}`;
  const src = task ? videoSourceOf(task) : null;
  return (
    <section
      class="panel moment-player"
      aria-label="Moment"
      data-task-id={m.task_id}
      data-start-ms={m.start_ms}
      data-end-ms={m.end_ms}
      data-stream-offset={m.stream_offset}
    >
      <div class="row">
        <h4>
          {m.video} · {fmtClock(m.start_ms)}–{fmtClock(m.end_ms)}
        </h4>
        <span class="muted">
          score {fmtScore(m.score)} ·{' '}
          {m.kind === 'track' ? `track #${m.track_id ?? '?'}${m.class ? ` (${m.class})` : ''}` : 'segment'}
        </span>
        <a href={href(taskPath)} onClick={(e) => onLinkClick(e, taskPath)}>
          Task <code>{m.task_id}</code>
        </a>
        <button type="button" class="small" onClick={props.onClose}>
          Close
        </button>
      </div>
      {error != null && <ErrorNotice error={error} what="the moment's task" />}
      {error == null && !task && <Loading what="the moment's task" />}
      {task && src && (
        <>
          {src.note && <Notice kind="info">{src.note}</Notice>}
          {state.state === 'failed' && (
            <Notice kind="error" title="The moment's boxes could not be read">
              {state.detail ?? 'The stream stopped.'}
            </Notice>
          )}
          <TrackPlayer
            url={src.url}
            frames={frames}
            live={RUNNING.has(task.status)}
            range={{ startMs: m.start_ms, endMs: m.end_ms }}
          />
        </>
      )}
    </section>
  );
}
