// A YOLO output reduced in the graph to what decoding reads of it, as a second output (the twin): for a
// channels-first one ([N, 4 + C, A]: a box and C class scores for each of A anchors, as YOLOv8 and YOLO11 export
// it) [N, 6, A], each anchor's box, its highest class score (ReduceMax over the classes) and that class (ArgMax,
// the first on a tie); for one anchor a row ([N, A, 5 + C], YOLOv5: a box, an objectness, the classes; YOLOX
// alike, its box as grid offsets and log sizes) [N, A, 7], the row's first five values, the highest class score
// and that class. The class is float32 (exact to
// 2^24). The session's worker fetches the twin instead of the raw output (session-worker.ts) and decodes it as
// it decodes the raw one (yolo.ts, decodeYoloBest), so the boxes are the same. Why: the raw output of a 640
// YOLOv8 is 2.7 MB an image (a YOLOv5's 8.6 MB); on a GPU it crosses the bus back for every image, and on
// whichever thread decodes it the scan over 80 classes is the decode's whole cost. Reduced, 0.2 MB (0.7 MB)
// crosses, and the scan runs in the runtime's vectorised kernels where the model runs. The raw output stays an
// output, so nothing that reads it changes.
import onnxProto from 'onnx-proto';
import { decodeModel, DT, int64Tensor } from './onnx-tensors.js';
import { bestClassOutput, twinForm } from './best-class-output.js';
import { parseNames } from '../detection/detector-config.js';

const { onnx } = onnxProto;
type Node = import('onnx-proto').onnx.INodeProto;

export type BestClassResult = { ok: true; bytes: Uint8Array } | { ok: false; reason: string };

/**
 * The graph with `<output>/best-class` beside each named output, or why not. An output whose features are not a
 * box (and an objectness) and the classes by the exporter's own metadata (Ultralytics writes `task` and `names`)
 * gets none, since its decode never reads one: a segmentation, pose or oriented-box export's extra channels. The
 * same bytes come back when no output gets one.
 */
export function withBestClass(bytes: Uint8Array, outputs: readonly string[]): BestClassResult {
  const d = decodeModel(bytes);
  if (!d.ok) return d;
  const { model, graph: g } = d;
  const meta = new Map((model.metadataProps ?? []).map((p) => [p.key ?? '', p.value ?? '']));
  const task = meta.get('task')?.trim();
  if (task && task !== 'detect') return { ok: true, bytes };
  const classes = parseNames(meta.get('names')).length;
  const opset = Number(String(model.opsetImport?.find((o) => !o.domain)?.version ?? 0));
  // Slice takes its bounds as inputs from opset 10; ReduceMax takes its axes as an input from 18.
  if (opset < 10) return { ok: false, reason: `opset ${opset} is older than 10` };
  const names = new Set<string>();
  for (const n of g.node ?? []) for (const x of [...(n.input ?? []), ...(n.output ?? [])]) names.add(x);
  for (const t of g.initializer ?? []) names.add(t.name!);
  const nodes: Node[] = [];
  const INT = onnx.AttributeProto.AttributeType.INT;
  const INTS = onnx.AttributeProto.AttributeType.INTS;
  for (const output of outputs) {
    const o = (g.output ?? []).find((x) => x.name === output);
    if (!o) return { ok: false, reason: `the graph has no output ${output}` };
    if (o.type?.tensorType?.elemType !== DT.FLOAT) return { ok: false, reason: `output ${output} is not float32` };
    const dims = o.type.tensorType.shape?.dim ?? [];
    const shape = dims.map((d) =>
      d.dimValue !== undefined && d.dimValue !== null && !d.dimParam ? Number(String(d.dimValue)) : null,
    );
    const form = twinForm({ name: output, shape, elemType: DT.FLOAT });
    if (!form) return { ok: false, reason: `output ${output} is [${shape.join(', ')}], no YOLO layout` };
    const features = form === 'channels' ? shape[1] : shape[2];
    if (classes > 0 && features !== (form === 'channels' ? 4 : 5) + classes) continue;
    const best = bestClassOutput(output);
    const stem = `${output}/best_class`;
    if (names.has(best) || [...names].some((x) => x.startsWith(stem)))
      return { ok: false, reason: `the graph already names ${best}` };
    const k = (suffix: string, v: bigint[]) => {
      const t = int64Tensor(`${stem}/${suffix}`, v);
      g.initializer = [...(g.initializer ?? []), t];
      return t.name!;
    };
    const n = (opType: string, ins: string[], out: string, attribute: Node['attribute'] = []) => {
      nodes.push({ opType, name: `${out}_node`, input: ins, output: [out], attribute });
      return out;
    };
    // The features' axis: 1 channels-first, 2 for rows; what is kept whole before the classes: the box (and,
    // for rows, the objectness).
    const axis = form === 'channels' ? 1 : 2;
    const kept = form === 'channels' ? 4n : 5n;
    const along = k('axis', [BigInt(axis)]);
    const head = n('Slice', [output, k('zero', [0n]), k('kept', [kept]), along], `${stem}/head`);
    // To the end of the axis, whatever its length.
    const scores = n('Slice', [output, k('classes_from', [kept]), k('end', [2n ** 62n]), along], `${stem}/scores`);
    const max =
      opset >= 18
        ? n('ReduceMax', [scores, along], `${stem}/max`, [{ name: 'keepdims', type: INT, i: 1 }])
        : n('ReduceMax', [scores], `${stem}/max`, [
            { name: 'axes', type: INTS, ints: [axis] },
            { name: 'keepdims', type: INT, i: 1 },
          ]);
    const arg = n('ArgMax', [scores], `${stem}/argmax`, [
      { name: 'axis', type: INT, i: axis },
      { name: 'keepdims', type: INT, i: 1 },
    ]);
    const cls = n('Cast', [arg], `${stem}/class`, [{ name: 'to', type: INT, i: DT.FLOAT }]);
    n('Concat', [head, max, cls], best, [{ name: 'axis', type: INT, i: axis }]);
    const width = { dimValue: Number(kept) + 2 };
    const twinDims =
      form === 'channels' ? [dims[0] ?? {}, width, dims[2] ?? {}] : [dims[0] ?? {}, dims[1] ?? {}, width];
    g.output = [
      ...(g.output ?? []),
      { name: best, type: { tensorType: { elemType: DT.FLOAT, shape: { dim: twinDims } } } },
    ];
  }
  if (nodes.length === 0) return { ok: true, bytes };
  g.node = [...(g.node ?? []), ...nodes];
  return { ok: true, bytes: onnx.ModelProto.encode(model).finish() };
}
