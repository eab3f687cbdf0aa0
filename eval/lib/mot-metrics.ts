// Multi-object tracking metrics as the MOTChallenge devkit computes them, reused by every tracking evaluation
// (and by the tracker's tests and the track bench; the service never imports it):
// CLEAR MOT (MOTA, MOTP, ID switches, FP, FN) with per-frame matching that keeps the previous frame's pairs,
// and IDF1 from one global bipartite matching of ground-truth ids to hypothesis ids.

/** One MOTChallenge row: frame,id,x,y,w,h,conf[,class,visibility]; frames are 1-based. */
export interface MotRow {
  frame: number;
  id: number;
  x: number;
  y: number;
  w: number;
  h: number;
  conf: number;
  /** MOT16/17 class column; null for MOT15 files, whose columns 8-10 are world coordinates. */
  cls: number | null;
  visibility: number | null;
}

/**
 * Parses a MOTChallenge gt.txt / result file. `format: 'auto'` treats 9-column rows as MOT16/17 (with class
 * and visibility) and anything else as MOT15 (no class). Blank lines are skipped; malformed lines throw.
 */
export function parseMotFile(text: string, format: 'auto' | 'mot15' | 'mot17' = 'auto'): MotRow[] {
  const rows: MotRow[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    const f = line.split(/[,\s]+/).map(Number);
    if (f.length < 6 || f.slice(0, 6).some((v) => !Number.isFinite(v))) {
      throw new Error(
        `MOT file line ${i + 1}: expected frame,id,x,y,w,h,... but received ${JSON.stringify(line.slice(0, 80))}`,
      );
    }
    const withClass = format === 'mot17' || (format === 'auto' && f.length === 9);
    rows.push({
      frame: f[0],
      id: f[1],
      x: f[2],
      y: f[3],
      w: f[4],
      h: f[5],
      conf: f.length > 6 && Number.isFinite(f[6]) ? f[6] : 1,
      cls: withClass && f.length > 7 ? f[7] : null,
      visibility: withClass && f.length > 8 ? f[8] : null,
    });
  }
  return rows;
}

/** MOT16/17 classes: 1 pedestrian is evaluated; these are distractors whose matched hypotheses are dropped. */
export const PEDESTRIAN_CLASS = 1;
export const DISTRACTOR_CLASSES: ReadonlySet<number> = new Set([2, 7, 8, 12]); // person on vehicle, static person, distractor, reflection

/** Ground-truth rows that count as targets, as the devkit: conf != 0 and, when classes exist, pedestrians. */
export function evaluatedTargets(gt: MotRow[]): MotRow[] {
  return gt.filter((r) => r.conf !== 0 && (r.cls === null || r.cls === PEDESTRIAN_CLASS));
}

export interface MotMetrics {
  mota: number;
  /** Mean IoU of matched pairs (the devkit's MOTP; py-motmetrics reports 1 - this). */
  motp: number;
  idSwitches: number;
  fp: number;
  fn: number;
  matches: number;
  gtCount: number;
  hypCount: number;
  frames: number;
  idf1: number;
  idp: number;
  idr: number;
  idtp: number;
  gtIds: number;
  hypIds: number;
}

function iou(a: MotRow, b: MotRow): number {
  const iw = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  if (iw <= 0) return 0;
  const ih = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  if (ih <= 0) return 0;
  const inter = iw * ih;
  return inter / (a.w * a.h + b.w * b.h - inter);
}

const INVALID = 1e9;

/**
 * Minimum-cost assignment of a rows x cols cost matrix (row-major), every row of the smaller side assigned
 * (shortest augmenting paths with potentials, O(n^2 m)). Returns [row, col] pairs. Entries >= 1e9 mean
 * "not allowed": with them the optimum first maximises the number of allowed pairs, then minimises cost;
 * callers drop the disallowed pairs that the complete assignment had to use.
 */
export function linearAssignment(cost: ArrayLike<number>, rows: number, cols: number): Array<[number, number]> {
  if (rows === 0 || cols === 0) return [];
  const transpose = rows > cols;
  const n = transpose ? cols : rows;
  const m = transpose ? rows : cols;
  const at = (i: number, j: number) => (transpose ? cost[j * cols + i] : cost[i * cols + j]);
  const u = new Float64Array(n + 1);
  const v = new Float64Array(m + 1);
  const p = new Int32Array(m + 1);
  const way = new Int32Array(m + 1);
  const minv = new Float64Array(m + 1);
  const used = new Uint8Array(m + 1);
  for (let i = 1; i <= n; i++) {
    p[0] = i;
    let j0 = 0;
    minv.fill(Infinity);
    used.fill(0);
    do {
      used[j0] = 1;
      const i0 = p[j0];
      let delta = Infinity;
      let j1 = 0;
      for (let j = 1; j <= m; j++) {
        if (used[j]) continue;
        const cur = at(i0 - 1, j - 1) - u[i0] - v[j];
        if (cur < minv[j]) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (let j = 0; j <= m; j++) {
        if (used[j]) {
          u[p[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (p[j0] !== 0);
    do {
      const j1 = way[j0];
      p[j0] = p[j1];
      j0 = j1;
    } while (j0 !== 0);
  }
  const out: Array<[number, number]> = [];
  for (let j = 1; j <= m; j++) {
    if (p[j] === 0) continue;
    out.push(transpose ? [j - 1, p[j] - 1] : [p[j] - 1, j - 1]);
  }
  return out;
}

function byFrame(rows: MotRow[]): Map<number, MotRow[]> {
  const m = new Map<number, MotRow[]>();
  for (const r of rows) {
    let list = m.get(r.frame);
    if (!list) m.set(r.frame, (list = []));
    list.push(r);
  }
  return m;
}

/** Pairs of (gt index, hyp index) with IoU >= threshold maximising the number of pairs, then total IoU. */
function matchFrame(gt: MotRow[], hyp: MotRow[], threshold: number): Array<[number, number]> {
  const cost = new Float64Array(gt.length * hyp.length);
  for (let i = 0; i < gt.length; i++) {
    for (let j = 0; j < hyp.length; j++) {
      const o = iou(gt[i], hyp[j]);
      cost[i * hyp.length + j] = o >= threshold ? 1 - o : INVALID;
    }
  }
  return linearAssignment(cost, gt.length, hyp.length).filter(([i, j]) => cost[i * hyp.length + j] < INVALID);
}

/**
 * Drops hypotheses that match (IoU >= threshold) a ground-truth box the devkit does not score: distractor
 * classes of MOT16/17. Other unscored rows (conf 0) are simply not targets.
 */
export function removeDistractorMatches(gt: MotRow[], hyp: MotRow[], threshold = 0.5): MotRow[] {
  if (!gt.some((r) => r.cls !== null && DISTRACTOR_CLASSES.has(r.cls))) return hyp;
  const gtFrames = byFrame(gt.filter((r) => r.conf !== 0 || (r.cls !== null && DISTRACTOR_CLASSES.has(r.cls))));
  const keep: MotRow[] = [];
  for (const [frame, hs] of byFrame(hyp)) {
    const gs = gtFrames.get(frame) ?? [];
    const drop = new Set<number>();
    for (const [i, j] of matchFrame(gs, hs, threshold)) {
      const c = gs[i].cls;
      if (c !== null && DISTRACTOR_CLASSES.has(c)) drop.add(j);
    }
    hs.forEach((h, j) => {
      if (!drop.has(j)) keep.push(h);
    });
  }
  return keep;
}

/**
 * CLEAR MOT and identity metrics of hypotheses against ground truth (both MOT rows; pass the raw gt file
 * rows: targets and distractors are selected here as the devkit does). IoU >= `iouThreshold` is a match.
 */
export function evaluateMot(gtRows: MotRow[], hypRows: MotRow[], iouThreshold = 0.5): MotMetrics {
  const targets = evaluatedTargets(gtRows);
  const hyps = removeDistractorMatches(gtRows, hypRows, iouThreshold);
  const gtFrames = byFrame(targets);
  const hypFrames = byFrame(hyps);
  const frames = [...new Set([...gtFrames.keys(), ...hypFrames.keys()])].sort((a, b) => a - b);

  let fp = 0,
    fn = 0,
    idSwitches = 0,
    matches = 0,
    iouSum = 0;
  const lastMatch = new Map<number, number>(); // gt id -> hyp id it was last matched to (kept across gaps)
  // For IDF1: frames where gt id g and hyp id h overlap enough.
  const pairCounts = new Map<number, Map<number, number>>();
  const gtIdCount = new Map<number, number>();
  const hypIdCount = new Map<number, number>();

  for (const frame of frames) {
    const gs = gtFrames.get(frame) ?? [];
    const hs = hypFrames.get(frame) ?? [];
    for (const g of gs) gtIdCount.set(g.id, (gtIdCount.get(g.id) ?? 0) + 1);
    for (const h of hs) hypIdCount.set(h.id, (hypIdCount.get(h.id) ?? 0) + 1);
    for (const g of gs) {
      for (const h of hs) {
        if (iou(g, h) < iouThreshold) continue;
        let row = pairCounts.get(g.id);
        if (!row) pairCounts.set(g.id, (row = new Map()));
        row.set(h.id, (row.get(h.id) ?? 0) + 1);
      }
    }

    const gtUsed = new Uint8Array(gs.length);
    const hypUsed = new Uint8Array(hs.length);
    const hypIndex = new Map<number, number>();
    hs.forEach((h, j) => hypIndex.set(h.id, j));
    // 1) Keep last frame's correspondences that are still valid (devkit rule: no re-matching of a kept pair).
    gs.forEach((g, i) => {
      const hid = lastMatch.get(g.id);
      if (hid === undefined) return;
      const j = hypIndex.get(hid);
      if (j === undefined || hypUsed[j]) return;
      const o = iou(g, hs[j]);
      if (o < iouThreshold) return;
      gtUsed[i] = 1;
      hypUsed[j] = 1;
      matches++;
      iouSum += o;
    });
    // 2) Optimal matching of the rest; a gt matched to another hypothesis than its last one is a switch.
    const gi: number[] = [],
      hj: number[] = [];
    gs.forEach((_, i) => {
      if (!gtUsed[i]) gi.push(i);
    });
    hs.forEach((_, j) => {
      if (!hypUsed[j]) hj.push(j);
    });
    for (const [a, b] of matchFrame(
      gi.map((i) => gs[i]),
      hj.map((j) => hs[j]),
      iouThreshold,
    )) {
      const g = gs[gi[a]],
        h = hs[hj[b]];
      gtUsed[gi[a]] = 1;
      hypUsed[hj[b]] = 1;
      const prev = lastMatch.get(g.id);
      if (prev !== undefined && prev !== h.id) idSwitches++;
      lastMatch.set(g.id, h.id);
      matches++;
      iouSum += iou(g, h);
    }
    for (const u of gtUsed) if (!u) fn++;
    for (const u of hypUsed) if (!u) fp++;
  }

  // IDF1: one global assignment of gt ids to hyp ids maximising the frames they agree on (IDTP).
  const gtIds = [...gtIdCount.keys()];
  const hypIds = [...hypIdCount.keys()];
  const hypCol = new Map(hypIds.map((h, j) => [h, j] as const));
  const cost = new Float64Array(gtIds.length * hypIds.length);
  gtIds.forEach((g, i) => {
    for (const [h, c] of pairCounts.get(g) ?? []) cost[i * hypIds.length + (hypCol.get(h) as number)] = -c;
  });
  let idtp = 0;
  for (const [i, j] of linearAssignment(cost, gtIds.length, hypIds.length)) idtp -= cost[i * hypIds.length + j];

  const gtCount = targets.length;
  const hypCount = hyps.length;
  return {
    mota: gtCount === 0 ? 0 : 1 - (fn + fp + idSwitches) / gtCount,
    motp: matches === 0 ? 0 : iouSum / matches,
    idSwitches,
    fp,
    fn,
    matches,
    gtCount,
    hypCount,
    frames: frames.length,
    idf1: gtCount + hypCount === 0 ? 0 : (2 * idtp) / (gtCount + hypCount),
    idp: hypCount === 0 ? 0 : idtp / hypCount,
    idr: gtCount === 0 ? 0 : idtp / gtCount,
    idtp,
    gtIds: gtIds.length,
    hypIds: hypIds.length,
  };
}
