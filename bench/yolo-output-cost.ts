// What a YOLOv8 detector's output costs past the model, fetched whole and decoded (the scan over every class of
// every anchor) against its twin reduced in the graph (src/inference/best-class.ts) and decoded: the session
// call's CPU, the decode's, and the bytes the output takes. On a GPU the whole output crosses the bus back for
// every image and the session's worker decodes it, batch by batch, on one thread; here the same two halves are
// timed on the CPU. The graph is yolov8n-int8 made float (as it loads on either), photos of the evaluation set
// letterboxed as the detector does. Forms alternate round by round; each keeps its least CPU. Run by hand:
//   node --import tsx bench/yolo-output-cost.ts [--photos 16] [--rounds 5] [--min-score 0.25]
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import { byoPath, BYO_MODELS } from '../eval/byo-dir.js';
import { argValue } from '../eval/lib/model-choice.js';
import { evalDir } from '../eval/dir.js';
import { decodeYolo, decodeYoloBest, type DecodeOptions } from '../src/detection/yolo.js';
import { bestClassOutput } from '../src/inference/best-class-output.js';
import { makeGraph } from '../src/inference/graph-steps.js';
import { letterbox } from '../src/native/image.js';
import { loadRgb } from '../test/helpers/inference.js';

const args = process.argv.slice(2);
const photos = Number(argValue(args, 'photos') ?? 16);
const rounds = Number(argValue(args, 'rounds') ?? 5);
const minScore = Number(argValue(args, 'min-score') ?? 0.25);

const made = await makeGraph(byoPath(BYO_MODELS['yolov8n-int8']), { dequantize: 'any', bestClass: ['output0'] });
if (!made.bytes || made.refused.bestClass) throw new Error(`the graph was not made: ${JSON.stringify(made.refused)}`);
const session = await ort.InferenceSession.create(made.bytes, {
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  extra: { session: { intra_op: { allow_spinning: '0' } } },
});
const dir = join(evalDir('detection_coco128'), 'images');
const inputs: ort.Tensor[] = [];
for (const f of readdirSync(dir).sort().slice(0, photos)) {
  const r = letterbox(await loadRgb(join(dir, f)), { width: 640, height: 640, layout: 'nchw', scale: 1 / 255 });
  inputs.push(new ort.Tensor('float32', r.tensor, r.dims));
}
const options: DecodeOptions = { layout: 'yolov8', numClasses: 80, minScore, iouThreshold: 0.7, maxDetections: 300 };
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
type Form = 'whole' | 'reduced';
const best: Record<Form, { run: number; decode: number; bytes: number; boxes: number }> = {
  whole: { run: Infinity, decode: Infinity, bytes: 0, boxes: 0 },
  reduced: { run: Infinity, decode: Infinity, bytes: 0, boxes: 0 },
};
for (let r = 0; r < rounds; r++)
  for (const form of (r % 2 ? ['reduced', 'whole'] : ['whole', 'reduced']) as Form[]) {
    const name = form === 'whole' ? 'output0' : bestClassOutput('output0');
    let run = 0,
      decode = 0,
      bytes = 0,
      boxes = 0;
    for (const x of inputs) {
      const c0 = cpuMs();
      const out = (await session.run({ [session.inputNames[0]!]: x }, [name]))[name]!;
      const c1 = cpuMs();
      const data = out.data as Float32Array;
      const found = form === 'whole' ? decodeYolo(data, out.dims, options) : decodeYoloBest(data, out.dims, options);
      run += c1 - c0;
      decode += cpuMs() - c1;
      bytes += data.byteLength;
      boxes += found.length;
    }
    const b = best[form];
    b.run = Math.min(b.run, run / inputs.length);
    b.decode = Math.min(b.decode, decode / inputs.length);
    b.bytes = bytes / inputs.length;
    b.boxes = boxes;
  }
if (best.whole.boxes !== best.reduced.boxes)
  throw new Error(`boxes differ: ${best.whole.boxes} against ${best.reduced.boxes}`);
console.log(
  `yolov8n-int8 made float, ${inputs.length} COCO photos, one 1-thread session, min score ${minScore}, least CPU of ${rounds} rounds (ms an image):`,
);
for (const form of ['whole', 'reduced'] as Form[]) {
  const b = best[form];
  console.log(
    `  ${form.padEnd(8)} session ${b.run.toFixed(2)}  decode ${b.decode.toFixed(3)}  output ${(b.bytes / 1024).toFixed(0)} KiB  (${b.boxes} boxes)`,
  );
}
console.log(
  `  reduced - whole: session ${(best.reduced.run - best.whole.run).toFixed(2)} ms, decode ${(best.reduced.decode - best.whole.decode).toFixed(3)} ms, output ${(best.whole.bytes / best.reduced.bytes).toFixed(1)}x fewer bytes`,
);
