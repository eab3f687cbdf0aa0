// `node --import tsx bench/settings-change.ts`: what a serving-settings change under load costs the requests
// right after it, taken in place (a queue depth) against loading the model again (a queue depth with batch sizes,
// which on the CPU run every size either way, so only the reload differs). Four clients detect on the built-in
// model through a real server; five changes of each kind, alternating, each 3 s after a quiet 3 s window. Prints
// the slowest request of each window (docs/models.md, "Changing serving settings").
import { readFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SAMPLE_IMAGE } from '../src/detection/model-check.js';
import { admin, api, startTestApp } from '../test/helpers/app.js';

const sample = readFileSync(SAMPLE_IMAGE).toString('base64');
const app = await startTestApp(
  { SIGHTFLOW_INFERENCE_SESSIONS: '1' },
  { dataDir: mkdtempSync(join(tmpdir(), 'sf-rt-')) },
);
const done: Array<{ end: number; ms: number; status: number }> = [];
let stop = false;
const client = async () => {
  while (!stop) {
    const t0 = performance.now();
    const r = await api(app, '/v1/vision/detect', {
      method: 'POST',
      json: { image_base64: sample, model: 'centernet-coco' },
    });
    done.push({ end: performance.now(), ms: performance.now() - t0, status: r.status });
  }
};
const clients = Array.from({ length: 4 }, client);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
await sleep(4000);
const rows: Record<string, number[]> = { inPlace: [], reload: [], baseline: [] };
const window = (t: number) => done.filter((d) => d.end >= t && d.end < t + 3000);
for (let i = 0; i < 5; i++) {
  for (const kind of ['inPlace', 'reload'] as const) {
    const tb = performance.now();
    await sleep(3000);
    rows.baseline.push(Math.max(...window(tb).map((d) => d.ms)));
    const t = performance.now();
    const body =
      kind === 'inPlace' ? { queue_depth: 20 + i } : { queue_depth: 40 + i, batch_sizes: i % 2 ? null : 'all' };
    const p = await admin(app, '/admin/v1/models/centernet-coco', { method: 'PATCH', json: body });
    if (p.status !== 200) throw new Error(p.text);
    await sleep(3000);
    const w = window(t);
    rows[kind].push(Math.max(...w.map((d) => d.ms)));
    if (w.some((d) => d.status !== 200)) console.log('non-200 after', kind);
  }
}
stop = true;
await Promise.all(clients);
await app.close();
const r = (a: number[]) => a.map((x) => Math.round(x)).join(' ');
console.log(
  'slowest request in the 3 s after a change, ms: in place',
  r(rows.inPlace),
  '| reloading',
  r(rows.reload),
  '| 3 s windows without a change',
  r(rows.baseline),
);
