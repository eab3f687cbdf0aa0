// What the failover bench (bench/suites/failover.ts) checks on each run's archive and answers, as named checks
// that pass or fail with a reason rather than assertions, so one failed run is reported beside the others
// instead of ending the suite. The rules are those of docs/video.md, "When a worker dies".
import { partsAtGaps } from '../test/helpers/archive-parts.js';

export interface Check {
  name: string;
  ok: boolean;
  detail?: string;
}

const check = (name: string, ok: boolean, detail?: string): Check => (ok ? { name, ok } : { name, ok, detail });

/** Everything a run of one task leaves to compare: its archive and the API's answers once it ended. */
export interface RunOutcome {
  id: string;
  bytes: Buffer;
  record: any;
  results: any;
  analytics: any;
  recount: any;
}

type Event = { kind: 'chunk'; text: string; chunk: any } | { kind: 'done' } | { kind: 'comment'; text: string };

/** The archive's events, or the reason it is not events back to back (each `data: ...` or `: ...` + blank line). */
export function eventsOf(bytes: Buffer): Event[] | string {
  const text = bytes.toString('utf8');
  if (!text.endsWith('\n\n')) return `the archive ends mid-event: ${JSON.stringify(text.slice(-80))}`;
  const out: Event[] = [];
  for (const ev of text.split('\n\n').slice(0, -1)) {
    if (ev.startsWith(':')) out.push({ kind: 'comment', text: ev });
    else if (ev === 'data: [DONE]') out.push({ kind: 'done' });
    else if (ev.startsWith('data: {')) {
      try {
        out.push({ kind: 'chunk', text: ev.slice(6), chunk: JSON.parse(ev.slice(6)) });
      } catch {
        return `an event is not JSON: ${JSON.stringify(ev.slice(0, 80))}`;
      }
    } else return `not an event: ${JSON.stringify(ev.slice(0, 80))}`;
  }
  return out;
}

const chunksOf = (events: Event[]) => events.flatMap((e) => (e.kind === 'chunk' ? [e.chunk] : []));

/**
 * A copy of `chunk` without what the wall clock sets, so two runs of the same task compare byte for byte:
 * `stream_info.elapsed_ms` (since the task started), `stream_info.received_at_ms` (when the decoder had the
 * frame), `usage.processing_time_ms`, all set to 0, and `stream_info.gap_ms` (the outage before a takeover)
 * removed: an undisturbed run has none, and what the frames hold does not depend on it.
 */
export function blankWallClock(chunk: any): any {
  const c = structuredClone(chunk);
  if (c.stream_info) {
    if ('elapsed_ms' in c.stream_info) c.stream_info.elapsed_ms = 0;
    if ('received_at_ms' in c.stream_info) c.stream_info.received_at_ms = 0;
    delete c.stream_info.gap_ms;
  }
  if (c.usage && 'processing_time_ms' in c.usage) c.usage.processing_time_ms = 0;
  return c;
}

/**
 * The archive as text to compare byte for byte: its chunk events with the wall clock blanked and the task id
 * replaced (it names every chunk), heartbeat comments left out (when they come is the wall clock's doing).
 * Each chunk is re-serialised, which is its exact bytes: `exact` says whether every event was.
 */
function comparable(id: string, events: Event[]): { text: string; exact: boolean } {
  let exact = true;
  const lines: string[] = [];
  for (const e of events) {
    if (e.kind === 'comment') continue;
    if (e.kind === 'done') {
      lines.push('[DONE]');
      continue;
    }
    if (JSON.stringify(e.chunk) !== e.text) exact = false;
    lines.push(JSON.stringify(blankWallClock(e.chunk)).replaceAll(id, 'TASK'));
  }
  return { text: lines.join('\n'), exact };
}

/** Chunk ids 0..N-1 each once, events back to back, one terminal chunk (the last) and [DONE], status succeeded. */
export function archiveChecks(o: RunOutcome): Check[] {
  const events = eventsOf(o.bytes);
  if (typeof events === 'string') return [check('events back to back (contiguous offsets)', false, events)];
  const chunks = chunksOf(events);
  const ids = chunks.map((c) => c.id);
  const want = chunks.map((_, i) => `${o.id}.${i}`);
  const bad = ids.findIndex((x, i) => x !== want[i]);
  const terminal = chunks.filter((c) => c.finish_reason !== null);
  const end = chunks.at(-1);
  return [
    check('events back to back (contiguous offsets)', true),
    check('chunk ids 0..N-1, each once', bad < 0, bad < 0 ? undefined : `chunk ${bad} is ${ids[bad]}`),
    check(
      'one terminal chunk, the last, then [DONE]',
      terminal.length === 1 && end?.finish_reason !== null && events.at(-1)?.kind === 'done',
      `${terminal.length} terminal chunks (${terminal.map((c) => c.finish_reason)}), last event ${events.at(-1)?.kind}`,
    ),
    check(
      'status succeeded',
      o.record.status === 'succeeded',
      `${o.record.status} ${JSON.stringify(o.record.error)} (resumes ${o.record.resumes}, attempts ${o.record.attempts})`,
    ),
  ];
}

/** A subscriber that stayed through every takeover, reconnecting with Last-Event-ID, got exactly the archive. */
export function followerChecks(
  archive: Buffer,
  got: Buffer,
  reconnects: Array<{ asked: number; answered: number }>,
): Check[] {
  const moved = reconnects.filter((r) => r.asked !== r.answered);
  return [
    check(
      'the connected subscriber received exactly the archive',
      got.equals(archive),
      `${got.length} bytes against the archive's ${archive.length}`,
    ),
    check(
      `each of ${reconnects.length} reconnects resumed at the byte it asked for`,
      moved.length === 0,
      JSON.stringify(moved),
    ),
  ];
}

const frameView = (c: any) => ({
  frame_index: c.stream_info.frame_index,
  stream_time_ms: c.stream_info.stream_time_ms,
  targets: c.delta.results.map((r: any) => r.targets),
});

const same = (name: string, a: unknown, b: unknown): Check => {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return check(name, x === y, x === y ? undefined : `${y?.slice(0, 160)} against undisturbed ${x?.slice(0, 160)}`);
};

/** A disturbed run against the undisturbed run of the same task: the same frames, answers, and bytes. */
export function sameAsUndisturbed(base: RunOutcome, run: RunOutcome): Check[] {
  const be = eventsOf(base.bytes);
  const re = eventsOf(run.bytes);
  if (typeof be === 'string' || typeof re === 'string')
    return [check('comparable archives', false, typeof be === 'string' ? `undisturbed: ${be}` : String(re))];
  const bf = chunksOf(be).filter((c) => c.finish_reason === null);
  const rf = chunksOf(re).filter((c) => c.finish_reason === null);
  const diff = bf.findIndex((c, i) => JSON.stringify(frameView(c)) !== JSON.stringify(rf[i] && frameView(rf[i])));
  const bc = comparable(base.id, be);
  const rc = comparable(run.id, re);
  const at = [...bc.text].findIndex((ch, i) => ch !== rc.text[i]);
  const first = at < 0 && bc.text.length === rc.text.length ? -1 : at < 0 ? bc.text.length : at;
  const index = (r: any) => (r?.index ? { ...r.index, collection: undefined } : undefined);
  return [
    check(
      'frame indices, times, targets and track ids as undisturbed',
      bf.length === rf.length && diff < 0,
      `${rf.length} frame chunks against ${bf.length}; first difference at frame chunk ${diff}`,
    ),
    same('analytics totals as undisturbed', base.analytics?.totals, run.analytics?.totals),
    same('recount as undisturbed', base.recount?.totals, run.recount?.totals),
    same('results (tracks) as undisturbed', base.results?.tracks, run.results?.tracks),
    same('usage (frames) as undisturbed', base.record.usage?.processed_frames, run.record.usage?.processed_frames),
    same('index step counts as undisturbed', index(base.record), index(run.record)),
    check(
      'stream byte for byte as undisturbed (wall clock blanked)',
      first < 0 && bc.exact && rc.exact,
      !bc.exact || !rc.exact
        ? 'a chunk is not its own JSON.stringify: blanking cannot compare bytes'
        : `first difference at character ${first}: ${JSON.stringify(rc.text.slice(Math.max(0, first - 40), first + 60))}`,
    ),
  ];
}

/** A live task continued after `kills` takeovers: gaps marked, ids never reused, totals never backwards. */
export function liveChecks(bytes: Buffer, kills: number, line: string): Check[] {
  const events = eventsOf(bytes);
  if (typeof events === 'string') return [check('live archive', false, events)];
  const frames = chunksOf(events).filter((c) => c.finish_reason === null);
  const split = partsAtGaps(frames);
  const out: Check[] = [
    check(
      `${kills} gaps marked (stream_info.gap_ms)`,
      split.length === kills + 1 && frames.every((f) => (f.stream_info.gap_ms ?? 0) >= 0),
      JSON.stringify(frames.map((c) => c.stream_info.gap_ms ?? null)),
    ),
  ];
  const back = frames.findIndex(
    (c, i) =>
      i > 0 &&
      (c.stream_info.frame_index <= frames[i - 1].stream_info.frame_index ||
        c.stream_info.stream_time_ms <= frames[i - 1].stream_info.stream_time_ms),
  );
  out.push(check('frame indices and stream time go on', back < 0, `at frame chunk ${back}`));
  let highest = 0;
  let reused = '';
  for (const part of split) {
    const ids = part.flatMap((c) => c.delta.results.flatMap((r: any) => r.targets.map((t: any) => t.track_id)));
    if (ids.length > 0 && Math.min(...ids) <= highest) reused ||= `ids ${[...new Set(ids)]} after ${highest}`;
    highest = Math.max(highest, ...ids);
  }
  out.push(check('track ids never reused across a takeover', !reused, reused));
  let last = { in: 0, out: 0 };
  let backwards = '';
  for (const c of frames) {
    const now = c.analytics?.totals?.lines?.[line] ?? { in: 0, out: 0 };
    if (now.in < last.in || now.out < last.out) backwards ||= `${JSON.stringify(now)} after ${JSON.stringify(last)}`;
    last = now;
  }
  out.push(check('line totals never go backwards', !backwards, backwards));
  return out;
}
