// The totals after each event of a chunk. A chunk carries the counts after all of its frame's events;
// an event message carries the counts right after it (a device that reads one message knows the count
// without a second subscription), found by undoing the frame's later events from the chunk's counts.
import type { AnalyticsEvent } from '../analytics/events.js';

export interface CountTotals {
  version: number;
  lines: Record<string, { in: number; out: number }>;
  zones: Record<string, { occupancy: number; entered: number; exited: number }>;
}

/** The counts of a chunk's totals or of a summary (which has more fields per rule): only the counts. */
export function countTotals(t: unknown): CountTotals {
  const src = (t ?? {}) as { version?: number; lines?: Record<string, any>; zones?: Record<string, any> };
  return {
    version: Number(src.version ?? 1),
    lines: Object.fromEntries(
      Object.entries(src.lines ?? {}).map(([id, l]) => [id, { in: Number(l.in) || 0, out: Number(l.out) || 0 }]),
    ),
    zones: Object.fromEntries(
      Object.entries(src.zones ?? {}).map(([id, z]) => [
        id,
        {
          occupancy: Number(z.occupancy) || 0,
          entered: Number(z.entered) || 0,
          exited: Number(z.exited) || 0,
        },
      ]),
    ),
  };
}

function copy(t: CountTotals): CountTotals {
  return {
    version: t.version,
    lines: Object.fromEntries(Object.entries(t.lines).map(([k, v]) => [k, { ...v }])),
    zones: Object.fromEntries(Object.entries(t.zones).map(([k, v]) => [k, { ...v }])),
  };
}

/** Takes one event's effect back out of `t`. */
function undo(t: CountTotals, e: AnalyticsEvent): void {
  if (e.type === 'line.crossed') {
    const l = t.lines[e.rule];
    if (l) {
      if (e.direction === 'in') l.in--;
      else if (e.direction === 'out') l.out--;
    }
  } else if (e.type === 'zone.entered') {
    const z = t.zones[e.rule];
    if (z) {
      z.entered--;
      z.occupancy--;
    }
  } else if (e.type === 'zone.exited') {
    const z = t.zones[e.rule];
    if (z) {
      z.exited--;
      z.occupancy++;
    }
  }
}

/** For each of a chunk's events in order, the counts right after it (the last one's are the chunk's). */
export function totalsAfterEach(events: readonly AnalyticsEvent[], chunkTotals: CountTotals): CountTotals[] {
  const out: CountTotals[] = new Array(events.length);
  const cur = copy(chunkTotals);
  for (let k = events.length - 1; k >= 0; k--) {
    out[k] = copy(cur);
    undo(cur, events[k]!);
  }
  return out;
}
