// Line counting: the direction convention, crossings through the segment only, and the flicker suite:
// 1000 hovering trajectories count nothing; straight crossings at every promised speed count once, in the
// right direction.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { engineFor, framesOf, rng, runAll, type Path } from './helpers.js';

const VERTICAL = {
  lines: [
    {
      id: 'door',
      points: [
        [400, 0],
        [400, 480],
      ],
    },
  ],
};
const count = (params: unknown, paths: Path[], h?: number) => {
  const e = engineFor(params);
  runAll(e, framesOf(paths, h));
  const s = e.summary().lines;
  return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, { in: v.in, out: v.out }]));
};
const straight = (from: [number, number], to: [number, number], n: number): Path =>
  Array.from(
    { length: n },
    (_, i) => [from[0] + ((to[0] - from[0]) * i) / (n - 1), from[1] + ((to[1] - from[1]) * i) / (n - 1)] as const,
  );

test('direction: A=(400,0) B=(400,480) drawn downwards: right to left is in, left to right is out', () => {
  assert.deepEqual(count(VERTICAL, [straight([500, 240], [300, 240], 20)]), { door: { in: 1, out: 0 } });
  assert.deepEqual(count(VERTICAL, [straight([300, 240], [500, 240], 20)]), { door: { in: 0, out: 1 } });
  // The same line drawn upwards swaps them.
  assert.deepEqual(
    count(
      {
        lines: [
          {
            id: 'up',
            points: [
              [400, 480],
              [400, 0],
            ],
          },
        ],
      },
      [straight([500, 240], [300, 240], 20)],
    ),
    { up: { in: 0, out: 1 } },
  );
  // A horizontal line drawn left to right: (B-A)x(P-A) > 0 below it (y down), so top to bottom is in.
  assert.deepEqual(
    count(
      {
        lines: [
          {
            id: 'h',
            points: [
              [0, 240],
              [640, 240],
            ],
          },
        ],
      },
      [straight([320, 100], [320, 400], 30)],
    ),
    { h: { in: 1, out: 0 } },
  );
});

test('only crossings through the segment count; there and back counts both ways', () => {
  const short = {
    lines: [
      {
        id: 's',
        points: [
          [400, 0],
          [400, 200],
        ],
      },
    ],
  };
  assert.deepEqual(count(short, [straight([500, 300], [300, 300], 20)]), { s: { in: 0, out: 0 } });
  assert.deepEqual(count(short, [straight([500, 150], [300, 150], 20)]), { s: { in: 1, out: 0 } });
  const back = [...straight([500, 240], [300, 240], 20), ...straight([300, 240], [500, 240], 20)];
  assert.deepEqual(count(VERTICAL, [back]), { door: { in: 1, out: 1 } });
});

test('an id lost and found on the same side counts once; one lost on one side and found on the other counts', () => {
  const across = straight([500, 240], [300, 240], 20);
  const refound: Path = [...across, ...Array(40).fill(null), ...straight([300, 240], [250, 240], 10)];
  assert.deepEqual(count(VERTICAL, [refound]), { door: { in: 1, out: 0 } });
  const jumped: Path = [
    ...straight([500, 240], [450, 240], 5),
    ...Array(10).fill(null),
    ...straight([350, 240], [300, 240], 5),
  ];
  assert.deepEqual(count(VERTICAL, [jumped]), { door: { in: 1, out: 0 } });
});

test('a one-sample glitch across the line and back counts nothing (naive counts two)', () => {
  const glitch: Path = [...straight([420, 240], [420, 240], 10), [380, 240], ...straight([420, 240], [420, 240], 10)];
  assert.deepEqual(count(VERTICAL, [glitch]), { door: { in: 0, out: 0 } });
  assert.equal(naiveCount(VERTICAL, glitch), 2);
});

/** The naive counter (every change of side through the segment counts): no band, one sample. */
function naiveCount(params: { lines: Array<Record<string, unknown>> }, path: Path): number {
  const c = count(
    { lines: params.lines.map((l) => ({ ...l, min_samples: 1, margin_px: 0, margin_box: 0 })), join_samples: 0 },
    [path],
  );
  return Object.values(c).reduce((s, v) => s + v.in + v.out, 0);
}

/** A line through the frame at a random angle, and the unit normal pointing to its `in` side. */
function randomLine(r: () => number) {
  const cx = 200 + r() * 240,
    cy = 150 + r() * 180,
    ang = r() * Math.PI;
  const half = 60 + r() * 200;
  const ux = Math.cos(ang),
    uy = Math.sin(ang);
  const A = [cx - ux * half, cy - uy * half],
    B = [cx + ux * half, cy + uy * half];
  // (B-A) x n > 0 for n = (-uy, ux): that side is `in`.
  return { A, B, ux, uy, nx: -uy, ny: ux, half, cx, cy };
}

test('flicker suite: 1000 tracks hovering within 3 px of a line count nothing', () => {
  const r = rng(25);
  let naive = 0;
  for (let k = 0; k < 1000; k++) {
    const L = randomLine(r);
    const along = (r() - 0.5) * 1.6 * L.half;
    const n = 50 + Math.floor(r() * 250);
    // A slow drift along the line, a random walk across it clipped to +-3 px, and a per-frame jitter.
    let off = (r() - 0.5) * 2;
    const path: Path = [];
    for (let i = 0; i < n; i++) {
      off = Math.max(-2.5, Math.min(2.5, off + (r() - 0.5) * 1.5));
      const d = Math.max(-3, Math.min(3, off + (r() - 0.5) * 1));
      const s = along + Math.sin(i / 20) * 10;
      // Sometimes the detector misses the person for a few samples.
      if (r() < 0.05) {
        path.push(null);
        continue;
      }
      path.push([L.cx + L.ux * s + L.nx * d, L.cy + L.uy * s + L.ny * d]);
    }
    const params = { lines: [{ id: 'l', points: [L.A, L.B] }] };
    // Boxes 30 px high: the band is max(4, 3) = 4 px.
    assert.deepEqual(count(params, [path], 30), { l: { in: 0, out: 0 } }, `trajectory ${k}`);
    naive += naiveCount(params, path);
  }
  assert.ok(naive > 1000, `the same trajectories give the naive counter ${naive} crossings`);
});

/** The speeds the documentation promises, in pixels per sample (of the anchor, across the line). */
const SPEEDS = [0.05, 0.2, 1, 3, 7, 15, 40, 100, 300, 1000, 2000];

test('flicker suite: straight crossings at 0.05 to 2000 px per sample count once, in the right direction', () => {
  const r = rng(7);
  let runs = 0;
  for (const v of SPEEDS) {
    for (let k = 0; k < 40; k++) {
      const L = randomLine(r);
      const h = 20 + r() * 200;
      const margin = Math.max(4, 0.1 * h);
      const dir = r() < 0.5 ? 1 : -1;
      const along = (r() - 0.5) * 1.8 * L.half;
      // From one sighting beyond the band on one side to two beyond it on the other, plus 1 px of noise
      // along the line, at a random phase; slow crossings start closer so the test stays short.
      let d = -dir * (margin + 1 + r() * v);
      const path: Path = [];
      while (dir * d <= margin + 2 * v + 2) {
        const s = along + (r() - 0.5) * 2;
        path.push([L.cx + L.ux * s + L.nx * d, L.cy + L.uy * s + L.ny * d]);
        d += dir * v;
      }
      const got = count({ lines: [{ id: 'l', points: [L.A, L.B] }] }, [path], h);
      assert.deepEqual(
        got,
        { l: dir === 1 ? { in: 1, out: 0 } : { in: 0, out: 1 } },
        `speed ${v} px/sample, case ${k}`,
      );
      runs++;
    }
  }
  assert.equal(runs, SPEEDS.length * 40);
});

test('per-rule overrides: min_samples 1 and margin 0 count a one-sample crossing', () => {
  const one: Path = [
    [420, 240],
    [380, 240],
  ];
  assert.deepEqual(count(VERTICAL, [one]), { door: { in: 0, out: 0 } });
  assert.deepEqual(
    count(
      {
        lines: [
          {
            id: 'door',
            points: [
              [400, 0],
              [400, 480],
            ],
            min_samples: 1,
            margin_px: 0,
            margin_box: 0,
          },
        ],
      },
      [one],
    ),
    { door: { in: 1, out: 0 } },
  );
  // A wide band per rule: a 15 px excursion no longer counts.
  const wiggle: Path = [...straight([430, 240], [385, 240], 5), ...straight([385, 240], [430, 240], 5)];
  assert.deepEqual(
    count(
      {
        lines: [
          {
            id: 'door',
            points: [
              [400, 0],
              [400, 480],
            ],
            margin_px: 20,
          },
        ],
      },
      [wiggle],
    ),
    { door: { in: 0, out: 0 } },
  );
});

test('a track first seen inside the band takes the side it is on: crossing from there counts once, walking away counts nothing', () => {
  // A close person (200 px tall): the band is min(0.1 x 200, 12) = 12 px. Born 6 px right of the line.
  const born = straight([406, 300], [300, 300], 20);
  assert.deepEqual(count(VERTICAL, [born], 200), { door: { in: 1, out: 0 } });
  assert.deepEqual(count(VERTICAL, [straight([406, 300], [500, 300], 20)], 200), { door: { in: 0, out: 0 } });
  // Born on the line itself: no side until it leaves the band, as before.
  assert.deepEqual(count(VERTICAL, [straight([400, 300], [300, 300], 20)], 200), { door: { in: 0, out: 0 } });
});

test('the band stops growing at margin_max_px (default 12): a close person stepping 16 px past the line for two samples counts', () => {
  const step: Path = [
    ...straight([430, 300], [430, 300], 5),
    [384, 300],
    [384, 300],
    ...straight([430, 300], [430, 300], 5),
  ];
  assert.deepEqual(count(VERTICAL, [step], 250), { door: { in: 1, out: 1 } });
  // With the band allowed to grow to 0.1 x 250 = 25 px, it stays inside.
  assert.deepEqual(count({ ...VERTICAL, margin_max_px: 30 }, [step], 250), { door: { in: 0, out: 0 } });
});

test('a new id born near where another ended a moment before continues its sides: a crossing across the switch counts once', () => {
  // Track 1 walks to 5 px right of the line and is lost; track 2 appears 2 samples later 20 px left of it.
  const before: Path = straight([480, 300], [405, 300], 10);
  const after: Path = [...Array(12).fill(null), ...straight([380, 300], [300, 300], 10)];
  assert.deepEqual(count(VERTICAL, [before, after], 200), { door: { in: 1, out: 0 } });
  assert.deepEqual(count({ ...VERTICAL, join_samples: 0 }, [before, after], 200), { door: { in: 0, out: 0 } });
  // Track 1 crossed (counted) before it was lost: the new id on the same side counts nothing more.
  const crossed: Path = straight([480, 300], [370, 300], 12);
  const further: Path = [...Array(14).fill(null), ...straight([360, 300], [300, 300], 10)];
  assert.deepEqual(count(VERTICAL, [crossed, further], 200), { door: { in: 1, out: 0 } });
  // Too far (more than half a box height) or too late (after join_samples): a person of its own.
  const far: Path = [...Array(12).fill(null), ...straight([380, 420], [300, 420], 10)];
  assert.deepEqual(count(VERTICAL, [before, far], 200), { door: { in: 0, out: 0 } });
  const late: Path = [...Array(17).fill(null), ...straight([380, 300], [300, 300], 10)];
  assert.deepEqual(count(VERTICAL, [before, late], 200), { door: { in: 0, out: 0 } });
});

test('flicker suite, close people: 1000 tracks 120-250 px tall hovering within 10 px of a line count nothing', () => {
  const r = rng(45);
  let naive = 0;
  for (let k = 0; k < 1000; k++) {
    const L = randomLine(r);
    const along = (r() - 0.5) * 1.6 * L.half;
    const h = 120 + r() * 130;
    const n = 50 + Math.floor(r() * 250);
    let off = (r() - 0.5) * 6;
    const path: Path = [];
    for (let i = 0; i < n; i++) {
      off = Math.max(-8, Math.min(8, off + (r() - 0.5) * 4));
      const d = Math.max(-10, Math.min(10, off + (r() - 0.5) * 4));
      const s = along + Math.sin(i / 20) * 20;
      if (r() < 0.05) {
        path.push(null);
        continue;
      }
      path.push([L.cx + L.ux * s + L.nx * d, L.cy + L.uy * s + L.ny * d]);
    }
    const params = { lines: [{ id: 'l', points: [L.A, L.B] }] };
    assert.deepEqual(count(params, [path], h), { l: { in: 0, out: 0 } }, `trajectory ${k}`);
    naive += naiveCount(params, path);
  }
  assert.ok(naive > 1000, `the same trajectories give the naive counter ${naive} crossings`);
});
