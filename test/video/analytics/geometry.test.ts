// Geometry of the analytics step: side of a line, crossing parameter, point in polygon edge cases, the
// simple-polygon check and the four-point homography.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cross,
  crossingParam,
  distanceToBoundary,
  homography,
  pointInPolygon,
  polygonProblem,
  project,
  segmentsIntersect,
  type Point,
} from '../../../src/video/analytics/geometry.js';

const flat = (pts: Point[]) => pts.flat();

test('the side convention: A=(400,0) B=(400,480): right of the line is < 0, left is > 0', () => {
  assert.ok(cross(400, 0, 400, 480, 500, 100) < 0);
  assert.ok(cross(400, 0, 400, 480, 300, 100) > 0);
  assert.equal(cross(400, 0, 400, 480, 400, 100), 0);
});

test('crossingParam: where a step crosses the line, NaN when it does not', () => {
  assert.equal(crossingParam(400, 0, 400, 480, 500, 240, 300, 240), 0.5);
  assert.equal(crossingParam(400, 0, 400, 480, 500, 0, 300, 0), 0);
  assert.ok(crossingParam(400, 0, 400, 480, 500, 600, 300, 600) > 1, 'below B: outside the segment');
  assert.ok(Number.isNaN(crossingParam(400, 0, 400, 480, 500, 240, 450, 240)));
  assert.ok(Number.isNaN(crossingParam(400, 0, 400, 480, 500, 240, 500, 240)));
});

test('point in polygon: square, concave, holes of the even-odd rule, far points', () => {
  const sq = flat([
    [0, 0],
    [10, 0],
    [10, 10],
    [0, 10],
  ]);
  assert.equal(pointInPolygon(sq, 5, 5), true);
  assert.equal(pointInPolygon(sq, 15, 5), false);
  assert.equal(pointInPolygon(sq, -0.001, 5), false);
  assert.equal(pointInPolygon(sq, 5, 1e9), false);
  // A U shape: the notch is outside.
  const u = flat([
    [0, 0],
    [3, 0],
    [3, 7],
    [7, 7],
    [7, 0],
    [10, 0],
    [10, 10],
    [0, 10],
  ]);
  assert.equal(pointInPolygon(u, 5, 3), false);
  assert.equal(pointInPolygon(u, 5, 8), true);
  assert.equal(pointInPolygon(u, 1, 1), true);
  // A ray through a vertex counts the crossing once.
  const diamond = flat([
    [5, 0],
    [10, 5],
    [5, 10],
    [0, 5],
  ]);
  assert.equal(pointInPolygon(diamond, 5, 5), true);
  assert.equal(pointInPolygon(diamond, 1, 5), true);
  assert.equal(pointInPolygon(diamond, -1, 5), false);
  assert.equal(pointInPolygon(diamond, 9, 1), false);
});

test('distance to the boundary', () => {
  const sq = flat([
    [0, 0],
    [10, 0],
    [10, 10],
    [0, 10],
  ]);
  assert.equal(distanceToBoundary(sq, 5, 5), 5);
  assert.equal(distanceToBoundary(sq, 13, 14), 5);
});

test('segments: crossing, touching, collinear overlap, disjoint', () => {
  assert.equal(segmentsIntersect([0, 0], [10, 10], [0, 10], [10, 0]), true);
  assert.equal(segmentsIntersect([0, 0], [10, 0], [10, 0], [20, 5]), true);
  assert.equal(segmentsIntersect([0, 0], [10, 0], [5, 0], [20, 0]), true);
  assert.equal(segmentsIntersect([0, 0], [10, 0], [11, 0], [20, 0]), false);
  assert.equal(segmentsIntersect([0, 0], [10, 0], [0, 1], [10, 1]), false);
});

test('simple polygons pass; bow-ties, repeats, no-area and folded polygons do not', () => {
  assert.equal(
    polygonProblem([
      [0, 0],
      [10, 0],
      [5, 8],
    ]),
    null,
  );
  assert.equal(
    polygonProblem([
      [0, 0],
      [3, 0],
      [3, 7],
      [7, 7],
      [7, 0],
      [10, 0],
      [10, 10],
      [0, 10],
    ]),
    null,
  );
  assert.ok(
    polygonProblem([
      [0, 0],
      [10, 10],
      [10, 0],
      [0, 10],
    ]),
    'a symmetric bow-tie (zero signed area)',
  );
  assert.match(
    polygonProblem([
      [0, 0],
      [10, 10],
      [10, 0],
      [0, 20],
    ])!,
    /cross/,
  );
  assert.match(
    polygonProblem([
      [0, 0],
      [10, 0],
      [10, 0],
      [0, 10],
    ])!,
    /same point/,
  );
  assert.match(
    polygonProblem([
      [0, 0],
      [5, 5],
      [10, 10],
    ])!,
    /no area/,
  );
  assert.match(
    polygonProblem([
      [0, 0],
      [10, 0],
      [5, 0],
      [5, 5],
    ])!,
    /overlap|cross/,
  );
  // Touching itself at a vertex is not simple either.
  assert.ok(
    polygonProblem([
      [0, 0],
      [10, 0],
      [5, 5],
      [10, 10],
      [0, 10],
      [5, 5],
    ]),
  );
});

test('homography: maps the four points exactly and straight lines stay straight', () => {
  const src: Point[] = [
    [100, 400],
    [540, 400],
    [420, 200],
    [220, 200],
  ];
  const dst: Point[] = [
    [0, 0],
    [10, 0],
    [10, 30],
    [0, 30],
  ];
  const h = homography(src, dst)!;
  const out: [number, number] = [0, 0];
  src.forEach((p, i) => {
    project(h, p[0], p[1], out);
    assert.ok(Math.abs(out[0] - dst[i][0]) < 1e-9 && Math.abs(out[1] - dst[i][1]) < 1e-9, `point ${i}: ${out}`);
  });
  project(h, 320, 400, out);
  assert.ok(Math.abs(out[0] - 5) < 1e-9 && Math.abs(out[1]) < 1e-9);
  assert.equal(
    homography(
      [
        [0, 0],
        [1, 1],
        [2, 2],
        [0, 5],
      ],
      dst,
    ),
    null,
    'three collinear image points',
  );
});
