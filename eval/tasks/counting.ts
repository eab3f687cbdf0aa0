// `npm run eval -- counting [--quick] [--json] [--model <byo id>]`: line and zone counts (the analytics
// step) on every scene of eval/lib/counting-scenes.ts (the tracking sequences and close-range crowded crops
// of PETS09-S2L1), each against the true counts of its ground-truth tracks.
//  - truth: every crossing a person really makes, read off the ground-truth tracks (every annotated person,
//    every frame) with their feet's path smoothed over 0.6 s (smoothed(): annotated boxes wobble by a few
//    pixels a frame): each change of side through the segment, each step into or out of a zone (the naive
//    counter below, on those paths).
//  - sightflow: the task API with detect (person, confidence 0.4, as `video-track`) + tracking on every
//    frame and an analytics step with the default anti-flicker settings; the counts are the task's results.
//    The eval checks that they equal the engine run over the streamed tracks (the recount guarantee).
//  - naive: the same streamed tracks counted as public counters do with default settings: every change of
//    side (through the segment) counts, every step into or out of a zone counts (no band, one sample).
//  - on gt: the default settings on the ground-truth tracks: what the rules alone lose with perfect tracks.
// Rules per scene: fixed ones over the whole view (FIXED_RULES), lines through its busiest ground (where the
// most gt tracks cross; `busy_*`) and lines near the frame edge (`edge_*`, where tracks are born and die).
// Error per rule: |in - truth in| + |out - truth out| for a line, |entered - truth| + |exited - truth| for a
// zone. Scenes print worst first (the API's error above the naive counter's, then the API's error).
// Acceptance (exit 1 otherwise): on every scene the API's total error <= the naive counter's, and over all
// scenes (full run) the API's sum <= 0.6 of the naive counter's. `--quick`: the first 40 frames of TUD-Campus.
// `--model yolov8n-int8` (any id of eval/byo-dir.ts): the detect step runs that real export instead.
import { execFile } from 'node:child_process';
import { isDeepStrictEqual, promisify } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evalDir, skipWithoutEvalData } from '../dir.js';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { countingScenes } from '../lib/counting-scenes.js';
import type { MotRow } from '../lib/mot-metrics.js';
import { apiRunner } from './video-track.js';
import { argValue } from '../lib/model-choice.js';
import { BYO_MODELS, isByoModelId, skipWithoutByoModels } from '../byo-dir.js';
import { AnalyticsEngine, type AnalyticsFrame, type AnalyticsSummary } from '../../src/video/analytics/engine.js';
import { parseAnalytics } from '../../src/video/analytics/rules.js';
import type { VideoTaskRequest } from '../../src/video/task-contract.js';

type Pt = [number, number];
interface Line {
  id: string;
  points: [Pt, Pt];
}
interface Zone {
  id: string;
  polygon: Pt[];
}
export interface SceneRules {
  units: 'relative';
  lines: Line[];
  zones: Zone[];
}

/** Relative rules over the whole view: people walk across all of these in PETS09-S2L1 and TUD-Campus. */
export const FIXED_RULES: SceneRules = {
  units: 'relative',
  lines: [
    {
      id: 'v_mid',
      points: [
        [0.5, 0.2],
        [0.5, 1],
      ],
    },
    {
      id: 'v_left',
      points: [
        [0.3, 0.3],
        [0.3, 1],
      ],
    },
    {
      id: 'v_right',
      points: [
        [0.7, 0.3],
        [0.7, 1],
      ],
    },
    {
      id: 'h_mid',
      points: [
        [0, 0.65],
        [1, 0.65],
      ],
    },
    {
      id: 'diagonal',
      points: [
        [0.15, 0.35],
        [0.85, 0.95],
      ],
    },
  ],
  zones: [
    {
      id: 'centre',
      polygon: [
        [0.35, 0.45],
        [0.65, 0.45],
        [0.65, 0.8],
        [0.35, 0.8],
      ],
    },
    {
      id: 'left',
      polygon: [
        [0, 0.3],
        [0.3, 0.3],
        [0.3, 1],
        [0, 1],
      ],
    },
    {
      id: 'right',
      polygon: [
        [0.7, 0.4],
        [1, 0.4],
        [1, 1],
      ],
    },
  ],
};

/** Lines near the frame edge: people enter and leave the view there, so tracks start and end near them. */
const EDGE_LINES: Line[] = [
  {
    id: 'edge_left',
    points: [
      [0.06, 0],
      [0.06, 1],
    ],
  },
  {
    id: 'edge_right',
    points: [
      [0.94, 0],
      [0.94, 1],
    ],
  },
  {
    id: 'edge_bottom',
    points: [
      [0, 0.94],
      [1, 0.94],
    ],
  },
];

/** --quick: the first frames of TUD-Campus (CI runs it). */
const QUICK_FRAMES = 40;
const THRESHOLD = 0.4;

/** The naive counter: the same rules with no band, one sample and no joining of ids. */
export const naive = (rules: SceneRules) => ({
  ...rules,
  min_samples: 1,
  margin_px: 0,
  margin_box: 0,
  join_samples: 0,
});

export function count(params: unknown, frames: readonly AnalyticsFrame[]): AnalyticsSummary {
  const engine = new AnalyticsEngine(parseAnalytics(params, 'parameters'));
  for (const f of frames) engine.process(f);
  engine.finish();
  return engine.summary();
}

/**
 * The scene's rules: FIXED_RULES, the two vertical lines (at least 0.2 of the width apart) and the
 * horizontal line that the most gt tracks cross (relative positions on a 0.05 grid, 0.15-0.85), and EDGE_LINES.
 */
export function sceneRules(gt: readonly AnalyticsFrame[]): SceneRules {
  const grid = Array.from({ length: 15 }, (_, i) => Math.round((0.15 + i * 0.05) * 100) / 100);
  const candidates = [
    ...grid.map(
      (x): Line => ({
        id: `v${x}`,
        points: [
          [x, 0],
          [x, 1],
        ],
      }),
    ),
    ...grid.map(
      (y): Line => ({
        id: `h${y}`,
        points: [
          [0, y],
          [1, y],
        ],
      }),
    ),
  ];
  const truth = count(naive({ units: 'relative', lines: candidates, zones: [] }), gt).lines;
  const crossings = (l: Line) => truth[l.id].in + truth[l.id].out;
  const byTraffic = (kind: string) =>
    candidates
      .filter((l) => l.id.startsWith(kind))
      .sort((a, b) => crossings(b) - crossings(a) || a.id.localeCompare(b.id));
  const pos = (l: Line) => (l.id.startsWith('v') ? l.points[0][0] : l.points[0][1]);
  const vertical = byTraffic('v');
  const v1 = vertical[0],
    v2 = vertical.find((l) => Math.abs(pos(l) - pos(v1)) >= 0.2)!;
  const h1 = byTraffic('h')[0];
  return {
    units: 'relative',
    lines: [
      ...FIXED_RULES.lines,
      { id: 'busy_v1', points: v1.points },
      { id: 'busy_v2', points: v2.points },
      { id: 'busy_h', points: h1.points },
      ...EDGE_LINES,
    ],
    zones: FIXED_RULES.zones,
  };
}

async function probe(video: string): Promise<{ width: number; height: number; fps: number }> {
  const { stdout } = await promisify(execFile)('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=width,height,r_frame_rate',
    '-of',
    'csv=p=0',
    video,
  ]);
  const [width, height, rate] = stdout.trim().split(',');
  const [num, den] = rate.split('/').map(Number);
  return { width: Number(width), height: Number(height), fps: num / (den || 1) };
}

/** Ground-truth rows as analytics frames dated like the task's frames (gt frame n+1 is video frame n). */
export function gtFrames(rows: readonly MotRow[], like: readonly AnalyticsFrame[]): AnalyticsFrame[] {
  const byFrame = new Map<number, MotRow[]>();
  for (const r of rows) {
    let list = byFrame.get(r.frame);
    if (!list) byFrame.set(r.frame, (list = []));
    list.push(r);
  }
  return like.map((h) => ({
    ...h,
    tracks: (byFrame.get(h.frame_index + 1) ?? []).map((r) => ({
      track_id: r.id,
      class: 'person',
      box: [r.x, r.y, r.x + r.w, r.y + r.h] as const,
    })),
  }));
}

/** Half the window over which SMOOTHED gt paths average a person's feet. */
const SMOOTH_MS = 300;

/**
 * The gt tracks with each box moved so its bottom centre is the mean of the track's bottom centres within
 * SMOOTH_MS either side: the path the person walked. Annotated boxes wobble by a few pixels from frame to
 * frame (a person walking along a line or a zone's edge would cross it again and again), and those are no
 * crossings a person counting by hand would make.
 */
export function smoothed(gt: readonly AnalyticsFrame[]): AnalyticsFrame[] {
  const paths = new Map<number, Array<{ t: number; x: number; y: number }>>();
  for (const f of gt)
    for (const t of f.tracks) {
      let p = paths.get(t.track_id);
      if (!p) paths.set(t.track_id, (p = []));
      p.push({ t: f.t_ms, x: (t.box[0] + t.box[2]) / 2, y: t.box[3] });
    }
  const at = new Map<number, number>();
  return gt.map((f) => ({
    ...f,
    tracks: f.tracks.map((t) => {
      const p = paths.get(t.track_id)!;
      const k = at.get(t.track_id) ?? 0;
      at.set(t.track_id, k + 1);
      let sx = 0,
        sy = 0,
        n = 0;
      for (let j = k; j >= 0 && p[k].t - p[j].t <= SMOOTH_MS; j--) {
        sx += p[j].x;
        sy += p[j].y;
        n++;
      }
      for (let j = k + 1; j < p.length && p[j].t - p[k].t <= SMOOTH_MS; j++) {
        sx += p[j].x;
        sy += p[j].y;
        n++;
      }
      const dx = sx / n - p[k].x,
        dy = sy / n - p[k].y;
      return { ...t, box: [t.box[0] + dx, t.box[1] + dy, t.box[2] + dx, t.box[3] + dy] as const };
    }),
  }));
}

type Counts = Record<string, [number, number]>;
export const counts = (s: AnalyticsSummary): Counts => ({
  ...Object.fromEntries(Object.entries(s.lines).map(([id, l]) => [id, [l.in, l.out]])),
  ...Object.fromEntries(Object.entries(s.zones).map(([id, z]) => [id, [z.entered, z.exited]])),
});
export const errorOf = (c: Counts, truth: Counts): Record<string, number> =>
  Object.fromEntries(
    Object.keys(truth).map((id) => [id, Math.abs(c[id][0] - truth[id][0]) + Math.abs(c[id][1] - truth[id][1])]),
  );
const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
const groupOf = (id: string) =>
  id.startsWith('busy_')
    ? 'busy'
    : id.startsWith('edge_')
      ? 'edge'
      : FIXED_RULES.zones.some((z) => z.id === id)
        ? 'zones'
        : 'fixed';

interface SceneResult {
  frames: number;
  size: string;
  close: boolean;
  note?: string;
  rules: SceneRules['lines'];
  truth: Counts;
  sightflow: Counts;
  naive: Counts;
  on_gt: Counts;
  error: { sightflow: number; naive: number; on_gt: number };
  by_group: Record<string, { sightflow: number; naive: number; on_gt: number }>;
  per_rule: Record<string, { sightflow: number; naive: number; on_gt: number }>;
}

export async function run({ quick, json, args }: SuiteOptions): Promise<void> {
  const model = argValue(args, 'model');
  if (model !== undefined && !isByoModelId(model)) {
    console.error(
      `--model ${model}: expected one of the bring-your-own exports (${Object.keys(BYO_MODELS).join(', ')})`,
    );
    process.exit(2);
  }
  if (skipWithoutEvalData({ json }, 'tracking')) return;
  if (model !== undefined && skipWithoutByoModels({ json }, BYO_MODELS[model])) return;
  const root = evalDir('tracking');
  const tmp = mkdtempSync(join(tmpdir(), 'sightflow-counting-'));
  const runner = await apiRunner({ byo: model });
  const out: Record<string, SceneResult> = {};
  try {
    console.log(
      `truth: every crossing of the gt tracks (the naive counter on gt); sightflow: POST /v1/video/process detect (${model ?? 'the built-in detector'}) person ${THRESHOLD} + tracking + analytics with defaults, every frame; ` +
        'naive: every side change counts, on the same tracks; on gt: the defaults on the gt tracks',
    );
    const all = countingScenes(root, tmp);
    for (const scene of quick ? all.filter((s) => s.name === 'TUD-Campus') : all) {
      const video = await scene.video();
      const dims = await probe(video);
      const gtRows = await scene.gt();
      const lastFrame = quick ? QUICK_FRAMES : Math.max(...gtRows.map((r) => r.frame));
      // The rules come from the gt of the frames that run (busiest ground, relative to the frame).
      const dated = Array.from(
        { length: lastFrame },
        (_, i): AnalyticsFrame => ({
          t_ms: Math.round((i * 1000) / dims.fps),
          frame_index: i,
          width: dims.width,
          height: dims.height,
          tracks: [],
        }),
      );
      const rules = sceneRules(smoothed(gtFrames(gtRows, dated)));
      const request: VideoTaskRequest = {
        input: [{ type: 'video_url', sampling: { mode: 'fps', value: 1000 }, max_frames: lastFrame }],
        steps: [
          {
            model: 'detect',
            parameters: { classes: ['person'], confidence_threshold: THRESHOLD, ...(model ? { model } : {}) },
          },
          { model: 'analytics', parameters: { ...rules } },
        ],
      };
      const { frames, analytics } = await runner.run(video, request);
      if (frames.length === 0) throw new Error(`${scene.name}: no frames`);
      const hyp: AnalyticsFrame[] = frames.map((f) => ({
        t_ms: f.stream_info.stream_time_ms ?? f.stream_info.frame_index * 100,
        frame_index: f.stream_info.frame_index,
        width: dims.width,
        height: dims.height,
        tracks: f.delta.results.flatMap((r) =>
          r.targets.map((t) => ({
            track_id: t.track_id,
            class: t.class,
            box: [t.roi.left, t.roi.top, t.roi.left + t.roi.width, t.roi.top + t.roi.height] as const,
          })),
        ),
      }));
      const gt = gtFrames(gtRows, hyp);
      const truth = counts(count(naive(rules), smoothed(gt)));
      const ours = counts(analytics as AnalyticsSummary);
      const again = counts(count(rules, hyp));
      if (!isDeepStrictEqual(ours, again))
        throw new Error(
          `${scene.name}: the task's counts ${JSON.stringify(ours)} differ from the engine on its streamed tracks ${JSON.stringify(again)}`,
        );
      const nv = counts(count(naive(rules), hyp));
      const onGt = counts(count(rules, gt));
      const eo = errorOf(ours, truth),
        en = errorOf(nv, truth),
        eg = errorOf(onGt, truth);
      const per_rule = Object.fromEntries(
        Object.keys(truth).map((id) => [id, { sightflow: eo[id], naive: en[id], on_gt: eg[id] }]),
      );
      const by_group: SceneResult['by_group'] = {};
      for (const [id, e] of Object.entries(per_rule)) {
        const g = (by_group[groupOf(id)] ??= { sightflow: 0, naive: 0, on_gt: 0 });
        g.sightflow += e.sightflow;
        g.naive += e.naive;
        g.on_gt += e.on_gt;
      }
      out[scene.name] = {
        frames: frames.length,
        size: `${dims.width}x${dims.height}`,
        close: scene.close,
        ...(scene.note ? { note: scene.note } : {}),
        rules: rules.lines.filter((l) => groupOf(l.id) !== 'fixed'),
        truth,
        sightflow: ours,
        naive: nv,
        on_gt: onGt,
        error: { sightflow: sum(eo), naive: sum(en), on_gt: sum(eg) },
        by_group,
        per_rule,
      };
      console.log(`${scene.name}: ${frames.length} frames counted`);
    }
    const names = Object.keys(out).sort((a, b) => {
      const x = out[a].error,
        y = out[b].error;
      return y.sightflow - y.naive - (x.sightflow - x.naive) || y.sightflow - x.sightflow || a.localeCompare(b);
    });
    const fmt = (c: [number, number]) => `${c[0]}/${c[1]}`;
    for (const name of names) {
      const r = out[name];
      console.log(
        `\n${name} (${r.frames} frames, ${r.size}${r.close ? ', close-range' : ''}${r.note ? `, ${r.note}` : ''})`,
      );
      console.log(
        `  ${'rule'.padEnd(12)} ${'truth in/out'.padStart(13)} ${'sightflow'.padStart(10)} ${'naive'.padStart(10)} ${'on gt'.padStart(10)}   abs error sightflow / naive / on gt`,
      );
      for (const id of Object.keys(r.truth)) {
        const e = r.per_rule[id];
        console.log(
          `  ${id.padEnd(12)} ${fmt(r.truth[id]).padStart(13)} ${fmt(r.sightflow[id]).padStart(10)} ${fmt(r.naive[id]).padStart(10)} ${fmt(r.on_gt[id]).padStart(10)}   ${String(e.sightflow).padStart(4)} / ${e.naive} / ${e.on_gt}`,
        );
      }
      const groups = Object.entries(r.by_group)
        .map(([g, e]) => `${g} ${e.sightflow}/${e.naive}/${e.on_gt}`)
        .join(', ');
      const ok = r.error.sightflow <= r.error.naive;
      console.log(
        `  total abs error: sightflow ${r.error.sightflow}, naive ${r.error.naive}, on gt ${r.error.on_gt} ${ok ? '' : '(ABOVE the naive counter)'}  [by group sightflow/naive/on gt: ${groups}]`,
      );
    }
    const total = { sightflow: 0, naive: 0, on_gt: 0 };
    for (const r of Object.values(out)) {
      total.sightflow += r.error.sightflow;
      total.naive += r.error.naive;
      total.on_gt += r.error.on_gt;
    }
    const ratio = total.naive > 0 ? total.sightflow / total.naive : 0;
    const everyScene = Object.values(out).every((r) => r.error.sightflow <= r.error.naive);
    const ok = everyScene && (quick || ratio <= 0.6);
    console.log(
      `\nsummary (worst first): ${names.map((n) => `${n} ${out[n].error.sightflow}/${out[n].error.naive}`).join(', ')}`,
    );
    console.log(
      `all scenes: sightflow ${total.sightflow}, naive ${total.naive} (ratio ${ratio.toFixed(3)}, must be <= 0.6${quick ? ' in a full run' : ''}), on gt ${total.on_gt}; ` +
        `every scene at or under the naive counter: ${everyScene ? 'yes' : 'NO'}`,
    );
    if (json)
      console.log(
        JSON.stringify({
          task: 'counting',
          quick,
          ...(model ? { model } : {}),
          order: names,
          scenes: out,
          total,
          ratio: Math.round(ratio * 1000) / 1000,
          ok,
        }),
      );
    if (!ok) process.exitCode = 1;
  } finally {
    await runner.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}
