// A model exported in float16 (Ultralytics' `export half=True`, a GPU deployment's usual export): its inputs and
// outputs are float16, and every caller here makes float32 tensors (the detector's input, an embedder's, OCR's)
// and reads float32 outputs. Two rewrites make such a graph take and give float32:
// - withFloat32Edges: a Cast to float16 after each float16 input and one to float32 before each float16 output,
//   the inside left as exported (where float16 runs natively: a GPU);
// - widenedToFloat32: every float16 tensor, constant, cast and declaration made float32 (float16 -> float32 is
//   exact, so the weights are the export's own), for the CPU, where ONNX Runtime would otherwise cast around
//   each float16 node it has no kernel for.
// Which one a model takes follows SIGHTFLOW_INFERENCE_FP16 (graph-steps.ts): where float16 applies, the edges;
// elsewhere, the widening. Both refuse (say why) graphs with subgraphs, sparse initialisers or weights stored
// outside the file; the model then loads as exported and its first run names the type it wanted.
import onnxProto from 'onnx-proto';
import { castNode, decodeModel, DT } from './onnx-tensors.js';
import { halfToFloat } from './tfjs-import/tfjs-graph.js';

const { onnx } = onnxProto;
type Graph = import('onnx-proto').onnx.IGraphProto;
type Node = import('onnx-proto').onnx.INodeProto;
type TensorProto = import('onnx-proto').onnx.ITensorProto;
type AttributeProto = import('onnx-proto').onnx.IAttributeProto;

export type Float16ExportResult =
  | { ok: true; bytes: Uint8Array; changed: boolean; inputs: string[]; outputs: string[] }
  | { ok: false; reason: string };

/** Attributes that name an element type (Cast's target, the generators' output type). */
const TYPE_ATTRIBUTES = new Set(['to', 'dtype']);

/** Why the graph cannot be rewritten, or undefined. */
function refusal(g: Graph): string | undefined {
  for (const n of g.node ?? [])
    if (n.attribute?.some((a) => a.g || a.graphs?.length))
      return `${n.opType} node ${n.name || n.output?.[0]}: a graph with subgraphs (control flow) is not rewritten`;
  if (g.sparseInitializer?.length) return 'the graph has sparse initialisers';
  for (const t of g.initializer ?? [])
    if (t.dataLocation === onnx.TensorProto.DataLocation.EXTERNAL)
      return `initialiser ${t.name} is stored outside the file`;
  return undefined;
}

type ValueInfo = import('onnx-proto').onnx.IValueInfoProto;

/** The graph decoded, unless refused, with its float16 inputs (initialisers listed as inputs aside) and outputs. */
function openHalf(
  bytes: Uint8Array,
):
  | { ok: true; model: import('onnx-proto').onnx.ModelProto; graph: Graph; inputs: ValueInfo[]; outputs: ValueInfo[] }
  | { ok: false; reason: string } {
  const decoded = decodeModel(bytes);
  if (!decoded.ok) return decoded;
  const g = decoded.graph;
  const why = refusal(g);
  if (why) return { ok: false, reason: why };
  const initialisers = new Set((g.initializer ?? []).map((t) => t.name ?? ''));
  return {
    ok: true,
    model: decoded.model,
    graph: g,
    inputs: (g.input ?? []).filter((i) => isHalf(i) && !initialisers.has(i.name ?? '')),
    outputs: (g.output ?? []).filter(isHalf),
  };
}

const isHalf = (vi: { type?: { tensorType?: { elemType?: number | null } | null } | null }) =>
  vi.type?.tensorType?.elemType === DT.FLOAT16;

/** The graph taking float32 where it took float16 and giving float32 where it gave float16; its inside unchanged. */
export function withFloat32Edges(bytes: Uint8Array): Float16ExportResult {
  const opened = openHalf(bytes);
  if (!opened.ok) return opened;
  const { model, graph: g, inputs, outputs } = opened;
  if (inputs.length === 0 && outputs.length === 0) return { ok: true, bytes, changed: false, inputs: [], outputs: [] };
  // Every name the graph uses, so a Cast's new tensor takes none of them.
  const names = new Set<string>([
    ...[...(g.input ?? []), ...(g.output ?? []), ...(g.valueInfo ?? []), ...(g.initializer ?? [])].map(
      (x) => x.name ?? '',
    ),
  ]);
  for (const n of g.node ?? []) for (const x of [...(n.input ?? []), ...(n.output ?? [])]) names.add(x);
  const fresh = (base: string) => {
    let name = `${base}__float16`;
    for (let k = 2; names.has(name); k++) name = `${base}__float16_${k}`;
    names.add(name);
    return name;
  };
  const rename = new Map<string, string>();
  const head: Node[] = [];
  for (const i of inputs) {
    const name = i.name ?? '';
    const half = fresh(name);
    rename.set(name, half);
    head.push(castNode(name, half, DT.FLOAT16));
    i.type!.tensorType!.elemType = DT.FLOAT;
  }
  // An output made in float16 under another name, cast back to float32 under its own; a graph input that is
  // also an output (a pass-through) reads the float32 input itself.
  const tail: Node[] = [];
  const outputHalf = new Map<string, string>();
  const made = new Set((g.node ?? []).flatMap((n) => n.output ?? []));
  for (const o of outputs) {
    const name = o.name ?? '';
    if (!rename.has(name) && !made.has(name)) return { ok: false, reason: `output ${name} is not made by a node` };
  }
  for (const o of outputs) {
    const name = o.name ?? '';
    o.type!.tensorType!.elemType = DT.FLOAT;
    if (rename.has(name)) continue;
    const half = fresh(name);
    outputHalf.set(name, half);
    tail.push(castNode(half, name, DT.FLOAT));
  }
  for (const n of g.node ?? []) {
    n.input = (n.input ?? []).map((x) => rename.get(x) ?? outputHalf.get(x) ?? x);
    n.output = (n.output ?? []).map((x) => outputHalf.get(x) ?? x);
  }
  g.node = [...head, ...(g.node ?? []), ...tail];
  // A declaration of an output's tensor follows it to its new name, as the float16 it is there.
  for (const vi of g.valueInfo ?? []) {
    const half = outputHalf.get(vi.name ?? '');
    if (!half) continue;
    vi.name = half;
    if (vi.type?.tensorType) vi.type.tensorType.elemType = DT.FLOAT16;
  }
  return {
    ok: true,
    bytes: onnx.ModelProto.encode(model).finish(),
    changed: true,
    inputs: inputs.map((i) => i.name ?? ''),
    outputs: outputs.map((o) => o.name ?? ''),
  };
}

/** A float16 tensor as the same values in float32 (raw bytes, or the uint16 bits protobuf keeps in int32Data). */
function widenedTensor(t: TensorProto): TensorProto {
  let bits: Uint16Array;
  if (t.rawData && t.rawData.length) {
    const raw = new Uint8Array(t.rawData).slice();
    bits = new Uint16Array(raw.buffer, 0, raw.byteLength >> 1);
  } else bits = Uint16Array.from(t.int32Data ?? []);
  const values = new Float32Array(bits.length);
  for (let k = 0; k < bits.length; k++) values[k] = halfToFloat(bits[k]!);
  return {
    name: t.name,
    dims: t.dims,
    dataType: DT.FLOAT,
    rawData: new Uint8Array(values.buffer),
    docString: t.docString,
  };
}

function widenAttribute(a: AttributeProto): boolean {
  if (a.t?.dataType === DT.FLOAT16) {
    a.t = widenedTensor(a.t);
    return true;
  }
  if (a.tensors?.some((t) => t.dataType === DT.FLOAT16)) {
    a.tensors = a.tensors.map((t) => (t.dataType === DT.FLOAT16 ? widenedTensor(t) : t));
    return true;
  }
  if (TYPE_ATTRIBUTES.has(a.name ?? '') && a.i !== undefined && a.i !== null && Number(String(a.i)) === DT.FLOAT16) {
    a.i = DT.FLOAT;
    return true;
  }
  return false;
}

/** The graph with no float16 left: weights, constants, casts and declarations in float32. */
export function widenedToFloat32(bytes: Uint8Array): Float16ExportResult {
  const opened = openHalf(bytes);
  if (!opened.ok) return opened;
  const { model, graph: g } = opened;
  const inputs = opened.inputs.map((i) => i.name ?? '');
  const outputs = opened.outputs.map((o) => o.name ?? '');
  let changed = false;
  g.initializer = (g.initializer ?? []).map((t) => {
    if (t.dataType !== DT.FLOAT16) return t;
    changed = true;
    return widenedTensor(t);
  });
  for (const n of g.node ?? []) for (const a of n.attribute ?? []) changed = widenAttribute(a) || changed;
  for (const vi of [...(g.input ?? []), ...(g.output ?? []), ...(g.valueInfo ?? [])])
    if (isHalf(vi)) {
      vi.type!.tensorType!.elemType = DT.FLOAT;
      changed = true;
    }
  if (!changed) return { ok: true, bytes, changed: false, inputs: [], outputs: [] };
  return { ok: true, bytes: onnx.ModelProto.encode(model).finish(), changed: true, inputs, outputs };
}
