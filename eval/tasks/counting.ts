// `npm run eval -- counting [--quick] [--json]`: line and zone counts (the analytics step) on the tracking
// sequences of SIGHTFLOW_EVAL_DIR/tracking, against the counts the same rules give on the ground-truth tracks.
//  - truth: the analytics engine run over gt/gt.txt (every annotated person, every frame), the rules below.
//  - sightflow: the task API with detect (person, confidence 0.4, as `video-track`) + tracking on every
//    frame and an analytics step with these rules; the counts are the task's results. The eval checks
//    that they equal the engine run over the streamed tracks (the recount guarantee).
//  - naive: the same tracks counted as public counters do with default settings: every change of side
//    (through the segment) counts, every step into or out of a zone counts (no band, one sample).
// Error per rule: |in - truth in| + |out - truth out| for a line, |entered - truth| + |exited - truth| for a
// zone. sightflow must have a lower total error than naive on every sequence (exit 1 otherwise).
// Sequences and their gt as in eval/tasks/video-track.ts. `--quick`: the first 40 frames of TUD-Campus.
import { execFile } from 'node:child_process';
import { isDeepStrictEqual, promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evalDir, skipWithoutEvalData } from '../dir.js';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { parseMotFile } from '../lib/mot-metrics.js';
import { apiRunner, probeWidth, seqInfo, sequences } from './video-track.js';
import { AnalyticsEngine, type AnalyticsFrame, type AnalyticsSummary } from '../../src/video/analytics/engine.js';
import { parseAnalytics } from '../../src/video/analytics/rules.js';
import type { VideoTaskRequest } from '../../src/video/task-contract.js';

/** Relative rules over the whole view: people walk across all of these in PETS09-S2L1 and TUD-Campus. */
export const RULES = {
  units: 'relative',
  lines: [
    { id: 'v_mid', points: [[0.5, 0.2], [0.5, 1]] },
    { id: 'v_left', points: [[0.3, 0.3], [0.3, 1]] },
    { id: 'v_right', points: [[0.7, 0.3], [0.7, 1]] },
    { id: 'h_mid', points: [[0, 0.65], [1, 0.65]] },
    { id: 'diagonal', points: [[0.15, 0.35], [0.85, 0.95]] },
  ],
  zones: [
    { id: 'centre', polygon: [[0.35, 0.45], [0.65, 0.45], [0.65, 0.8], [0.35, 0.8]] },
    { id: 'left', polygon: [[0, 0.3], [0.3, 0.3], [0.3, 1], [0, 1]] },
    { id: 'right', polygon: [[0.7, 0.4], [1, 0.4], [1, 1]] },
  ],
};

/** --quick: the first frames of TUD-Campus (CI runs it). */
const QUICK_FRAMES = 40;

/** The naive counter: the same rules with no band and one sample. */
const NAIVE = { ...RULES, min_samples: 1, margin_px: 0, margin_box: 0 };

function count(params: unknown, frames: AnalyticsFrame[]): AnalyticsSummary {
  const engine = new AnalyticsEngine(parseAnalytics(params, 'parameters'));
  for (const f of frames) engine.process(f);
  engine.finish();
  return engine.summary();
}

async function size(video: string): Promise<{ width: number; height: number }> {
  const { stdout } = await promisify(execFile)('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height', '-of', 'csv=p=0', video]);
  const [width, height] = stdout.trim().split(',').map(Number);
  return { width, height };
}

type Counts = Record<string, [number, number]>;
const counts = (s: AnalyticsSummary): Counts => ({
  ...Object.fromEntries(Object.entries(s.lines).map(([id, l]) => [id, [l.in, l.out]])),
  ...Object.fromEntries(Object.entries(s.zones).map(([id, z]) => [id, [z.entered, z.exited]])),
});
const errorOf = (c: Counts, truth: Counts) =>
  Object.fromEntries(Object.keys(truth).map((id) => [id, Math.abs(c[id][0] - truth[id][0]) + Math.abs(c[id][1] - truth[id][1])]));
const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);

export async function run({ quick, json }: SuiteOptions): Promise<void> {
  if (skipWithoutEvalData({ json }, 'tracking')) return;
  const root = evalDir('tracking');
  const tmp = mkdtempSync(join(tmpdir(), 'sightflow-counting-'));
  const runner = await apiRunner();
  const out: Record<string, { frames: number; truth: Counts; sightflow: Counts; naive: Counts; error: { sightflow: number; naive: number }; per_rule: Record<string, { sightflow: number; naive: number }> }> = {};
  let failed = false;
  try {
    console.log('truth: the engine on gt.txt; sightflow: POST /v1/video/process detect person 0.4 + tracking + analytics, every frame; naive: every side change counts, on the same tracks');
    const all = sequences(root, tmp);
    for (const seq of quick ? all.filter((s) => s.name === 'TUD-Campus') : all) {
      const video = await seq.video();
      let scale = seq.scale;
      if (Number.isNaN(scale)) scale = (await probeWidth(video)) / Number(seqInfo(join(seq.gtPath, '..', '..')).imWidth);
      const request: VideoTaskRequest = {
        input: [{ type: 'video_url', sampling: { mode: 'fps', value: 1000 }, max_frames: quick ? QUICK_FRAMES : 100_000 }],
        steps: [{ model: 'detect', parameters: { classes: ['person'], confidence_threshold: 0.4 } }, { model: 'analytics', parameters: RULES }],
      };
      const { frames, analytics } = await runner.run(video, request);
      if (frames.length === 0) throw new Error(`${seq.name}: no frames`);
      const dims = await size(video);
      const timeOf = new Map(frames.map((f) => [f.stream_info.frame_index, f.stream_info.stream_time_ms ?? f.stream_info.frame_index * 100]));
      const hyp: AnalyticsFrame[] = frames.map((f) => ({
        t_ms: timeOf.get(f.stream_info.frame_index)!, frame_index: f.stream_info.frame_index, width: dims.width, height: dims.height,
        tracks: f.delta.results.flatMap((r) => r.targets.map((t) => ({
          track_id: t.track_id, class: t.class, box: [t.roi.left, t.roi.top, t.roi.left + t.roi.width, t.roi.top + t.roi.height] as const,
        }))),
      }));
      const gtRows = parseMotFile(readFileSync(seq.gtPath, 'utf8')).filter((r) => r.conf !== 0 && r.frame <= frames.length);
      const gt: AnalyticsFrame[] = hyp.map((h) => ({
        ...h,
        tracks: gtRows.filter((r) => r.frame === h.frame_index + 1).map((r) => ({
          track_id: r.id, class: 'person', box: [r.x * scale, r.y * scale, (r.x + r.w) * scale, (r.y + r.h) * scale] as const,
        })),
      }));
      const truth = counts(count(RULES, gt));
      const ours = counts(analytics as AnalyticsSummary);
      const again = counts(count(RULES, hyp));
      if (!isDeepStrictEqual(ours, again)) throw new Error(`${seq.name}: the task's counts ${JSON.stringify(ours)} differ from the engine on its streamed tracks ${JSON.stringify(again)}`);
      const naive = counts(count(NAIVE, hyp));
      const eo = errorOf(ours, truth), en = errorOf(naive, truth);
      out[seq.name] = {
        frames: frames.length, truth, sightflow: ours, naive, error: { sightflow: sum(eo), naive: sum(en) },
        per_rule: Object.fromEntries(Object.keys(truth).map((id) => [id, { sightflow: eo[id], naive: en[id] }])),
      };
      console.log(`\n${seq.name} (${frames.length} frames, ${dims.width}x${dims.height}${seq.note ? `, ${seq.note}` : ''})`);
      console.log(`  ${'rule'.padEnd(10)} ${'truth in/out'.padStart(13)} ${'sightflow'.padStart(10)} ${'naive'.padStart(10)}   abs error sightflow / naive`);
      for (const id of Object.keys(truth)) {
        const f = (c: [number, number]) => `${c[0]}/${c[1]}`;
        console.log(`  ${id.padEnd(10)} ${f(truth[id]).padStart(13)} ${f(ours[id]).padStart(10)} ${f(naive[id]).padStart(10)}   ${String(eo[id]).padStart(4)} / ${en[id]}`);
      }
      const ok = sum(eo) < sum(en) || (sum(eo) === 0 && sum(en) === 0);
      console.log(`  total abs error: sightflow ${sum(eo)}, naive ${sum(en)} ${ok ? '(sightflow closer)' : '(NOT closer)'}`);
      if (!ok) failed = true;
    }
    if (json) console.log(JSON.stringify({ task: 'counting', quick, sequences: out, ok: !failed }));
  } finally {
    await runner.close();
    rmSync(tmp, { recursive: true, force: true });
  }
  if (failed) process.exit(1);
}
