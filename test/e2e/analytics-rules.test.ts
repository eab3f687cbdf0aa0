// The console's rule placing (console/src/analytics-rules.ts), without a browser: a line is two clicks (a
// second click on the first point waits for another), a zone closes on a click near its first corner or
// with closeZone (three corners at least), ids stay unique, the `in` arrow points where the server counts
// `in`, and rules in `relative` units go to pixels and back with their other fields kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  EMPTY_DRAWING,
  addPoint,
  closeZone,
  drawingOf,
  inNormal,
  removeRule,
  rulesOf,
  type Drawing,
} from '../../console/src/analytics-rules.js';

const space = { width: 640, height: 480 };
const clicks = (d: Drawing, ...ps: Array<[number, number]>) => ps.reduce((acc, p) => addPoint(acc, p, space), d);

test('lines take two clicks, zones close near their first corner or on demand; ids stay unique', () => {
  let d = clicks({ ...EMPTY_DRAWING, tool: 'line' }, [400.04, 0], [400.04, 0], [400, 480]);
  assert.deepEqual(d.lines, [
    {
      id: 'line1',
      points: [
        [400, 0],
        [400, 480],
      ],
    },
  ]);
  assert.deepEqual(d.draft, []);
  d = clicks({ ...d, tool: 'zone' }, [10, 10], [100, 10]);
  assert.equal(closeZone(d), d, 'two corners are no zone');
  d = clicks(d, [100, 100], [15, 12]);
  assert.deepEqual(
    d.zones.map((z) => [z.id, z.polygon.length]),
    [['zone1', 3]],
  );
  d = closeZone(clicks(d, [200, 200], [300, 200], [300, 300]));
  assert.deepEqual(
    d.zones.map((z) => z.id),
    ['zone1', 'zone2'],
  );
  d = clicks(removeRule({ ...d, tool: 'line' }, 'line1'), [1, 1], [2, 2]);
  d = clicks(d, [5, 5], [6, 6]);
  assert.deepEqual(
    d.lines.map((l) => l.id),
    ['line1', 'line2'],
  );
  const idle = { ...d, tool: null };
  assert.equal(addPoint(idle, [3, 3], space), idle, 'no tool, no change');
});

test('the in arrow points to the side the server counts as in; relative rules round-trip with their fields', () => {
  // A=(400,0), B=(400,480): `in` is right to left, so the arrow points left.
  assert.deepEqual(
    inNormal({
      id: 'door',
      points: [
        [400, 0],
        [400, 480],
      ],
    }),
    [-1, 0],
  );
  const rules = {
    units: 'relative' as const,
    anchor: 'center',
    lines: [
      {
        id: 'door',
        points: [
          [0.5, 0],
          [0.5, 1],
        ] as [[number, number], [number, number]],
        classes: ['person'],
      },
    ],
    zones: [],
  };
  const d = drawingOf(rules, space);
  assert.deepEqual(d.lines[0]!.points, [
    [320, 0],
    [320, 480],
  ]);
  const back = rulesOf(clicks({ ...d, tool: 'zone' }, [0, 0], [640, 0], [640, 480]), rules, space);
  assert.deepEqual(back.lines, rules.lines);
  assert.equal(back.anchor, 'center');
  assert.deepEqual(back.zones, []);
  const closed = rulesOf(closeZone(clicks({ ...d, tool: 'zone' }, [0, 0], [640, 0], [640, 480])), rules, space);
  assert.deepEqual(closed.zones, [
    {
      id: 'zone1',
      polygon: [
        [0, 0],
        [1, 0],
        [1, 1],
      ],
    },
  ]);
  assert.deepEqual(
    rulesOf(d, null, space).lines![0]!.points,
    [
      [320, 0],
      [320, 480],
    ],
    'pixels by default',
  );
});
