// Lines and zones placed by clicking on a frame (the task page's analytics panel): a line is two clicks, a
// zone three or more and a close (or a click back on its first point). Geometry is kept in pixels of the
// source frame, as boxes are; rules the server sent keep their other fields (classes, anchor, dwell_ms, ...),
// and rules in `relative` units are converted both ways with the frame size.
import type { AnalyticsRules, LineRule, Point, ZoneRule } from './api/types.js'; // .js: also imported by the Node tests (NodeNext)

export type Tool = 'line' | 'zone' | null;
export interface Size {
  width: number;
  height: number;
}

export interface Drawing {
  lines: LineRule[];
  zones: ZoneRule[];
  /** Points of the rule being placed. */
  draft: Point[];
  tool: Tool;
}

export const EMPTY_DRAWING: Drawing = { lines: [], zones: [], draft: [], tool: null };

/** A click this close (in source pixels, relative to the frame's width) to a zone's first point closes it. */
const CLOSE_SHARE = 0.02;

const round = (v: number) => Math.round(v * 10) / 10;

function nextId(prefix: string, d: Drawing): string {
  const taken = new Set([...d.lines.map((l) => l.id), ...d.zones.map((z) => z.id)]);
  let n = 1;
  while (taken.has(`${prefix}${n}`)) n++;
  return `${prefix}${n}`;
}

/** A click at `p` (source pixels) with the current tool. */
export function addPoint(d: Drawing, p: Point, space: Size): Drawing {
  const at: Point = [round(p[0]), round(p[1])];
  if (d.tool === 'line') {
    if (d.draft.length === 0) return { ...d, draft: [at] };
    const a = d.draft[0]!;
    if (a[0] === at[0] && a[1] === at[1]) return d; // a zero-length line: wait for another point
    return { ...d, draft: [], lines: [...d.lines, { id: nextId('line', d), points: [a, at] }] };
  }
  if (d.tool === 'zone') {
    const first = d.draft[0];
    if (first && d.draft.length >= 3 && Math.hypot(first[0] - at[0], first[1] - at[1]) <= CLOSE_SHARE * space.width)
      return closeZone(d);
    return { ...d, draft: [...d.draft, at] };
  }
  return d;
}

export function closeZone(d: Drawing): Drawing {
  if (d.tool !== 'zone' || d.draft.length < 3) return d;
  return { ...d, draft: [], zones: [...d.zones, { id: nextId('zone', d), polygon: d.draft }] };
}

export function removeRule(d: Drawing, id: string): Drawing {
  return { ...d, lines: d.lines.filter((l) => l.id !== id), zones: d.zones.filter((z) => z.id !== id) };
}

const scale = (p: Point, sx: number, sy: number): Point => [p[0] * sx, p[1] * sy];

/** The server's rules as a drawing in source pixels. */
export function drawingOf(rules: AnalyticsRules | null, space: Size): Drawing {
  if (!rules) return EMPTY_DRAWING;
  const [sx, sy] = rules.units === 'relative' ? [space.width, space.height] : [1, 1];
  return {
    ...EMPTY_DRAWING,
    lines: (rules.lines ?? []).map((l) => ({ ...l, points: [scale(l.points[0], sx, sy), scale(l.points[1], sx, sy)] })),
    zones: (rules.zones ?? []).map((z) => ({ ...z, polygon: z.polygon.map((p) => scale(p, sx, sy)) })),
  };
}

/** The drawing as rules to send: the other settings of `base` kept, its units respected. */
export function rulesOf(d: Drawing, base: AnalyticsRules | null, space: Size): AnalyticsRules {
  const relative = base?.units === 'relative';
  const [sx, sy] = relative ? [1 / space.width, 1 / space.height] : [1, 1];
  const clampRel = (v: number) => (relative ? Math.min(1, Math.max(0, Math.round(v * 10_000) / 10_000)) : v);
  const put = (p: Point): Point => [clampRel(p[0] * sx), clampRel(p[1] * sy)];
  return {
    ...(base ?? {}),
    lines: d.lines.map((l) => ({ ...l, points: [put(l.points[0]), put(l.points[1])] })),
    zones: d.zones.map((z) => ({ ...z, polygon: z.polygon.map(put) })),
  };
}

/** Where the `in` side of a line is: a unit normal pointing to where (B-A)x(P-A) > 0 (x right, y down). */
export function inNormal(l: LineRule): Point {
  const [[ax, ay], [bx, by]] = l.points;
  const len = Math.hypot(bx - ax, by - ay) || 1;
  return [-(by - ay) / len, (bx - ax) / len];
}
