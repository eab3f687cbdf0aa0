// Parameters -> the compiled rules the engine runs: coordinates in source pixels (relative ones scaled by
// the frame size), flat polygons with bounding boxes, anti-flicker settings resolved per rule. Also the one
// place that turns a bad parameter into the catalogue's 400 with `param` naming the rule.
import { errors } from '../../base/errors.js';
import { paramPath } from '../../http/validation.js';
import { homography, type Homography } from './geometry.js';
import {
  ANCHORS,
  AnalyticsParameters,
  DEFAULT_INTERVAL_MS,
  DEFAULT_JOIN_SAMPLES,
  DEFAULT_LOST_SAMPLES,
  DEFAULT_SPEED_WINDOW_MS,
  FLICKER_DEFAULTS,
  type Anchor,
} from './rules.schema.js';

export interface Flicker {
  minSamples: number;
  marginPx: number;
  marginBox: number;
  marginMaxPx: number;
}

export interface CompiledLine extends Flicker {
  id: string;
  /** JSON of what makes per-track state reusable across a rule change (geometry, anchor, classes). */
  key: string;
  ax: number;
  ay: number;
  bx: number;
  by: number;
  /** 1 / |B - A|: turns the cross product into a signed distance in pixels. */
  invLen: number;
  classes: ReadonlySet<string> | null;
  anchor: number;
}

export interface CompiledZone extends Flicker {
  id: string;
  key: string;
  flat: Float64Array;
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
  classes: ReadonlySet<string> | null;
  anchor: number;
  dwellMs: number | null;
  maxOccupancy: number | null;
  crowdMs: number;
}

export interface CompiledRules {
  lines: CompiledLine[];
  zones: CompiledZone[];
  /** Anchor kinds any rule uses (indexes into ANCHORS). */
  anchors: number[];
  intervalMs: number;
  lostSamples: number;
  joinSamples: number;
  speed: { h: Homography; windowMs: number } | null;
}

/**
 * Validates analytics parameters; a problem is a 400 whose param is `prefix` + the path inside them
 * (`steps[1].parameters.lines[2].points`). `labels`: the class names the detect step can produce, when known.
 */
export function parseAnalytics(input: unknown, prefix: string, labels?: readonly string[]): AnalyticsParameters {
  const r = AnalyticsParameters.safeParse(input ?? {});
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const path = [...issue.path];
    let message = issue.message;
    if (issue.code === 'unrecognized_keys') {
      const keys = (issue as { keys: string[] }).keys;
      path.push(keys[0]!);
      message = `Unknown field ${JSON.stringify(keys[0])}`;
    }
    const inner = paramPath(path);
    const param = inner ? (prefix ? `${prefix}.${inner}` : inner) : prefix || 'parameters';
    throw errors.invalidParam(param, `Invalid ${param}: ${message}`);
  }
  if (labels) {
    const known = new Set(labels.map((l) => l.toLowerCase()));
    const check = (classes: string[] | undefined, path: string) =>
      classes?.forEach((c, k) => {
        if (!known.has(c.trim().toLowerCase()))
          throw errors.unknownClass(`${prefix ? `${prefix}.` : ''}${path}.classes[${k}]`, c, labels);
      });
    r.data.lines?.forEach((l, i) => check(l.classes, `lines[${i}]`));
    r.data.zones?.forEach((z, i) => check(z.classes, `zones[${i}]`));
  }
  return r.data;
}

const anchorIndex = (a: Anchor | undefined, fallback: Anchor) => ANCHORS.indexOf(a ?? fallback);

function flicker(
  rule: { min_samples?: number; margin_px?: number; margin_box?: number; margin_max_px?: number },
  p: AnalyticsParameters,
): Flicker {
  return {
    minSamples: rule.min_samples ?? p.min_samples ?? FLICKER_DEFAULTS.min_samples,
    marginPx: rule.margin_px ?? p.margin_px ?? FLICKER_DEFAULTS.margin_px,
    marginBox: rule.margin_box ?? p.margin_box ?? FLICKER_DEFAULTS.margin_box,
    marginMaxPx: rule.margin_max_px ?? p.margin_max_px ?? FLICKER_DEFAULTS.margin_max_px,
  };
}

const classSet = (c: string[] | undefined) => (c ? new Set(c.map((x) => x.trim().toLowerCase())) : null);

/** Compiles validated parameters for a frame of width x height (used only with units "relative"). */
export function compileRules(p: AnalyticsParameters, width: number, height: number): CompiledRules {
  const sx = p.units === 'relative' ? width : 1;
  const sy = p.units === 'relative' ? height : 1;
  const anchorDefault = p.anchor ?? 'bottom_center';
  const lines = (p.lines ?? []).map((l): CompiledLine => {
    const [[ax, ay], [bx, by]] = l.points;
    const A = [ax * sx, ay * sy],
      B = [bx * sx, by * sy];
    const anchor = anchorIndex(l.anchor, anchorDefault);
    return {
      id: l.id,
      key: JSON.stringify([A, B, anchor, l.classes ?? null]),
      ax: A[0],
      ay: A[1],
      bx: B[0],
      by: B[1],
      invLen: 1 / Math.hypot(B[0] - A[0], B[1] - A[1]),
      classes: classSet(l.classes),
      anchor,
      ...flicker(l, p),
    };
  });
  const zones = (p.zones ?? []).map((z): CompiledZone => {
    const flat = new Float64Array(z.polygon.length * 2);
    z.polygon.forEach(([x, y], i) => {
      flat[2 * i] = x * sx;
      flat[2 * i + 1] = y * sy;
    });
    let minX = Infinity,
      minY = Infinity,
      maxX = -Infinity,
      maxY = -Infinity;
    for (let i = 0; i < flat.length; i += 2) {
      minX = Math.min(minX, flat[i]);
      maxX = Math.max(maxX, flat[i]);
      minY = Math.min(minY, flat[i + 1]);
      maxY = Math.max(maxY, flat[i + 1]);
    }
    const anchor = anchorIndex(z.anchor, anchorDefault);
    return {
      id: z.id,
      key: JSON.stringify([[...flat], anchor, z.classes ?? null]),
      flat,
      minX,
      minY,
      maxX,
      maxY,
      classes: classSet(z.classes),
      anchor,
      dwellMs: z.dwell_ms ?? null,
      maxOccupancy: z.max_occupancy ?? null,
      crowdMs: z.crowd_ms ?? 0,
      ...flicker(z, p),
    };
  });
  let speed: CompiledRules['speed'] = null;
  if (p.speed) {
    const h = homography(
      p.speed.image.map(([x, y]) => [x * sx, y * sy] as const),
      p.speed.ground,
    );
    if (h) speed = { h, windowMs: p.speed.window_ms ?? DEFAULT_SPEED_WINDOW_MS };
  }
  const anchors = [
    ...new Set([
      ...lines.map((l) => l.anchor),
      ...zones.map((z) => z.anchor),
      ...(speed ? [ANCHORS.indexOf('bottom_center')] : []),
    ]),
  ];
  return {
    lines,
    zones,
    anchors,
    intervalMs: p.interval_ms ?? DEFAULT_INTERVAL_MS,
    lostSamples: p.lost_samples ?? DEFAULT_LOST_SAMPLES,
    joinSamples: p.join_samples ?? DEFAULT_JOIN_SAMPLES,
    speed,
  };
}

/** Writes anchor `kind` of box [x1, y1, x2, y2] into out[o], out[o + 1]. */
export function anchorOf(
  kind: number,
  x1: number,
  y1: number,
  x2: number,
  y2: number,
  out: Float64Array,
  o: number,
): void {
  switch (kind) {
    case 0:
      out[o] = (x1 + x2) / 2;
      out[o + 1] = y2;
      break; // bottom_center
    case 1:
      out[o] = (x1 + x2) / 2;
      out[o + 1] = (y1 + y2) / 2;
      break; // center
    case 2:
      out[o] = (x1 + x2) / 2;
      out[o + 1] = y1;
      break; // top_center
    case 3:
      out[o] = x1;
      out[o + 1] = y1;
      break; // top_left
    case 4:
      out[o] = x2;
      out[o + 1] = y1;
      break; // top_right
    case 5:
      out[o] = x1;
      out[o + 1] = y2;
      break; // bottom_left
    default:
      out[o] = x2;
      out[o + 1] = y2; // bottom_right
  }
}
