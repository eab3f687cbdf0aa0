// Video tasks of the project (list shape in docs/video.md, "The task record"), filtered by status, newest
// first, a page at a time.
import { useEffect, useState } from 'preact/hooks';
import type { ProjectApi } from '../api/project-api';
import { TASK_STATES, type VideoTask } from '../api/types';
import { fmtDateTime, fmtMs, fmtNumber } from '../format';
import { href, onLinkClick } from '../router';
import { ErrorNotice, Loading, Unavailable, isRouteMissing } from '../components/notice';

export interface V1PageProps {
  api: ProjectApi;
  keyRejected(e: unknown): boolean;
  basePath: string;
}

export function TasksPage(props: V1PageProps) {
  const [statuses, setStatuses] = useState<string[]>([]);
  const [tasks, setTasks] = useState<VideoTask[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(false);

  const load = async (append: boolean, from: string | null) => {
    setLoading(true);
    setError(null);
    try {
      const r = await props.api.tasks({ status: statuses.join(',') || undefined, cursor: from });
      setTasks((prev) => (append && prev ? [...prev, ...r.data] : r.data));
      setCursor(r.has_more ? (r.next_cursor ?? null) : null);
    } catch (e) {
      if (!props.keyRejected(e)) setError(e);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => {
    void load(false, null);
  }, [props.api, statuses.join(',')]);

  if (isRouteMissing(error)) return <Unavailable feature="Video tasks" routes="GET /v1/video/tasks" />;
  const toggle = (s: string, on: boolean) => setStatuses((cur) => (on ? [...cur, s] : cur.filter((x) => x !== s)));
  return (
    <>
      <h2>Video tasks</h2>
      <fieldset class="panel filters">
        <legend>Status</legend>
        {TASK_STATES.map((s) => (
          <label key={s} class="check">
            <input
              type="checkbox"
              name="status"
              value={s}
              checked={statuses.includes(s)}
              onChange={(e) => toggle(s, (e.target as HTMLInputElement).checked)}
            />
            {s}
          </label>
        ))}
        <button type="button" class="small" onClick={() => void load(false, null)}>
          Refresh
        </button>
      </fieldset>
      {error != null && <ErrorNotice error={error} what="video tasks" />}
      {loading && !tasks && <Loading what="video tasks" />}
      {tasks && tasks.length === 0 && (
        <p>
          No video tasks{statuses.length ? ' with this status' : ''} yet. Tasks are created with{' '}
          <code>POST /v1/video/process</code>.
        </p>
      )}
      {tasks && tasks.length > 0 && (
        <table class="data" aria-label="Video tasks">
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Model</th>
              <th scope="col">Frames</th>
              <th scope="col">Processing time</th>
            </tr>
          </thead>
          <tbody>
            {tasks.map((t) => {
              const to = `${props.basePath}/tasks/${encodeURIComponent(t.id)}`;
              return (
                <tr key={t.id}>
                  <td>
                    <a href={href(to)} onClick={(e) => onLinkClick(e, to)}>
                      <code>{t.id}</code>
                    </a>
                  </td>
                  <td>
                    <span class={`badge badge-${t.status}`}>{t.status}</span>
                  </td>
                  <td>{fmtDateTime(t.created_at)}</td>
                  <td>{t.model}</td>
                  <td>
                    {fmtNumber(t.usage?.processed_frames ?? t.progress.decoded_frames)}
                    {t.progress.total_frames ? ` / ${fmtNumber(t.progress.total_frames)}` : ''}
                  </td>
                  <td>{fmtMs(t.usage?.processing_time_ms)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {cursor && (
        <button type="button" disabled={loading} onClick={() => void load(true, cursor)}>
          Load more
        </button>
      )}
    </>
  );
}
