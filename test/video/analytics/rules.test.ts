// Every bad analytics parameter is the catalogue's 400 with `param` naming the rule, as the step's
// parameters would be named in a task request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../../src/base/errors.js';
import { parseAnalytics } from '../../../src/video/analytics/rules.js';

const P = 'steps[1].parameters';
const line = (
  id: string,
  points: unknown = [
    [0, 0],
    [10, 10],
  ],
) => ({ id, points });
const square = [
  [0, 0],
  [100, 0],
  [100, 100],
  [0, 100],
];

function bad(params: unknown, param: string, message?: RegExp, labels?: string[]): void {
  assert.throws(
    () => parseAnalytics(params, P, labels),
    (e: unknown) => {
      assert.ok(e instanceof ApiError, String(e));
      assert.equal(e.status, 400);
      assert.equal(e.param, param, `${e.message}`);
      if (message) assert.match(e.message, message);
      return true;
    },
  );
}

test('good parameters pass and keep their values', () => {
  const p = parseAnalytics(
    {
      lines: [line('door')],
      zones: [{ id: 'z', polygon: square, dwell_ms: 5000 }],
      anchor: 'center',
      interval_ms: 5000,
    },
    P,
    ['person', 'car'],
  );
  assert.equal(p.lines![0].id, 'door');
  assert.equal(p.zones![0].dwell_ms, 5000);
});

test('geometry 400s name the rule', () => {
  bad(
    {
      lines: [
        line('a'),
        line('b', [
          [5, 5],
          [5, 5],
        ]),
      ],
    },
    `${P}.lines[1].points`,
    /zero-length/,
  );
  bad({ lines: [line('a', [[0, 0]])] }, `${P}.lines[0].points`);
  bad(
    {
      lines: [
        line('a', [
          [0, 0],
          [1, 1],
          [2, 2],
        ]),
      ],
    },
    `${P}.lines[0].points`,
  );
  bad(
    {
      lines: [
        line('a', [
          [0, 0],
          [1, 'x'],
        ]),
      ],
    },
    `${P}.lines[0].points[1][1]`,
  );
  bad(
    {
      lines: [
        line('a', [
          [0, 0],
          [1, Infinity],
        ]),
      ],
    },
    `${P}.lines[0].points[1][1]`,
  );
  bad(
    {
      zones: [
        {
          id: 'z',
          polygon: [
            [0, 0],
            [10, 10],
            [10, 0],
            [0, 20],
          ],
        },
      ],
    },
    `${P}.zones[0].polygon`,
    /simple polygon/,
  );
  bad(
    {
      zones: [
        {
          id: 'z',
          polygon: [
            [0, 0],
            [5, 5],
            [10, 10],
          ],
        },
      ],
    },
    `${P}.zones[0].polygon`,
    /no area/,
  );
  bad(
    {
      zones: [
        {
          id: 'z',
          polygon: [
            [0, 0],
            [10, 0],
          ],
        },
      ],
    },
    `${P}.zones[0].polygon`,
    /3 to 64/,
  );
  bad(
    { zones: [{ id: 'z', polygon: Array.from({ length: 65 }, (_, i) => [Math.cos(i / 10), Math.sin(i / 10)]) }] },
    `${P}.zones[0].polygon`,
    /3 to 64/,
  );
  bad(
    {
      zones: [
        {
          id: 'z',
          polygon: [
            [0, 0],
            [10, 0],
            [10, 0],
            [0, 10],
          ],
        },
      ],
    },
    `${P}.zones[0].polygon`,
    /same point/,
  );
  bad(
    {
      units: 'relative',
      lines: [
        line('a', [
          [0, 0],
          [1.2, 0.5],
        ]),
      ],
    },
    `${P}.lines[0].points[1]`,
    /between 0 and 1/,
  );
  bad(
    {
      units: 'relative',
      zones: [
        {
          id: 'z',
          polygon: [
            [0, 0],
            [1, 0],
            [0.5, -0.1],
          ],
        },
      ],
    },
    `${P}.zones[0].polygon[2]`,
    /between 0 and 1/,
  );
  bad(
    {
      speed: {
        image: [
          [0, 0],
          [1, 1],
          [2, 2],
          [0, 5],
        ],
        ground: [
          [0, 0],
          [1, 0],
          [1, 1],
          [0, 1],
        ],
      },
      lines: [line('a')],
    },
    `${P}.speed`,
    /homography/,
  );
  bad(
    {
      speed: {
        image: [
          [0, 0],
          [1, 1],
          [2, 2],
        ],
        ground: [
          [0, 0],
          [1, 0],
          [1, 1],
          [0, 1],
        ],
      },
      lines: [line('a')],
    },
    `${P}.speed.image`,
  );
});

test('ids, classes, limits and unknown fields', () => {
  bad({ lines: [line('a')], zones: [{ id: 'a', polygon: square }] }, `${P}.zones[0].id`, /Duplicate/);
  bad({ lines: [line('a'), line('a')] }, `${P}.lines[1].id`, /Duplicate/);
  bad({ lines: [line('has space')] }, `${P}.lines[0].id`);
  bad({ lines: [{ ...line('a'), classes: ['person', 'unicorn'] }] }, `${P}.lines[0].classes[1]`, /unicorn/, [
    'person',
    'car',
  ]);
  bad({ zones: [{ id: 'z', polygon: square, classes: ['dragon'] }] }, `${P}.zones[0].classes[0]`, /dragon/, ['person']);
  bad({ lines: Array.from({ length: 65 }, (_, i) => line(`l${i}`)) }, `${P}.lines`, /at most 64/);
  bad({ zones: Array.from({ length: 65 }, (_, i) => ({ id: `z${i}`, polygon: square })) }, `${P}.zones`, /at most 64/);
  bad({}, `${P}.lines`, /at least one line or zone/);
  bad({ lines: [line('a')], colour: 'red' }, `${P}.colour`, /Unknown field/);
  bad({ lines: [{ ...line('a'), margin: 3 }] }, `${P}.lines[0].margin`, /Unknown field/);
  bad({ lines: [line('a')], anchor: 'feet' }, `${P}.anchor`);
  bad({ lines: [line('a')], units: 'inches' }, `${P}.units`);
  bad({ lines: [line('a')], interval_ms: 10 }, `${P}.interval_ms`);
  bad({ lines: [{ ...line('a'), min_samples: 0 }] }, `${P}.lines[0].min_samples`);
  bad({ zones: [{ id: 'z', polygon: square, max_occupancy: -1 }] }, `${P}.zones[0].max_occupancy`);
  bad('lines', P);
});

test('the crowd settings: margin_max_px on lines and the step, join_samples on the step; each checked', () => {
  const p = parseAnalytics({ lines: [{ ...line('door'), margin_max_px: 20 }], margin_max_px: 8, join_samples: 0 }, P);
  assert.equal(p.lines![0].margin_max_px, 20);
  assert.equal(p.join_samples, 0);
  bad({ lines: [{ ...line('door'), margin_max_px: -1 }] }, `${P}.lines[0].margin_max_px`, /between 0 and 10000/);
  bad({ lines: [line('door')], join_samples: 1.5 }, `${P}.join_samples`, /integer between 0 and 1000/);
  // Zones have no cap (a capped band let box jitter step in and out of zones).
  bad({ zones: [{ id: 'z', polygon: square, margin_max_px: 10 }] }, `${P}.zones[0].margin_max_px`, /Unknown field/);
});
