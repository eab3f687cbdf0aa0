// Counting on a task (docs/analytics.md): lines and zones placed by clicking on the frame, sent to a running
// task (PUT .../analytics: they apply from its next sampled frame), recounted on a finished one (POST
// .../analytics/recount, no decoding) or started as a new task on the same video; the counts (GET
// .../analytics, refreshed while the task runs), the heatmap of where the tracks were, and each crossing, entry
// and exit the task counted with its time (a click shows the video there, to check a count by eye).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ProjectApi } from '../api/project-api';
import { HttpError } from '../api/http';
import type { AnalyticsEvent, AnalyticsRecount, AnalyticsTotals, AnalyticsView, Point, VideoTask } from '../api/types';
import {
  EMPTY_DRAWING,
  addPoint,
  closeZone,
  drawingOf,
  removeRule,
  rulesOf,
  type Drawing,
  type Size,
  type Tool,
} from '../analytics-rules';
import { Notice, errorMessage } from '../components/notice';
import { navigate } from '../router';
import { fmtClock } from '../format';

const ACTIVE = new Set(['pending', 'running', 'streaming']);
const REFRESH_MS = 1000;
const HEATMAP_REFRESH_MS = 5000;

export interface TaskAnalytics {
  drawing: Drawing;
  heatmap: string | null;
  onPoint(p: Point): void;
}

/** The analytics state of one task page: the drawing (shown over the player) and everything the panel needs. */
export function useTaskAnalytics(
  api: ProjectApi,
  task: VideoTask | null,
  space: Size,
  keyRejected: (e: unknown) => boolean,
) {
  const [view, setView] = useState<AnalyticsView | null>(null);
  /** null until known: whether the task has an analytics step. */
  const [hasStep, setHasStep] = useState<boolean | null>(null);
  const [drawing, setDrawing] = useState<Drawing>(EMPTY_DRAWING);
  const [recount, setRecount] = useState<AnalyticsRecount | null>(null);
  const [message, setMessage] = useState<{ kind: 'error' | 'success'; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [showHeatmap, setShowHeatmap] = useState(false);
  const [heatmap, setHeatmap] = useState<string | null>(null);
  const edited = useRef(false);
  const id = task?.id ?? null;
  const active = task !== null && ACTIVE.has(task.status);

  const load = async () => {
    if (!id) return;
    try {
      const v = await api.analytics(id);
      setHasStep(true);
      setView(v);
      // The task's own rules are the starting drawing until the person changes it.
      if (!edited.current)
        setDrawing((d) => ({ ...drawingOf(v.parameters, v.frame_size ?? space), tool: d.tool, draft: d.draft }));
    } catch (e) {
      if (e instanceof HttpError && e.code === 'analytics_unavailable') setHasStep(false);
      else if (!keyRejected(e)) setMessage({ kind: 'error', text: errorMessage(e) });
    }
  };
  useEffect(() => {
    // Another task on the same page (after "Start a new task"): its own rules and counts.
    edited.current = false;
    setView(null);
    setHasStep(null);
    setRecount(null);
    void load();
  }, [api, id]);
  useEffect(() => {
    if (!active || hasStep !== true) return;
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [active, hasStep, id]);
  // The last totals are saved when the task ends: read them once more then.
  useEffect(() => {
    if (task && !active && hasStep) void load();
  }, [task?.status]);

  useEffect(() => {
    if (!showHeatmap || !id) {
      setHeatmap(null);
      return;
    }
    let url: string | null = null;
    let stopped = false;
    const fetchOne = async () => {
      try {
        const blob = await api.heatmap(id);
        if (stopped) return;
        const next = URL.createObjectURL(blob);
        if (url) URL.revokeObjectURL(url);
        url = next;
        setHeatmap(next);
      } catch (e) {
        if (!stopped && !keyRejected(e)) setMessage({ kind: 'error', text: `Heatmap: ${errorMessage(e)}` });
      }
    };
    void fetchOne();
    const timer = active ? setInterval(() => void fetchOne(), HEATMAP_REFRESH_MS) : null;
    return () => {
      stopped = true;
      if (timer) clearInterval(timer);
      if (url) URL.revokeObjectURL(url);
    };
  }, [showHeatmap, id, active]);

  const change = (d: Drawing) => {
    edited.current = true;
    setDrawing(d);
  };
  const run = async (f: () => Promise<string>) => {
    setBusy(true);
    setMessage(null);
    try {
      setMessage({ kind: 'success', text: await f() });
    } catch (e) {
      if (!keyRejected(e)) setMessage({ kind: 'error', text: errorMessage(e) });
    } finally {
      setBusy(false);
    }
  };
  const rules = () => rulesOf(drawing, view?.parameters ?? null, view?.frame_size ?? space);

  return {
    layer: { drawing, heatmap, onPoint: (p: Point) => change(addPoint(drawing, p, space)) } as TaskAnalytics,
    panel: {
      task,
      view,
      hasStep,
      drawing,
      recount,
      message,
      busy,
      showHeatmap,
      active,
      setTool: (tool: Tool) => setDrawing({ ...drawing, tool: drawing.tool === tool ? null : tool, draft: [] }),
      closeZone: () => change(closeZone(drawing)),
      remove: (ruleId: string) => change(removeRule(drawing, ruleId)),
      clear: () => change({ ...EMPTY_DRAWING, tool: drawing.tool }),
      setShowHeatmap,
      apply: () =>
        run(async () => {
          const v = await api.setAnalytics(id!, rules());
          setView(v);
          setRecount(null);
          return `Sent to the running task: rules version ${v.version}, counting from its next frame.`;
        }),
      recountNow: () =>
        run(async () => {
          const r = await api.recount(id!, rules());
          setRecount(r);
          return `Recounted ${r.frames} stored frames in ${r.recount_ms} ms.`;
        }),
      startNew: (basePath: string) =>
        run(async () => {
          const steps = (task?.request?.steps ?? []).filter((s) => s.model !== 'analytics');
          const created = await api.process({
            input: task?.request?.input,
            steps: [...steps, { model: 'analytics', parameters: rules() }],
          });
          navigate(`${basePath}/tasks/${encodeURIComponent(created.id)}`);
          return `Started task ${created.id}.`;
        }),
    },
  };
}

type PanelState = ReturnType<typeof useTaskAnalytics>['panel'];

/** `events`: the task's counted events as streamed; `onEvent` shows the video at an event's time. */
export function AnalyticsPanel(props: {
  state: PanelState;
  basePath: string;
  events?: readonly AnalyticsEvent[];
  onEvent?(ms: number): void;
}) {
  const s = props.state;
  const d = s.drawing;
  const totals: AnalyticsTotals | null = s.recount?.totals ?? s.view?.totals ?? null;
  const ruleCount = d.lines.length + d.zones.length;
  // A new task needs the source again: a URL input (an uploaded video is not echoed back).
  const canStart =
    s.task?.request?.input?.[0]?.type === 'video_url' && s.task.request.steps?.some((x) => x.model === 'detect');
  const canApply = s.active && s.hasStep === true;
  const finished = s.task !== null && !s.active && s.task.status !== 'cancelling';
  return (
    <section class="analytics" aria-labelledby="analytics-title">
      <h3 id="analytics-title">Counting</h3>
      <p class="muted">
        {d.tool === 'line'
          ? d.draft.length
            ? "Click the line's second point."
            : "Click the line's first point on the frame. Objects crossing towards the arrow count as in."
          : d.tool === 'zone'
            ? `Click the zone's corners on the frame${d.draft.length >= 3 ? ', then close it' : ''}.`
            : s.hasStep === false
              ? 'This task has no analytics step: place lines and zones, then recount it or start a new task with them.'
              : 'Place lines and zones on the frame, then send them.'}
      </p>
      <div class="row tools" role="toolbar" aria-label="Place rules">
        <button type="button" aria-pressed={d.tool === 'line'} onClick={() => s.setTool('line')}>
          Line
        </button>
        <button type="button" aria-pressed={d.tool === 'zone'} onClick={() => s.setTool('zone')}>
          Zone
        </button>
        {d.tool === 'zone' && (
          <button type="button" disabled={d.draft.length < 3} onClick={s.closeZone}>
            Close zone
          </button>
        )}
        <button type="button" disabled={ruleCount === 0} onClick={s.clear}>
          Clear
        </button>
        <label>
          <input
            type="checkbox"
            checked={s.showHeatmap}
            onChange={(e) => s.setShowHeatmap((e.target as HTMLInputElement).checked)}
          />{' '}
          Show heatmap
        </label>
      </div>
      {ruleCount > 0 && (
        <ul class="rules" aria-label="Rules">
          {d.lines.map((l) => (
            <li key={l.id}>
              line <code>{l.id}</code> ({l.points.map((p) => p.map(Math.round).join(', ')).join(' → ')}){' '}
              <button type="button" class="link" onClick={() => s.remove(l.id)}>
                remove
              </button>
            </li>
          ))}
          {d.zones.map((z) => (
            <li key={z.id}>
              zone <code>{z.id}</code> ({z.polygon.length} corners){' '}
              <button type="button" class="link" onClick={() => s.remove(z.id)}>
                remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <div class="row">
        {canApply && (
          <button type="button" class="primary" disabled={s.busy} onClick={() => void s.apply()}>
            Apply to the running task
          </button>
        )}
        {finished && (
          <button
            type="button"
            class="primary"
            disabled={s.busy || ruleCount === 0}
            onClick={() => void s.recountNow()}
          >
            Recount
          </button>
        )}
        {canStart && (
          <button type="button" disabled={s.busy || ruleCount === 0} onClick={() => void s.startNew(props.basePath)}>
            Start a new task with these rules
          </button>
        )}
      </div>
      {s.message && <Notice kind={s.message.kind}>{s.message.text}</Notice>}
      {totals ? (
        <Counts totals={totals} source={s.recount ? 'recount' : s.active ? 'live' : 'final'} />
      ) : (
        s.hasStep && <p class="muted">No counts yet.</p>
      )}
      {props.events && props.events.length > 0 && <EventList events={props.events} onEvent={props.onEvent} />}
    </section>
  );
}

function Counts(props: { totals: AnalyticsTotals; source: 'recount' | 'live' | 'final' }) {
  const lines = Object.entries(props.totals.lines);
  const zones = Object.entries(props.totals.zones);
  return (
    <table class="data numeric" aria-label="Counts" data-source={props.source} data-version={props.totals.version}>
      <caption>
        {{ recount: 'Recount of the stored tracks', live: 'So far (live)', final: 'Final counts' }[props.source]} ·
        rules version {props.totals.version}
      </caption>
      <thead>
        <tr>
          <th scope="col">Rule</th>
          <th scope="col">In / entered</th>
          <th scope="col">Out / exited</th>
          <th scope="col">Inside now (max)</th>
        </tr>
      </thead>
      <tbody>
        {lines.map(([id, l]) => (
          <tr key={id} data-rule={id} class={l.active === false ? 'muted' : undefined}>
            <th scope="row">line {id}</th>
            <td data-count="in">{l.in}</td>
            <td data-count="out">{l.out}</td>
            <td>—</td>
          </tr>
        ))}
        {zones.map(([id, z]) => (
          <tr key={id} data-rule={id} class={z.active === false ? 'muted' : undefined}>
            <th scope="row">zone {id}</th>
            <td data-count="entered">{z.entered}</td>
            <td data-count="exited">{z.exited}</td>
            <td>
              {z.occupancy}
              {z.max_occupancy !== undefined ? ` (${z.max_occupancy})` : ''}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Shown at most: a long task's list ends with how many more there are (the counts hold them all). */
const MAX_EVENTS = 500;

/** Each crossing, entry and exit the task counted, with its time: a click shows the video there. */
function EventList(props: { events: readonly AnalyticsEvent[]; onEvent?(ms: number): void }) {
  const shown = props.events.slice(0, MAX_EVENTS);
  const what = (e: AnalyticsEvent) =>
    e.type === 'line.crossed'
      ? `line ${e.rule} ${e.direction}`
      : `zone ${e.rule} ${e.type === 'zone.entered' ? 'entered' : 'exited'}`;
  return (
    <>
      <h4 id="events-title">Events ({props.events.length})</h4>
      <ol class="events" aria-labelledby="events-title">
        {shown.map((e) => (
          <li key={e.id} data-event={e.type} data-rule={e.rule}>
            <button type="button" class="link" data-t-ms={e.t_ms} onClick={() => props.onEvent?.(e.t_ms)}>
              {fmtClock(e.t_ms)}
            </button>
            {` ${what(e)}${e.track_id !== null ? `, track ${e.track_id}` : ''}`}
          </li>
        ))}
      </ol>
      {props.events.length > shown.length && <p class="muted">and {props.events.length - shown.length} more.</p>}
    </>
  );
}
