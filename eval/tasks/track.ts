// `npm run eval -- track --detections gt [--quick] [--json]`: MOTA, IDF1 and ID switches of our tracker on every
// SIGHTFLOW_EVAL_DIR/tracking/* sequence with a gt/gt.txt. With `--detections gt` the ground-truth boxes
// (rows the devkit scores) are the detections, so the numbers measure association alone; `--detections noisy`
// degrades them like a detector would (jitter, misses, false positives).
// The vtest_PETS09-S2L1_full folder has no gt/ of its own (its gt is PETS09-S2L1's scaled by 0.625), so it
// is not a separate sequence here: it would repeat PETS09-S2L1 exactly.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { evalDir, skipWithoutEvalData } from '../dir.js';
import { evaluateMot, evaluatedTargets, parseMotFile, type MotMetrics, type MotRow } from '../lib/mot-metrics.js';
import { Tracker, type TrackerOptions } from '../../src/native/track.js';

/** The tracker settings this evaluation (and the acceptance test) uses: every detection gets an id. */
export const EVAL_TRACKER: TrackerOptions = { maxAge: 30, minHits: 3, iouThreshold: 0.3, report: 'all' };

/**
 * Detector-like degradation of ground truth, deterministic: boxes jittered by up to 5% of their size,
 * 10% of them missed, and one false positive every fourth frame.
 */
export function noisyDetections(rows: MotRow[], seed = 1): MotRow[] {
  let s = seed;
  const rand = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const out: MotRow[] = [];
  let lastFrame = 0;
  for (const r of rows) {
    if (r.frame !== lastFrame && r.frame % 4 === 0) {
      out.push({ ...r, id: -1, x: rand() * 600, y: rand() * 400, w: 30 + rand() * 30, h: 80 + rand() * 60 });
    }
    lastFrame = r.frame;
    if (rand() < 0.1) continue;
    const j = (v: number) => (rand() - 0.5) * 0.1 * v;
    out.push({ ...r, x: r.x + j(r.w), y: r.y + j(r.h), w: r.w + j(r.w), h: r.h + j(r.h) });
  }
  return out;
}

/** Runs the tracker over ground-truth boxes fed as detections, frame by frame, and scores the result. */
export function trackGroundTruth(
  gt: MotRow[],
  opts: TrackerOptions = EVAL_TRACKER,
  maxFrames = Infinity,
  noisy = false,
): MotMetrics {
  const targets = evaluatedTargets(gt).filter((r) => r.frame <= maxFrames);
  const dets = noisy ? noisyDetections(targets) : targets;
  const gtRows = gt.filter((r) => r.frame <= maxFrames);
  const byFrame = new Map<number, MotRow[]>();
  let last = 0;
  for (const r of dets) {
    let list = byFrame.get(r.frame);
    if (!list) byFrame.set(r.frame, (list = []));
    list.push(r);
    last = Math.max(last, r.frame);
  }
  const tracker = new Tracker(opts);
  const hyp: MotRow[] = [];
  // Every frame, also empty ones: the tracker ages tracks per update() call.
  for (let frame = 1; frame <= last; frame++) {
    const rows = byFrame.get(frame) ?? [];
    const out = tracker.update(rows.map((r) => ({ box: [r.x, r.y, r.x + r.w, r.y + r.h], score: 1 })));
    for (const t of out) hyp.push({ ...rows[t.index], id: t.trackId, conf: 1, cls: null, visibility: null });
  }
  return evaluateMot(gtRows, hyp);
}

/** Sequence folders under tracking/ that have ground truth. */
export function trackingSequences(root: string): Array<{ name: string; gtPath: string }> {
  return readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(root, d.name, 'gt', 'gt.txt')))
    .map((d) => ({ name: d.name, gtPath: join(root, d.name, 'gt', 'gt.txt') }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export async function run({ quick, json, args }: { quick: boolean; json: boolean; args: string[] }): Promise<void> {
  const i = args.indexOf('--detections');
  const source = i >= 0 ? args[i + 1] : 'gt';
  if (source !== 'gt' && source !== 'noisy') {
    console.error(
      `--detections ${source}: expected "gt" (ground-truth boxes as detections) or "noisy" (gt jittered, 10% missed, false positives)`,
    );
    process.exit(2);
  }
  if (skipWithoutEvalData({ json }, 'tracking')) return;
  const root = evalDir('tracking');
  const sequences: Record<string, { mota: number; idf1: number; id_switches: number }> = {};
  const withGt = new Set(trackingSequences(root).map((s) => s.name));
  for (const d of readdirSync(root, { withFileTypes: true })) {
    if (d.isDirectory() && !withGt.has(d.name)) console.log(`${d.name}: no gt/gt.txt, skipped`);
  }
  for (const { name, gtPath } of trackingSequences(root)) {
    const gt = parseMotFile(readFileSync(gtPath, 'utf8'));
    const started = performance.now();
    const m = trackGroundTruth(gt, EVAL_TRACKER, quick ? 150 : Infinity, source === 'noisy');
    const ms = performance.now() - started;
    sequences[name] = { mota: round(m.mota), idf1: round(m.idf1), id_switches: m.idSwitches };
    console.log(
      `${name.padEnd(16)} frames ${String(m.frames).padStart(4)}  gt ${String(m.gtCount).padStart(5)}  MOTA ${m.mota.toFixed(4)}  ` +
        `IDF1 ${m.idf1.toFixed(4)}  IDsw ${m.idSwitches}  FP ${m.fp}  FN ${m.fn}  MOTP ${m.motp.toFixed(3)}  ids gt/hyp ${m.gtIds}/${m.hypIds}  (${ms.toFixed(0)} ms)`,
    );
  }
  const vals = Object.values(sequences);
  const mean = {
    mota: round(vals.reduce((s, v) => s + v.mota, 0) / Math.max(1, vals.length)),
    idf1: round(vals.reduce((s, v) => s + v.idf1, 0) / Math.max(1, vals.length)),
  };
  console.log(
    `mean             MOTA ${mean.mota.toFixed(4)}  IDF1 ${mean.idf1.toFixed(4)}${quick ? '  (quick: first 150 frames)' : ''}`,
  );
  if (json) console.log(JSON.stringify({ task: 'track', sequences, mean }));
}

function round(v: number): number {
  return Math.round(v * 10000) / 10000;
}
