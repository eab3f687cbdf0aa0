// The analytics step's parameters (docs/analytics.md, "Parameters"): lines, zones, anchor, units, time buckets,
// speed calibration and the anti-flicker settings, as zod schemas (validation and the OpenAPI document).
// Geometry that zod's types cannot say (a zero-length line, a self-intersecting polygon, a relative point
// outside 0..1, a duplicate id) is checked here too, so every 400 names the rule: `lines[2].points`.
import { z } from 'zod';
import { homography, polygonProblem, type Point } from './geometry.js';

export const ANCHORS = [
  'bottom_center',
  'center',
  'top_center',
  'top_left',
  'top_right',
  'bottom_left',
  'bottom_right',
] as const;
export type Anchor = (typeof ANCHORS)[number];

export const MAX_LINES = 64;
export const MAX_ZONES = 64;
export const MAX_POLYGON_POINTS = 64;

/**
 * Anti-flicker defaults (see line-counter.ts for the rule and the measurements behind them): a side or
 * inside/outside state changes only after `min_samples` consecutive sampled frames beyond the margin, the
 * margin being max(margin_px, margin_box x box height).
 */
export const FLICKER_DEFAULTS = { min_samples: 2, margin_px: 4, margin_box: 0.1, margin_max_px: 12 } as const;
/** A new track id takes over the state of one lost at most this many sampled frames before (engine.ts). */
export const DEFAULT_JOIN_SAMPLES = 5;
export const DEFAULT_INTERVAL_MS = 60_000;
export const DEFAULT_SPEED_WINDOW_MS = 1000;
/** A track missing from this many consecutive sampled frames has left (its zones get zone.exited). */
export const DEFAULT_LOST_SAMPLES = 5;

const received = (input: unknown): string =>
  input === undefined
    ? 'nothing'
    : input === null
      ? 'null'
      : typeof input === 'string'
        ? JSON.stringify(input.slice(0, 100))
        : Array.isArray(input)
          ? 'an array'
          : typeof input === 'object'
            ? 'an object'
            : String(input);
const expected = (what: string, field: string) => ({
  error: (iss: { input?: unknown }) => `Expected ${what} for ${field} but received ${received(iss.input)}`,
});

const num = (field: string) =>
  z
    .number(expected('a finite number', field))
    .refine(Number.isFinite, { message: `Expected a finite number for ${field}` });
const PointSchema = (field: string) => z.tuple([num(field), num(field)], expected('a point [x, y]', field));
const intIn = (field: string, min: number, max: number) => {
  const e = expected(`an integer between ${min} and ${max}`, field);
  return z.number(e).int(e).min(min, e).max(max, e);
};
const numIn = (field: string, min: number, max: number) => {
  const e = expected(`a number between ${min} and ${max}`, field);
  return z.number(e).min(min, e).max(max, e);
};
const RuleId = z
  .string(expected('an id string', 'id'))
  .regex(/^[A-Za-z0-9_.:-]{1,64}$/, { message: 'Expected an id of 1-64 letters, digits, "_", ".", ":" or "-" for id' });
const Classes = z
  .array(z.string(expected('a class name', 'classes')).min(1).max(100), expected('an array of class names', 'classes'))
  .min(1, expected('at least one class', 'classes'))
  .max(100)
  .optional()
  .meta({ description: "Only tracks of these classes (the detect step's class names); default all" });
const AnchorSchema = z.enum(ANCHORS, expected(`one of ${ANCHORS.join(', ')}`, 'anchor'));

const flickerFields = {
  min_samples: intIn('min_samples', 1, 30)
    .optional()
    .meta({
      description: `Consecutive sampled frames beyond the margin before a side (lines) or inside/outside (zones) changes; default ${FLICKER_DEFAULTS.min_samples}`,
    }),
  margin_px: numIn('margin_px', 0, 10_000)
    .optional()
    .meta({
      description: `Dead band around a line or zone edge, in source pixels; default ${FLICKER_DEFAULTS.margin_px}. The band is max(margin_px, margin_box x box height)`,
    }),
  margin_box: numIn('margin_box', 0, 10)
    .optional()
    .meta({ description: `Dead band as a fraction of the track's box height; default ${FLICKER_DEFAULTS.margin_box}` }),
  margin_max_px: numIn('margin_max_px', 0, 10_000)
    .optional()
    .meta({
      description: `Lines: margin_box x box height stops growing at this many pixels (close people); default ${FLICKER_DEFAULTS.margin_max_px}`,
    }),
};

/** Zones take the band settings but margin_max_px (lines only: a capped band let box jitter step in and out of zones). */
const { margin_max_px: _lineOnly, ...zoneFlickerFields } = flickerFields;

export const LineRule = z.strictObject({
  id: RuleId,
  points: z
    .tuple([PointSchema('points'), PointSchema('points')], expected('two points [[x, y], [x, y]]', 'points'))
    .meta({
      description:
        'A and B. `in` counts an anchor that passes from the side where (B-A)x(P-A) < 0 to the side where it is > 0 (x right, y down): for A=(400,0), B=(400,480), right to left',
    }),
  classes: Classes,
  anchor: AnchorSchema.optional(),
  ...flickerFields,
});

export const ZoneRule = z.strictObject({
  id: RuleId,
  polygon: z
    .array(PointSchema('polygon'), expected('an array of points', 'polygon'))
    .min(3, expected('3 to 64 points', 'polygon'))
    .max(MAX_POLYGON_POINTS, expected('3 to 64 points', 'polygon'))
    .meta({ description: 'A simple polygon (3-64 points, no self-intersection)' }),
  classes: Classes,
  anchor: AnchorSchema.optional(),
  dwell_ms: intIn('dwell_ms', 1, 86_400_000)
    .optional()
    .meta({ description: 'zone.dwell once per visit when a track stays longer than this' }),
  max_occupancy: intIn('max_occupancy', 0, 10_000)
    .optional()
    .meta({ description: 'zone.crowded when more tracks than this are inside for crowd_ms' }),
  crowd_ms: intIn('crowd_ms', 0, 86_400_000).optional().meta({
    description: 'How long occupancy must stay above max_occupancy; default 0 (the first sampled frame above it)',
  }),
  ...zoneFlickerFields,
});

export const SpeedCalibration = z.strictObject({
  image: z
    .array(PointSchema('speed.image'), expected('four image points', 'speed.image'))
    .length(4, expected('four image points', 'speed.image'))
    .meta({ description: 'Four points in the frame (in `units`)' }),
  ground: z
    .array(PointSchema('speed.ground'), expected('four ground points in metres', 'speed.ground'))
    .length(4, expected('four ground points in metres', 'speed.ground'))
    .meta({ description: 'Where those four points are on the ground plane, in metres' }),
  window_ms: intIn('speed.window_ms', 100, 60_000)
    .optional()
    .meta({
      description: `Speed is distance over about this much stream time, then smoothed; default ${DEFAULT_SPEED_WINDOW_MS}`,
    }),
});

export const AnalyticsParameters = z
  .strictObject({
    lines: z
      .array(LineRule, expected('an array of lines', 'lines'))
      .max(MAX_LINES, expected(`at most ${MAX_LINES} lines`, 'lines'))
      .optional(),
    zones: z
      .array(ZoneRule, expected('an array of zones', 'zones'))
      .max(MAX_ZONES, expected(`at most ${MAX_ZONES} zones`, 'zones'))
      .optional(),
    anchor: AnchorSchema.optional().meta({
      description: 'Point of a box that crosses lines and is inside zones; default bottom_center (the feet)',
    }),
    units: z.enum(['pixels', 'relative'], expected('"pixels" or "relative"', 'units')).optional().meta({
      description: 'pixels of the source frame (as target boxes are; default) or relative 0..1 of its width and height',
    }),
    interval_ms: intIn('interval_ms', 1000, 86_400_000)
      .optional()
      .meta({ description: `Time bucket of counts; default ${DEFAULT_INTERVAL_MS}` }),
    speed: SpeedCalibration.optional(),
    lost_samples: intIn('lost_samples', 1, 1000)
      .optional()
      .meta({
        description: `A track missing from this many consecutive sampled frames has left its zones; default ${DEFAULT_LOST_SAMPLES}`,
      }),
    join_samples: intIn('join_samples', 0, 1000)
      .optional()
      .meta({
        description: `Lines: a new track id first seen within half a box height of where a track of its class was last seen, at most this many sampled frames before, continues that track's sides (an id switch loses or doubles no crossing); 0: never; default ${DEFAULT_JOIN_SAMPLES}`,
      }),
    ...flickerFields,
  })
  .superRefine((p, ctx) => {
    const relative = p.units === 'relative';
    const checkPoint = (pt: Point, path: Array<string | number>) => {
      if (relative && (pt[0] < 0 || pt[0] > 1 || pt[1] < 0 || pt[1] > 1)) {
        ctx.addIssue({
          code: 'custom',
          path,
          message: `Expected coordinates between 0 and 1 with units "relative" but received [${pt[0]}, ${pt[1]}]`,
        });
        return false;
      }
      return true;
    };
    if ((p.lines?.length ?? 0) + (p.zones?.length ?? 0) === 0) {
      ctx.addIssue({ code: 'custom', path: ['lines'], message: 'Expected at least one line or zone' });
    }
    const seen = new Set<string>();
    p.lines?.forEach((l, i) => {
      if (seen.has(l.id))
        ctx.addIssue({
          code: 'custom',
          path: ['lines', i, 'id'],
          message: `Duplicate rule id ${JSON.stringify(l.id)}`,
        });
      seen.add(l.id);
      if (!l.points.every((pt, k) => checkPoint(pt, ['lines', i, 'points', k]))) return;
      const [a, b] = l.points;
      if (a[0] === b[0] && a[1] === b[1])
        ctx.addIssue({
          code: 'custom',
          path: ['lines', i, 'points'],
          message: `Expected two distinct points for line ${JSON.stringify(l.id)} but both are [${a[0]}, ${a[1]}] (a zero-length line)`,
        });
    });
    p.zones?.forEach((z, i) => {
      if (seen.has(z.id))
        ctx.addIssue({
          code: 'custom',
          path: ['zones', i, 'id'],
          message: `Duplicate rule id ${JSON.stringify(z.id)}`,
        });
      seen.add(z.id);
      // Refinements also run after non-fatal issues (a wrong point count); those are reported already.
      if (z.polygon.length < 3 || z.polygon.length > MAX_POLYGON_POINTS) return;
      if (!z.polygon.every((pt, k) => checkPoint(pt, ['zones', i, 'polygon', k]))) return;
      const problem = polygonProblem(z.polygon);
      if (problem)
        ctx.addIssue({
          code: 'custom',
          path: ['zones', i, 'polygon'],
          message: `Expected a simple polygon for zone ${JSON.stringify(z.id)}: ${problem}`,
        });
    });
    if (p.speed && p.speed.image.length === 4 && p.speed.ground.length === 4) {
      if (!p.speed.image.every((pt, k) => checkPoint(pt, ['speed', 'image', k]))) return;
      if (!homography(p.speed.image, p.speed.ground)) {
        ctx.addIssue({
          code: 'custom',
          path: ['speed'],
          message:
            'Expected four image points and four ground points with no three on one line (no homography maps them)',
        });
      }
    }
  })
  .meta({
    description:
      'Parameters of an analytics step: counting lines, zones, dwell, crowding and speed on the tracks of the detect step before it',
  });
export type AnalyticsParameters = z.infer<typeof AnalyticsParameters>;
