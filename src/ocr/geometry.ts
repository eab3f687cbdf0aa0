// Plane geometry for text boxes: convex hull, minimum-area rotated rectangle, corner order.
// Coordinates are continuous pixels (a pixel's centre is at +0.5).

export type Point = [number, number];

/** Andrew's monotone chain; returns the hull counter-clockwise (in y-down screen terms: clockwise). */
export function convexHull(points: Point[]): Point[] {
  const pts = points.slice().sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  if (pts.length < 3) return pts;
  const cross = (o: Point, a: Point, b: Point) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower: Point[] = [];
  for (const p of pts) {
    while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], p) <= 0) lower.pop();
    lower.push(p);
  }
  const upper: Point[] = [];
  for (let i = pts.length - 1; i >= 0; i--) {
    const p = pts[i];
    while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], p) <= 0) upper.pop();
    upper.push(p);
  }
  lower.pop();
  upper.pop();
  return lower.concat(upper);
}

export interface RotatedRect {
  center: Point;
  /** Along `angle`. */
  width: number;
  height: number;
  /** Radians of the width axis. */
  angle: number;
}

/** Minimum-area enclosing rectangle: one side of it lies on a hull edge (rotating calipers, O(n^2) is fine). */
export function minAreaRect(points: Point[]): RotatedRect {
  const hull = convexHull(points);
  if (hull.length === 0) return { center: [0, 0], width: 0, height: 0, angle: 0 };
  if (hull.length === 1) return { center: hull[0], width: 0, height: 0, angle: 0 };
  let best: RotatedRect | null = null;
  let bestArea = Infinity;
  for (let i = 0; i < hull.length; i++) {
    const a = hull[i];
    const b = hull[(i + 1) % hull.length];
    const len = Math.hypot(b[0] - a[0], b[1] - a[1]);
    if (len === 0) continue;
    const ux = (b[0] - a[0]) / len;
    const uy = (b[1] - a[1]) / len;
    let minU = Infinity,
      maxU = -Infinity,
      minV = Infinity,
      maxV = -Infinity;
    for (const p of hull) {
      const u = p[0] * ux + p[1] * uy;
      const v = -p[0] * uy + p[1] * ux;
      if (u < minU) minU = u;
      if (u > maxU) maxU = u;
      if (v < minV) minV = v;
      if (v > maxV) maxV = v;
    }
    const area = (maxU - minU) * (maxV - minV);
    if (area < bestArea) {
      bestArea = area;
      const cu = (minU + maxU) / 2;
      const cv = (minV + maxV) / 2;
      best = {
        center: [cu * ux - cv * uy, cu * uy + cv * ux],
        width: maxU - minU,
        height: maxV - minV,
        angle: Math.atan2(uy, ux),
      };
    }
  }
  return best ?? { center: hull[0], width: 0, height: 0, angle: 0 };
}

/** The four corners ordered top-left, top-right, bottom-right, bottom-left (as PP-OCR's get_mini_boxes). */
export function rectCorners(r: RotatedRect): Point[] {
  const c = Math.cos(r.angle),
    s = Math.sin(r.angle);
  const hw = r.width / 2,
    hh = r.height / 2;
  const pts: Point[] = [
    [r.center[0] - hw * c + hh * s, r.center[1] - hw * s - hh * c],
    [r.center[0] + hw * c + hh * s, r.center[1] + hw * s - hh * c],
    [r.center[0] + hw * c - hh * s, r.center[1] + hw * s + hh * c],
    [r.center[0] - hw * c - hh * s, r.center[1] - hw * s + hh * c],
  ];
  return orderCorners(pts);
}

/** Sort by x; of the two leftmost the upper is top-left, of the two rightmost the upper is top-right. */
export function orderCorners(pts: Point[]): Point[] {
  const s = pts.slice().sort((a, b) => a[0] - b[0]);
  const [l0, l1] = s[0][1] <= s[1][1] ? [s[0], s[1]] : [s[1], s[0]];
  const [r0, r1] = s[2][1] <= s[3][1] ? [s[2], s[3]] : [s[3], s[2]];
  return [l0, r0, r1, l1];
}

/** Axis-aligned [x1, y1, x2, y2] around some points. */
export function boundsOf(points: Point[]): [number, number, number, number] {
  let x1 = Infinity,
    y1 = Infinity,
    x2 = -Infinity,
    y2 = -Infinity;
  for (const [x, y] of points) {
    if (x < x1) x1 = x;
    if (y < y1) y1 = y;
    if (x > x2) x2 = x;
    if (y > y2) y2 = y;
  }
  return [x1, y1, x2, y2];
}

/** Inside test for a convex polygon given in either winding. */
export function insideConvex(poly: Point[], x: number, y: number): boolean {
  let sign = 0;
  for (let i = 0; i < poly.length; i++) {
    const a = poly[i];
    const b = poly[(i + 1) % poly.length];
    const cr = (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]);
    if (cr === 0) continue;
    const sg = cr > 0 ? 1 : -1;
    if (sign === 0) sign = sg;
    else if (sg !== sign) return false;
  }
  return true;
}
