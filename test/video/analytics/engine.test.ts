// The engine end to end on synthetic tracks: zones (enter, exit, dwell, crowding, transitions, lost
// tracks), classes, relative units, buckets, speed, a rule change between frames, and determinism (what
// makes a recount exact).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAnalytics } from '../../../src/video/analytics/rules.js';
import { engineFor, framesOf, runAll, type Path } from './helpers.js';

const stay = (p: [number, number], n: number): Path => Array(n).fill(p);
const ZONES = {
  zones: [
    {
      id: 'left',
      polygon: [
        [0, 0],
        [200, 0],
        [200, 480],
        [0, 480],
      ],
      dwell_ms: 1500,
    },
    {
      id: 'right',
      polygon: [
        [400, 0],
        [640, 0],
        [640, 480],
        [400, 480],
      ],
      max_occupancy: 1,
      crowd_ms: 300,
    },
  ],
};

test('zones: entered, exited with dwell, dwell event once, transitions, p50/p95/max', () => {
  const e = engineFor(ZONES);
  // Track 1: 3 s in left, walks to right, stays 1 s. Track 2: right for 5 s from t = 0.
  const t1: Path = [...stay([100, 240], 30), ...stay([300, 240], 5), ...stay([500, 240], 10)];
  const t2: Path = stay([550, 240], 50);
  const events = runAll(e, framesOf([t1, t2]));
  const s = e.summary();
  assert.equal(s.zones.left.entered, 1);
  assert.equal(s.zones.left.exited, 1);
  assert.equal(s.zones.right.entered, 2);
  assert.equal(s.zones.right.exited, 2, 'both closed by finish()');
  assert.deepEqual(s.transitions, { left: { right: 1 } });
  const dwell = events.filter((x) => x.type === 'zone.dwell');
  assert.equal(dwell.length, 1);
  assert.equal(dwell[0].rule, 'left');
  assert.equal(dwell[0].track_id, 1);
  // Entered at the 2nd sample (min_samples 2), left when first seen 2 samples outside: 100 ms .. 3100 ms.
  const exitLeft = events.find((x) => x.type === 'zone.exited' && x.rule === 'left')!;
  assert.equal(exitLeft.dwell_ms, 3000);
  assert.equal(s.zones.left.dwell_ms.max, 3000);
  assert.equal(s.zones.right.max_occupancy, 2);
  assert.equal(s.zones.right.occupancy, 0);
  assert.equal(s.zones.right.dwell_ms.count, 2);
  // Crowded once: both inside for 300 ms.
  const crowded = events.filter((x) => x.type === 'zone.crowded');
  assert.equal(crowded.length, 1);
  assert.equal(crowded[0].occupancy, 2);
  assert.equal(crowded[0].track_id, null);
  // Event ids are unique and carry the version.
  assert.equal(new Set(events.map((x) => x.id)).size, events.length);
  assert.ok(events.every((x) => x.version === 1));
});

test('zones: a track hovering on the edge does not enter and leave repeatedly', () => {
  const e = engineFor({
    zones: [
      {
        id: 'z',
        polygon: [
          [100, 100],
          [300, 100],
          [300, 300],
          [100, 300],
        ],
      },
    ],
  });
  const hover: Path = Array.from({ length: 200 }, (_, i) => [300 + (i % 2 ? 3 : -3), 200] as const);
  runAll(e, framesOf([hover], 30));
  assert.equal(e.summary().zones.z.entered, 0);
});

test('classes, relative units, anchors and buckets', () => {
  const e = engineFor({
    units: 'relative',
    interval_ms: 1000,
    lines: [
      {
        id: 'cars',
        points: [
          [0.5, 0],
          [0.5, 1],
        ],
        classes: ['car'],
      },
      {
        id: 'all',
        points: [
          [0.5, 0],
          [0.5, 1],
        ],
        anchor: 'center',
      },
    ],
  });
  const path: Path = Array.from({ length: 30 }, (_, i) => [500 - i * 10, 240] as const);
  const frames = framesOf([path]);
  runAll(e, frames);
  const s = e.summary();
  assert.equal(s.lines.cars.in + s.lines.cars.out, 0, 'a person does not count on a car line');
  assert.equal(s.lines.all.in, 1);
  assert.deepEqual(s.lines.all.by_class, { person: { in: 1, out: 0 } });
  // x = 320 is passed between samples 18 and 19; counted at the 2nd sample beyond the band (t = 2000 ms).
  assert.deepEqual(s.lines.all.buckets, [{ start_ms: 2000, in: 1, out: 0 }]);
});

test('speed: a calibrated ground plane gives km/h on tracks and line statistics', () => {
  // 100 px = 10 m on a flat top-down view; 10 samples/s at 10 px a sample = 10 m/s = 36 km/h.
  const e = engineFor({
    lines: [
      {
        id: 'l',
        points: [
          [300, 0],
          [300, 480],
        ],
      },
    ],
    speed: {
      image: [
        [0, 0],
        [100, 0],
        [100, 100],
        [0, 100],
      ],
      ground: [
        [0, 0],
        [10, 0],
        [10, 10],
        [0, 10],
      ],
    },
  });
  const path: Path = Array.from({ length: 40 }, (_, i) => [100 + i * 10, 240] as const);
  const frames = framesOf([path]);
  let last = NaN;
  const crossed = [];
  for (const f of frames) {
    const r = e.process(f);
    last = r.speeds!.get(1) ?? NaN;
    crossed.push(...r.events);
  }
  assert.ok(Math.abs(last - 36) < 0.1, `speed ${last}`);
  assert.equal(crossed.length, 1);
  assert.ok(Math.abs(crossed[0].speed_kmh! - 36) < 0.5);
  assert.ok(Math.abs(e.summary().lines.l.speed_kmh!.p50! - 36) < 0.5);
});

test("a rule change applies at the next frame, bumps the version and keeps removed rules' totals", () => {
  const e = engineFor({
    lines: [
      {
        id: 'a',
        points: [
          [400, 0],
          [400, 480],
        ],
      },
    ],
  });
  const frames = framesOf([Array.from({ length: 60 }, (_, i) => [590 - i * 10, 240] as const)]);
  let events = frames.slice(0, 25).flatMap((f) => e.process(f).events);
  assert.equal(events.length, 1, 'crossed x = 400 at sample 19');
  assert.equal(
    e.setRules(
      parseAnalytics(
        {
          lines: [
            {
              id: 'b',
              points: [
                [200, 0],
                [200, 480],
              ],
            },
          ],
        },
        'parameters',
      ),
    ),
    2,
  );
  events = frames.slice(25).flatMap((f) => e.process(f).events);
  assert.deepEqual(
    events.map((x) => [x.rule, x.version, x.direction]),
    [['b', 2, 'in']],
  );
  const s = e.summary();
  assert.equal(s.version, 2);
  assert.deepEqual([s.lines.a.in, s.lines.a.active, s.lines.b.in, s.lines.b.active], [1, false, 1, true]);
});

test("a rule kept across a change keeps its tracks' state: no double count", () => {
  const rule = {
    id: 'a',
    points: [
      [400, 0],
      [400, 480],
    ],
  };
  const e = engineFor({ lines: [rule] });
  const frames = framesOf([Array.from({ length: 40 }, (_, i) => [590 - i * 10, 240] as const)]);
  frames.slice(0, 20).forEach((f) => e.process(f));
  e.setRules(
    parseAnalytics(
      {
        lines: [
          rule,
          {
            id: 'c',
            points: [
              [100, 0],
              [100, 480],
            ],
          },
        ],
      },
      'parameters',
    ),
  );
  frames.slice(20).forEach((f) => e.process(f));
  assert.equal(e.summary().lines.a.in, 1);
});

test('deterministic: the same frames through a fresh engine give the same events and totals', () => {
  const params = {
    ...ZONES,
    lines: [
      {
        id: 'mid',
        points: [
          [300, 0],
          [300, 480],
        ],
      },
    ],
  };
  const paths: Path[] = Array.from({ length: 20 }, (_, k) =>
    Array.from({ length: 100 }, (_, i) =>
      (i + k) % 37 === 0 ? null : ([(i * (k + 3)) % 640, 100 + ((i * 7 + k * 13) % 300)] as const),
    ),
  );
  const a = engineFor(params),
    b = engineFor(params);
  const ea = runAll(a, framesOf(paths)),
    eb = runAll(b, framesOf(paths));
  assert.deepEqual(ea, eb);
  assert.deepEqual(a.summary(), b.summary());
  const s = a.summary(),
    c = a.counts();
  assert.deepEqual(c.lines.mid, { in: s.lines.mid.in, out: s.lines.mid.out });
  assert.deepEqual(c.zones.left, {
    occupancy: s.zones.left.occupancy,
    entered: s.zones.left.entered,
    exited: s.zones.left.exited,
  });
  assert.ok(ea.length > 20);
});
