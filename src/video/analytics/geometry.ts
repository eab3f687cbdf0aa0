// Plane geometry the analytics step needs, in image coordinates (x right, y down). Pure functions over
// plain numbers: the per-frame loop calls them for every track and rule, so nothing here allocates.

export type Point = readonly [number, number];

/** (B-A) x (P-A): > 0 on one side of the line through A and B, < 0 on the other, 0 on it. */
export function cross(ax: number, ay: number, bx: number, by: number, px: number, py: number): number {
  return (bx - ax) * (py - ay) - (by - ay) * (px - ax);
}

/**
 * Where the step P->Q crosses the infinite line through A and B, as the parameter along AB (0 at A, 1 at B);
 * NaN when P and Q are on the same side or the step is parallel to the line.
 */
export function crossingParam(
  ax: number,
  ay: number,
  bx: number,
  by: number,
  px: number,
  py: number,
  qx: number,
  qy: number,
): number {
  const dp = cross(ax, ay, bx, by, px, py);
  const dq = cross(ax, ay, bx, by, qx, qy);
  if (dp === dq || (dp > 0 && dq > 0) || (dp < 0 && dq < 0)) return NaN;
  // The crossing point on PQ, then its projection on AB.
  const s = dp / (dp - dq);
  const cx = px + s * (qx - px);
  const cy = py + s * (qy - py);
  const dx = bx - ax,
    dy = by - ay;
  return ((cx - ax) * dx + (cy - ay) * dy) / (dx * dx + dy * dy);
}

/** Whether the closed segments AB and CD share a point (touching and collinear overlap included). */
export function segmentsIntersect(a: Point, b: Point, c: Point, d: Point): boolean {
  const d1 = cross(c[0], c[1], d[0], d[1], a[0], a[1]);
  const d2 = cross(c[0], c[1], d[0], d[1], b[0], b[1]);
  const d3 = cross(a[0], a[1], b[0], b[1], c[0], c[1]);
  const d4 = cross(a[0], a[1], b[0], b[1], d[0], d[1]);
  if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))) return true;
  const on = (p: Point, q: Point, r: Point) =>
    Math.min(p[0], q[0]) <= r[0] &&
    r[0] <= Math.max(p[0], q[0]) &&
    Math.min(p[1], q[1]) <= r[1] &&
    r[1] <= Math.max(p[1], q[1]);
  return (
    (d1 === 0 && on(c, d, a)) || (d2 === 0 && on(c, d, b)) || (d3 === 0 && on(a, b, c)) || (d4 === 0 && on(a, b, d))
  );
}

/** Even-odd point-in-polygon over a flat [x0, y0, x1, y1, ...] array; a point exactly on an edge may go either way. */
export function pointInPolygon(flat: ArrayLike<number>, px: number, py: number): boolean {
  let inside = false;
  const n = flat.length;
  for (let i = 0, j = n - 2; i < n; j = i, i += 2) {
    const yi = flat[i + 1],
      yj = flat[j + 1];
    if (yi > py !== yj > py) {
      const xi = flat[i],
        xj = flat[j];
      if (px < xi + ((py - yi) * (xj - xi)) / (yj - yi)) inside = !inside;
    }
  }
  return inside;
}

/** Distance from P to the closed segment AB. */
export function distanceToSegment(ax: number, ay: number, bx: number, by: number, px: number, py: number): number {
  const dx = bx - ax,
    dy = by - ay;
  const len2 = dx * dx + dy * dy;
  let t = len2 === 0 ? 0 : ((px - ax) * dx + (py - ay) * dy) / len2;
  t = t < 0 ? 0 : t > 1 ? 1 : t;
  const ex = ax + t * dx - px,
    ey = ay + t * dy - py;
  return Math.sqrt(ex * ex + ey * ey);
}

/** Distance from P to the polygon's boundary (flat array). */
export function distanceToBoundary(flat: ArrayLike<number>, px: number, py: number): number {
  let best = Infinity;
  const n = flat.length;
  for (let i = 0, j = n - 2; i < n; j = i, i += 2) {
    const d = distanceToSegment(flat[j], flat[j + 1], flat[i], flat[i + 1], px, py);
    if (d < best) best = d;
  }
  return best;
}

/** Twice the signed area (shoelace); 0 for a degenerate polygon. */
export function signedArea2(points: readonly Point[]): number {
  let s = 0;
  for (let i = 0, j = points.length - 1; i < points.length; j = i++)
    s += points[j][0] * points[i][1] - points[i][0] * points[j][1];
  return s;
}

/**
 * Why a polygon is not simple, or null when it is: a repeated vertex, zero area, or two edges that
 * meet anywhere but at their shared vertex. O(n^2) over at most 64 points, run once per rule change.
 */
export function polygonProblem(points: readonly Point[]): string | null {
  const n = points.length;
  for (let i = 0; i < n; i++) {
    const a = points[i],
      b = points[(i + 1) % n];
    if (a[0] === b[0] && a[1] === b[1]) return `points ${i} and ${(i + 1) % n} are the same point`;
  }
  if (Math.abs(signedArea2(points)) < 1e-12) return 'the polygon has no area (all points on one line)';
  for (let i = 0; i < n; i++) {
    const a = points[i],
      b = points[(i + 1) % n];
    for (let j = i + 1; j < n; j++) {
      const adjacent = j === i + 1 || (i === 0 && j === n - 1);
      const c = points[j],
        d = points[(j + 1) % n];
      if (adjacent) {
        // Neighbours share one vertex; they may not fold back over each other.
        const shared = j === i + 1 ? b : a;
        const other1 = j === i + 1 ? a : b;
        const other2 = j === i + 1 ? d : c;
        if (
          cross(shared[0], shared[1], other1[0], other1[1], other2[0], other2[1]) === 0 &&
          (other1[0] - shared[0]) * (other2[0] - shared[0]) + (other1[1] - shared[1]) * (other2[1] - shared[1]) > 0
        ) {
          return `edges ${i} and ${j} overlap`;
        }
        continue;
      }
      if (segmentsIntersect(a, b, c, d)) return `edges ${i} and ${j} cross (the polygon must not intersect itself)`;
    }
  }
  return null;
}

/** A 3x3 homography, row-major, mapping image points to ground points: [x', y', w'] = H [x, y, 1]. */
export type Homography = Float64Array;

/**
 * The homography taking four image points to four ground points (DLT with h33 = 1, solved by Gaussian
 * elimination with partial pivoting). null when three of either set are collinear (no unique solution).
 */
export function homography(src: readonly Point[], dst: readonly Point[]): Homography | null {
  const m: number[][] = [];
  for (let i = 0; i < 4; i++) {
    const [x, y] = src[i],
      [u, v] = dst[i];
    m.push([x, y, 1, 0, 0, 0, -u * x, -u * y, u]);
    m.push([0, 0, 0, x, y, 1, -v * x, -v * y, v]);
  }
  for (let col = 0; col < 8; col++) {
    let pivot = col;
    for (let r = col + 1; r < 8; r++) if (Math.abs(m[r][col]) > Math.abs(m[pivot][col])) pivot = r;
    if (Math.abs(m[pivot][col]) < 1e-10) return null;
    [m[col], m[pivot]] = [m[pivot], m[col]];
    for (let r = 0; r < 8; r++) {
      if (r === col) continue;
      const f = m[r][col] / m[col][col];
      if (f === 0) continue;
      for (let c = col; c < 9; c++) m[r][c] -= f * m[col][c];
    }
  }
  const h = new Float64Array(9);
  for (let i = 0; i < 8; i++) h[i] = m[i][8] / m[i][i];
  h[8] = 1;
  for (let i = 0; i < 4; i++) {
    for (let j = i + 1; j < 4; j++) {
      for (let k = j + 1; k < 4; k++) {
        const s = src,
          d = dst;
        if (cross(s[i][0], s[i][1], s[j][0], s[j][1], s[k][0], s[k][1]) === 0) return null;
        if (cross(d[i][0], d[i][1], d[j][0], d[j][1], d[k][0], d[k][1]) === 0) return null;
      }
    }
  }
  return h;
}

/** Applies H to (x, y); writes the ground point into out and returns false when it maps to infinity. */
export function project(h: Homography, x: number, y: number, out: [number, number]): boolean {
  const w = h[6] * x + h[7] * y + h[8];
  if (Math.abs(w) < 1e-12) return false;
  out[0] = (h[0] * x + h[1] * y + h[2]) / w;
  out[1] = (h[3] * x + h[4] * y + h[5]) / w;
  return true;
}
