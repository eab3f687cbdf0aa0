// `npm run eval -- moments [--quick] [--json]`: finding the moment (docs/moments.md). A video is composed
// from the photos of retrieval_coco_captions, each shown for 2 to 7 s (seeded, so the intervals are known and
// fall off any fixed grid), and indexed through the real API by a video task with an index step; every
// caption is a query. A query is right at rank k when one of its k best moments overlaps the photo's interval
// at temporal IoU >= 0.5. Printed side by side:
//  - moments, scene cuts: the index step as shipped (segments end at scene changes or segment_ms), search
//    with group_by "video" (adjacent segments merged);
//  - moments, fixed windows: the same with segmenting "fixed" (the measurement behind the default);
//  - baseline, per-frame search mapped to fixed windows: every sampled frame its own item, the best frames
//    mapped to the segment_ms window that holds them, windows in the order of their best frame.
// With the built-in model, and with each bring-your-own CLIP the server lists. --quick: 6 photos.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { evalDir, skipWithoutEvalData } from '../dir.js';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { api, startTestApp, type TestApp } from '../../test/helpers/app.js';

const SEGMENT_MS = 4000;
const FPS = 2;
const round = (v: number) => Math.round(v * 1000) / 1000;

interface Interval {
  start: number;
  end: number;
}
const iou = (a: Interval, b: Interval) => {
  const inter = Math.max(0, Math.min(a.end, b.end) - Math.max(a.start, b.start));
  return inter / (Math.max(a.end, b.end) - Math.min(a.start, b.start));
};

/** Seeded durations from 2 to 7 s (whole half-seconds), so no fixed grid lines up with the photos. */
function durations(n: number): number[] {
  let x = 12345;
  return Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return 2 + (x % 11) / 2;
  });
}

function composeVideo(dir: string, files: string[], secs: number[]): string {
  const work = mkdtempSync(join(tmpdir(), 'moments-eval-'));
  const out = join(work, 'photos.mp4');
  const inputs = files.flatMap((f, i) => [
    '-loop',
    '1',
    '-framerate',
    '10',
    '-t',
    String(secs[i]),
    '-i',
    join(dir, 'images', f),
  ]);
  const scale = files
    .map(
      (_, i) =>
        `[${i}:v]scale=640:480:force_original_aspect_ratio=decrease,pad=640:480:(ow-iw)/2:(oh-ih)/2,setsar=1,fps=10[v${i}]`,
    )
    .join(';');
  const concat = `${files.map((_, i) => `[v${i}]`).join('')}concat=n=${files.length}:v=1,format=yuv420p[v]`;
  execFileSync('ffmpeg', [
    '-v',
    'error',
    ...inputs,
    '-filter_complex',
    `${scale};${concat}`,
    '-map',
    '[v]',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-g',
    '20',
    out,
  ]);
  return out;
}

async function indexVideo(t: TestApp, col: string, video: string, params: Record<string, unknown>): Promise<number> {
  const started = performance.now();
  const r = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [
        {
          type: 'video_base64',
          data: readFileSync(video).toString('base64'),
          sampling: { mode: 'fps', value: FPS },
          max_frames: 100_000,
        },
      ],
      steps: [{ model: 'index', parameters: { collection: col, video_id: 'photos', ...params } }],
    },
  });
  if (r.status !== 202) throw new Error(`process: ${r.status} ${r.text}`);
  for (;;) {
    const s = await api(t, `/v1/video/tasks/${r.body.id}`);
    if (s.body.status === 'succeeded') return (performance.now() - started) / 1000;
    if (['failed', 'cancelled'].includes(s.body.status))
      throw new Error(`task ${s.body.status}: ${JSON.stringify(s.body.error)}`);
    await new Promise((res) => setTimeout(res, 250));
  }
}

async function collection(t: TestApp, name: string, model: string): Promise<string> {
  const r = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name, model_id: model } });
  if (r.status !== 201) throw new Error(`collection: ${r.status} ${r.text}`);
  return r.body.id;
}

async function momentsFor(t: TestApp, col: string, text: string): Promise<Interval[]> {
  const r = await api(t, `/v1/vectors/collections/${col}/search`, {
    method: 'POST',
    json: { text, group_by: 'video', top_k: 1 },
  });
  if (r.status !== 200) throw new Error(`search: ${r.status} ${r.text}`);
  return (r.body.videos[0]?.moments ?? []).map((m: any) => ({ start: m.start_ms, end: m.end_ms }));
}

async function frameWindowsFor(t: TestApp, col: string, text: string): Promise<Interval[]> {
  const r = await api(t, `/v1/vectors/collections/${col}/search`, { method: 'POST', json: { text, top_k: 100 } });
  if (r.status !== 200) throw new Error(`search: ${r.status} ${r.text}`);
  const out: Interval[] = [];
  for (const h of r.body.results) {
    const start = Math.floor(h.metadata.start_ms / SEGMENT_MS) * SEGMENT_MS;
    if (!out.some((w) => w.start === start)) out.push({ start, end: start + SEGMENT_MS });
  }
  return out;
}

function score(ranked: Interval[][], truth: Interval[]): { r1: number; r5: number; mean_iou_at_1: number } {
  let r1 = 0,
    r5 = 0,
    iou1 = 0;
  ranked.forEach((list, i) => {
    const hitAt = list.slice(0, 5).findIndex((m) => iou(m, truth[i]!) >= 0.5);
    if (hitAt === 0) r1++;
    if (hitAt >= 0) r5++;
    iou1 += list[0] ? iou(list[0], truth[i]!) : 0;
  });
  return { r1: round(r1 / ranked.length), r5: round(r5 / ranked.length), mean_iou_at_1: round(iou1 / ranked.length) };
}

export async function run({ quick, json }: SuiteOptions): Promise<void> {
  if (skipWithoutEvalData({ json }, 'retrieval_coco_captions')) return;
  const dir = evalDir('retrieval_coco_captions');
  const files = readdirSync(join(dir, 'images'))
    .filter((f) => /\.jpe?g$/i.test(f))
    .sort()
    .slice(0, quick ? 6 : undefined);
  const secs = durations(files.length);
  const starts = secs.map((_, i) => secs.slice(0, i).reduce((a, b) => a + b, 0) * 1000);
  const interval = new Map(files.map((f, i) => [f, { start: starts[i]!, end: starts[i]! + secs[i]! * 1000 }]));
  const queries = readFileSync(join(dir, 'captions.tsv'), 'utf8')
    .split('\n')
    .slice(1)
    .map((l) => l.split('\t'))
    .filter(([f, c]) => f && c && interval.has(f))
    .map(([f, c]) => ({ truth: interval.get(f!)!, text: c! }));
  const video = composeVideo(dir, files, secs);
  const seconds = secs.reduce((a, b) => a + b, 0);
  console.log(
    `video: ${files.length} photos, ${seconds} s, shown 2-7 s each; ${queries.length} caption queries; sampling ${FPS} fps, segment_ms ${SEGMENT_MS}`,
  );
  const t = await startTestApp();
  const out: Record<string, unknown> = {
    task: 'moments',
    photos: files.length,
    queries: queries.length,
    video_s: seconds,
  };
  try {
    const models = (await api(t, '/v1/vectors/models')).body.models.map((m: { id: string }) => m.id) as string[];
    const byo = models.filter((m) => m !== 'multimodal-embedding-v1');
    if (byo.length === 0) console.log('no bring-your-own CLIP installed: built-in model only');
    for (const model of ['multimodal-embedding-v1', ...byo]) {
      const variants: Array<[string, Record<string, unknown>, (col: string, q: string) => Promise<Interval[]>]> = [
        ['moments_scene', { segment_ms: SEGMENT_MS, segmenting: 'scene' }, (c, q) => momentsFor(t, c, q)],
        ['moments_fixed', { segment_ms: SEGMENT_MS, segmenting: 'fixed' }, (c, q) => momentsFor(t, c, q)],
        [
          'baseline_frames_to_windows',
          { segment_ms: 1000 / FPS, segmenting: 'fixed' },
          (c, q) => frameWindowsFor(t, c, q),
        ],
      ];
      const res: Record<string, unknown> = {};
      for (const [name, params, search] of variants) {
        const col = await collection(t, `${model}-${name}`, model);
        const indexS = await indexVideo(t, col, video, params);
        const ranked = [];
        for (const q of queries) ranked.push(await search(col, q.text));
        const s = {
          ...score(
            ranked,
            queries.map((q) => q.truth),
          ),
          index_speed_x: round(seconds / indexS),
        };
        res[name] = s;
        console.log(
          `${model} ${name.padEnd(27)} R@1 ${s.r1.toFixed(3)}  R@5 ${s.r5.toFixed(3)}  mean IoU@1 ${s.mean_iou_at_1.toFixed(3)}  (indexed at ${s.index_speed_x}x real time)`,
        );
      }
      out[model] = res;
    }
    if (json) console.log(JSON.stringify(out));
  } finally {
    await t.close();
    rmSync(join(video, '..'), { recursive: true, force: true });
  }
}
