// One video task: the source video with each frame's tracked boxes drawn in sync, fed live by the SSE stream
// (resumed by byte offset after a drop) and replayed from the archive once the task has ended; counting
// lines and zones placed on the frame (task-analytics.tsx); then the per-track summary.
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { TaskResults, TrackSummary, VideoTask } from '../api/types';
import { followTaskStream, type StreamState } from '../api/task-stream';
import { TaskFrames } from '../task-frames';
import { fmtDateTime, fmtMs, fmtNumber } from '../format';
import { href, onLinkClick } from '../router';
import { trackColour } from '../track-colours';
import { ErrorNotice, Loading, Notice, Unavailable, isRouteMissing } from '../components/notice';
import { TrackPlayer, videoSourceOf, type SeekRequest } from '../components/track-player';
import { RulesLayer } from '../components/rules-layer';
import type { Size } from '../analytics-rules';
import type { V1PageProps } from './tasks-page';
import { AnalyticsPanel, useTaskAnalytics } from './task-analytics';
import { perAnimationFrame } from '../frame-throttle';

const RUNNING = new Set(['pending', 'running', 'streaming', 'cancelling']);

export function TaskPage(props: V1PageProps & { taskId: string }) {
  const [task, setTask] = useState<VideoTask | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [results, setResults] = useState<TaskResults | null>(null);
  const [streamState, setStreamState] = useState<{ state: StreamState; detail?: string }>({ state: 'connecting' });
  const [finish, setFinish] = useState<string | null>(null);
  const [, setVersion] = useState(0);
  const frames = useMemo(() => new TaskFrames(), [props.taskId]);
  const [space, setSpace] = useState<Size>({ width: 1, height: 1 });
  const [seekTo, setSeekTo] = useState<SeekRequest | null>(null);
  const analytics = useTaskAnalytics(props.api, task, space, props.keyRejected);

  const loadTask = async () => {
    try {
      const t = await props.api.task(props.taskId);
      setTask(t);
      if (t.status === 'succeeded') setResults(await props.api.results(props.taskId).catch(() => null));
    } catch (e) {
      if (!props.keyRejected(e)) setError(e);
    }
  };
  useEffect(() => {
    void loadTask();
  }, [props.api, props.taskId]);

  // One stream per page: the archive replays from byte 0, then live chunks follow; re-render at most per frame.
  useEffect(() => {
    if (!task) return;
    const redraw = perAnimationFrame(() => setVersion((v) => v + 1));
    const s = followTaskStream({
      url: task.stream_url,
      key: props.api.key,
      onChunk: (c) => {
        frames.add(c);
        if (c.finish_reason) setFinish(c.finish_reason);
        redraw.bump();
      },
      onState: (state, detail) => {
        setStreamState({ state, detail });
        if (state === 'done') void loadTask();
      },
    });
    return () => {
      s.close();
      redraw.cancel();
    };
  }, [task?.id]);

  // The record (status, progress) is not on the stream: refresh it now and then while the task runs.
  const running = task !== null && RUNNING.has(task.status);
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(() => void loadTask(), 3000);
    return () => clearInterval(timer);
  }, [running, props.taskId]);

  if (isRouteMissing(error)) return <Unavailable feature="Video tasks" routes="GET /v1/video/tasks/:id" />;
  if (error != null) return <ErrorNotice error={error} what="the task" />;
  if (!task) return <Loading what="the task" />;
  const src = videoSourceOf(task);
  const frameSize = analytics.panel.view?.frame_size ?? null;
  const listPath = `${props.basePath}/tasks`;
  return (
    <>
      <p class="crumbs">
        <a href={href(listPath)} onClick={(e) => onLinkClick(e, listPath)}>
          Video tasks
        </a>{' '}
        / <code>{task.id}</code>
      </p>
      <h2>
        Task <code>{task.id}</code>
      </h2>
      <TaskFacts
        task={task}
        streamState={streamState}
        finish={finish}
        frameCount={frames.frames.length}
        onCancel={async () => {
          try {
            setTask(await props.api.cancel(task.id));
          } catch (e) {
            if (!props.keyRejected(e)) setError(e);
          }
        }}
      />
      {src.note && <Notice kind="info">{src.note}</Notice>}
      <TrackPlayer
        url={src.url}
        frames={frames}
        live={RUNNING.has(task.status) && streamState.state !== 'done'}
        frameSize={frameSize}
        onSpace={setSpace}
        seekTo={seekTo}
        layer={(space) => (
          <RulesLayer
            space={space}
            drawing={analytics.layer.drawing}
            onPoint={analytics.layer.onPoint}
            heatmap={
              analytics.layer.heatmap ? { url: analytics.layer.heatmap, frame: frameSize ?? frames.boxExtent() } : null
            }
          />
        )}
      />
      <AnalyticsPanel
        state={analytics.panel}
        basePath={props.basePath}
        events={frames.events}
        onEvent={(ms) => setSeekTo((s) => ({ ms, n: (s?.n ?? 0) + 1 }))}
      />
      <h3>Tracks</h3>
      <TrackTable
        tracks={results?.tracks.length ? results.tracks : frames.summary()}
        final={results !== null && results.tracks.length > 0}
      />
    </>
  );
}

function TaskFacts(props: {
  task: VideoTask;
  streamState: { state: StreamState; detail?: string };
  finish: string | null;
  frameCount: number;
  onCancel(): void;
}) {
  const t = props.task;
  const live = {
    connecting: 'connecting…',
    open: 'receiving',
    reconnecting: 'reconnecting (resuming from the last byte received)…',
    done: 'complete',
    failed: 'stopped',
  }[props.streamState.state];
  return (
    <div class="facts">
      <dl>
        <dt>Status</dt>
        <dd>
          <span class={`badge badge-${t.status}`} data-testid="task-status">
            {t.status}
          </span>
        </dd>
        <dt>Created</dt>
        <dd>{fmtDateTime(t.created_at)}</dd>
        <dt>Finished</dt>
        <dd>{fmtDateTime(t.finished_at)}</dd>
        <dt>Model</dt>
        <dd>{t.model}</dd>
        <dt>Frames</dt>
        <dd>
          {fmtNumber(t.usage?.processed_frames ?? t.progress.decoded_frames)}
          {t.progress.total_frames ? ` of ${fmtNumber(t.progress.total_frames)}` : ''}
        </dd>
        <dt>Processing time</dt>
        <dd>{fmtMs(t.usage?.processing_time_ms)}</dd>
        <dt>Stream</dt>
        <dd aria-live="polite">
          {live}
          {props.streamState.detail ? `: ${props.streamState.detail}` : ''} · {props.frameCount} frame(s)
          {props.finish ? ` · finished: ${props.finish}` : ''}
        </dd>
      </dl>
      {t.error && (
        <Notice kind="error" title={`Task failed (${t.error.code})`}>
          {t.error.message}
        </Notice>
      )}
      {RUNNING.has(t.status) && t.status !== 'cancelling' && (
        <button type="button" class="danger small" onClick={props.onCancel}>
          Cancel task
        </button>
      )}
    </div>
  );
}

function TrackTable(props: { tracks: TrackSummary[]; final: boolean }) {
  if (props.tracks.length === 0) return <p>No tracked objects{props.final ? '' : ' yet'}.</p>;
  return (
    <>
      {!props.final && (
        <p class="muted">
          Summary of the frames received so far; the server's final summary appears when the task succeeds.
        </p>
      )}
      <table class="data numeric" aria-label="Tracks">
        <thead>
          <tr>
            <th scope="col">Track</th>
            <th scope="col">Class</th>
            <th scope="col">First frame</th>
            <th scope="col">Last frame</th>
            <th scope="col">Frames seen</th>
            <th scope="col">Best confidence</th>
            <th scope="col">Feature</th>
          </tr>
        </thead>
        <tbody>
          {props.tracks.map((t) => (
            <tr key={t.track_id} data-track-id={t.track_id}>
              <th scope="row">
                <span class="swatch" style={{ background: trackColour(t.track_id) }} aria-hidden="true" />#{t.track_id}
              </th>
              <td>{t.class}</td>
              <td>{t.first_frame}</td>
              <td>{t.last_frame}</td>
              <td>{t.frames_seen}</td>
              <td>{(t.best_confidence * 100).toFixed(1)}%</td>
              <td>{t.feature_digest ? <code>{t.feature_digest}</code> : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
