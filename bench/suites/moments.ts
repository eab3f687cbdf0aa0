// `npm run bench -- moments [--quick] [--json]`: the moment index (docs/moments.md), through the real API.
//  - Indexing speed: a clip of changing synthetic shots (lavfi sources, 640x480, 3 s each) indexed by a video
//    task with an index step at 1 fps sampling, as a multiple of real time (video seconds / wall seconds from
//    POST to succeeded). Peer in the same run: per-frame indexing (every sampled frame its own item, the
//    baseline of `npm run eval -- moments`), which embeds every frame instead of one per segment.
//  - Search: 100k moments (segment items of 500 videos with unit random vectors, written through the same
//    collection writer the index step uses) searched by text with a filter on the video, p50/p95 over the HTTP
//    API, with group_by "video" (moments merged) beside the plain filtered search of the same query.
// --quick: a 15 s clip, 5k moments.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { api, startTestApp, type TestApp } from '../../test/helpers/app.js';

const SOURCES = ['testsrc2', 'mandelbrot', 'smptebars', 'rgbtestsrc', 'cellauto', 'life', 'testsrc', 'yuvtestsrc'];

function shotsClip(dir: string, seconds: number): string {
  const parts: string[] = [];
  let total = 0;
  for (let i = 0; total < seconds; i++) {
    const d = Math.min(3 + ((i * 7) % 7), seconds - total);
    parts.push([`${SOURCES[i % SOURCES.length]}=size=640x480:rate=10`, String(d)].join('|'));
    total += d;
  }
  const out = join(dir, 'shots.mp4');
  const inputs = parts.flatMap((p) => ['-f', 'lavfi', '-t', p.split('|')[1]!, '-i', p.split('|')[0]!]);
  const concat = `${parts.map((_, i) => `[${i}:v]format=yuv420p,setsar=1[v${i}]`).join(';')};${parts.map((_, i) => `[v${i}]`).join('')}concat=n=${parts.length}:v=1[v]`;
  execFileSync('ffmpeg', [
    '-v',
    'error',
    ...inputs,
    '-filter_complex',
    concat,
    '-map',
    '[v]',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '32',
    '-g',
    '20',
    out,
  ]);
  return out;
}

async function indexSeconds(t: TestApp, col: string, video: string, params: Record<string, unknown>): Promise<number> {
  const started = performance.now();
  const r = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [
        { type: 'video_base64', data: readFileSync(video).toString('base64'), sampling: { mode: 'fps', value: 1 } },
      ],
      steps: [{ model: 'index', parameters: { collection: col, ...params } }],
    },
  });
  if (r.status !== 202) throw new Error(`process: ${r.status} ${r.text}`);
  for (;;) {
    const s = await api(t, `/v1/video/tasks/${r.body.id}`);
    if (s.body.status === 'succeeded') return (performance.now() - started) / 1000;
    if (['failed', 'cancelled'].includes(s.body.status))
      throw new Error(`task ${s.body.status}: ${JSON.stringify(s.body.error)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

async function collection(t: TestApp, name: string): Promise<string> {
  const r = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name } });
  if (r.status !== 201) throw new Error(`collection: ${r.status} ${r.text}`);
  return r.body.id;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.floor(p * s.length))]! * 10) / 10;
};

export async function run({ quick, json }: SuiteOptions): Promise<void> {
  const seconds = quick ? 15 : 120;
  const moments = quick ? 5000 : 100_000;
  const work = mkdtempSync(join(tmpdir(), 'moments-bench-'));
  const t = await startTestApp();
  try {
    const video = shotsClip(work, seconds);
    // Warm the models first (the first task would otherwise pay their loading).
    await indexSeconds(t, await collection(t, 'warm'), video, { segment_ms: 60_000, segmenting: 'fixed' });
    const ours = seconds / (await indexSeconds(t, await collection(t, 'moments'), video, {}));
    const peer =
      seconds /
      (await indexSeconds(t, await collection(t, 'frames'), video, { segment_ms: 1000, segmenting: 'fixed' }));
    console.log(
      `indexing a ${seconds} s clip of changing shots at 1 fps: ${ours.toFixed(1)}x real time (per-frame peer ${peer.toFixed(1)}x; ${(ours / peer).toFixed(1)}x faster)`,
    );

    const col = await collection(t, 'big');
    const writer = await t.app.collections!.writer(t.projectId, col, 'collection');
    const dims = writer.dimensions;
    let seed = 1;
    const rand = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647 - 0.5;
    };
    const wrote = performance.now();
    for (let i = 0; i < moments; i += 1000) {
      const items = [];
      for (let j = i; j < Math.min(moments, i + 1000); j++) {
        const v = new Float32Array(dims);
        let n = 0;
        for (let d = 0; d < dims; d++) {
          v[d] = rand();
          n += v[d]! * v[d]!;
        }
        for (let d = 0; d < dims; d++) v[d]! /= Math.sqrt(n);
        const video = `cam-${j % 500}`;
        const k = Math.floor(j / 500);
        items.push({
          id: `m${j}`,
          vector: v,
          metadata: {
            task_id: `vt_${video}`,
            video,
            kind: 'segment',
            start_ms: k * 4000,
            end_ms: k * 4000 + 4000,
            stream_offset: k * 1000,
            shot: k,
            ...(j % 10 === 0 ? { 'zone:gate': true } : {}),
          },
        });
      }
      await writer.add(items);
    }
    console.log(`${moments} moments written in ${((performance.now() - wrote) / 1000).toFixed(1)} s`);
    const queries = [
      'a red car at the gate',
      'a person walking a dog',
      'people at a table',
      'a bus in the street',
      'a cat on a sofa',
    ];
    const filters = [
      { 'zone:gate': true },
      { video: { $in: ['cam-1', 'cam-2', 'cam-3', 'cam-4', 'cam-5', 'cam-6', 'cam-7', 'cam-8', 'cam-9', 'cam-10'] } },
    ];
    const time = async (extra: object) => {
      const ms: number[] = [];
      for (let round = 0; round < (quick ? 2 : 8); round++) {
        for (const text of queries) {
          for (const filter of filters) {
            const t0 = performance.now();
            const r = await api(t, `/v1/vectors/collections/${col}/search`, {
              method: 'POST',
              json: { text, filter, top_k: 10, ...extra },
            });
            ms.push(performance.now() - t0);
            if (r.status !== 200) throw new Error(`search: ${r.status} ${r.text}`);
          }
        }
      }
      return ms;
    };
    await time({});
    const grouped: number[] = [];
    const plain: number[] = [];
    // Alternating, so load from other processes hits both alike.
    for (let i = 0; i < 3; i++) {
      grouped.push(...(await time({ group_by: 'video', merge_gap_ms: 1000 })));
      plain.push(...(await time({})));
    }
    console.log(
      `search with a filter at ${moments} moments: group_by video p50 ${pct(grouped, 0.5)} ms, p95 ${pct(grouped, 0.95)} ms; plain filtered search p50 ${pct(plain, 0.5)} ms, p95 ${pct(plain, 0.95)} ms (${grouped.length} queries each)`,
    );
    if (json) {
      console.log(
        JSON.stringify({
          suite: 'moments',
          clip_s: seconds,
          index_x_realtime: Math.round(ours * 10) / 10,
          per_frame_peer_x_realtime: Math.round(peer * 10) / 10,
          moments,
          search_grouped_p50_ms: pct(grouped, 0.5),
          search_grouped_p95_ms: pct(grouped, 0.95),
          search_plain_p50_ms: pct(plain, 0.5),
          search_plain_p95_ms: pct(plain, 0.95),
        }),
      );
    }
  } finally {
    await t.close();
    rmSync(work, { recursive: true, force: true });
  }
}
