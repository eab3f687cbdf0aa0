// Gives an ONNX graph exported for one image (`[1, ...]` inputs) a free batch axis, so that dynamic batching
// can run several images in one session call. The rewrite is conservative: it follows every tensor that
// carries the batch from the graph's inputs and refuses (returns the reason) at the first node whose meaning
// at batch N it cannot vouch for, so a model it cannot rewrite simply runs one image a call as before.
// What it changes: input and output dim 0 become `batch`; the value_info shapes (static 1s) are dropped; on
// batch-carrying tensors a Reshape's constant leading 1 becomes -1 (or 0, copy dim 0, when -1 is taken), a
// Slice of [0, 1) on axis 0 keeps the whole axis, a Resize's constant `sizes` take dim 0 from the input, and a
// TFJS-style batch gather (flatten to [H*W, C], Gather axis 0 on [K] indices, Reshape to [1, K, C]) becomes
// GatherND with batch_dims 1. At batch 1 every change computes exactly what the original graph did.
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
type Model = import('onnx-proto').onnx.ModelProto;
type Node = import('onnx-proto').onnx.INodeProto;
type TensorProto = import('onnx-proto').onnx.ITensorProto;

export const BATCH_DIM = 'batch';

export type BatchAxisResult =
  | { ok: true; bytes: Uint8Array; changed: boolean; notes: string[]; coupled?: string }
  | { ok: false; reason: string };

const INT64 = 7;
const INT64_MAX = 9223372036854775807n;

/** Ops that work on each batch row alone whatever their other inputs (elementwise, per-image spatial). */
const ROW_WISE = new Set([
  'Abs', 'Add', 'And', 'BatchNormalization', 'Cast', 'CastLike', 'Ceil', 'Clip', 'Conv', 'ConvInteger', 'ConvTranspose',
  'DequantizeLinear', 'Div', 'Dropout', 'Elu', 'Equal', 'Erf', 'Exp', 'Floor', 'Gelu', 'GlobalAveragePool', 'GlobalMaxPool',
  'Greater', 'GreaterOrEqual', 'HardSigmoid', 'HardSwish', 'Identity', 'InstanceNormalization', 'IsInf', 'IsNaN',
  'LeakyRelu', 'Less', 'LessOrEqual', 'Log', 'LpNormalization', 'MatMul', 'MatMulInteger', 'Max', 'MaxPool', 'AveragePool',
  'Mean', 'Min', 'Mish', 'Mod', 'Mul', 'Neg', 'Not', 'Or', 'PRelu', 'Pow', 'QLinearConv', 'QLinearMatMul', 'QuantizeLinear',
  'Reciprocal', 'Relu', 'Round', 'Selu', 'Shape', 'Sigmoid', 'Sign', 'Sin', 'Cos', 'Softplus', 'Softsign', 'Sqrt', 'Sub',
  'Sum', 'Tanh', 'ThresholdedRelu', 'Where', 'Xor', 'DepthToSpace', 'SpaceToDepth', 'LRN', 'Size',
  'DynamicQuantizeLinear',
]);

/** Ops that work on each row given an axis (attribute `axis`, default below) that is not 0. */
const AXIS_OPS: Record<string, number> = {
  Concat: NaN, Split: 0, Softmax: -1, LogSoftmax: -1, Hardmax: -1, ArgMax: 0, ArgMin: 0, TopK: -1, Flatten: 1,
  LayerNormalization: -1, CumSum: NaN, GatherElements: 0,
};

function int64s(t: TensorProto): bigint[] {
  if (t.rawData && t.rawData.length) {
    const raw = new Uint8Array(t.rawData);
    const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    return Array.from({ length: raw.byteLength / 8 }, (_, i) => dv.getBigInt64(i * 8, true));
  }
  return (t.int64Data ?? []).map((v) => BigInt(String(v)));
}

function int64Tensor(name: string, values: bigint[]): TensorProto {
  const arr = BigInt64Array.from(values);
  return { name, dims: [values.length], dataType: INT64, rawData: new Uint8Array(arr.buffer) };
}

const attr = (n: Node, name: string) => n.attribute?.find((a) => a.name === name);
const attrInt = (n: Node, name: string, dflt: number): number => {
  const a = attr(n, name);
  return a?.i === undefined || a.i === null ? dflt : Number(String(a.i));
};
const attrInts = (n: Node, name: string): number[] | undefined => attr(n, name)?.ints?.map((v) => Number(String(v)));

/**
 * The graph with a free batch axis (bytes unchanged when every input's dim 0 is already free), or why not.
 * `coupled` says when the rows still influence each other (per-tensor dynamic quantisation: a batch then
 * quantises with the range of all its images, which moves results slightly from one-at-a-time runs).
 */
export function withBatchAxis(bytes: Uint8Array): BatchAxisResult {
  let model: Model;
  try {
    model = onnx.ModelProto.decode(bytes);
  } catch (e) {
    return { ok: false, reason: `not an ONNX model (${(e as Error).message})` };
  }
  const g = model.graph;
  if (!g) return { ok: false, reason: 'the model has no graph' };
  const initNames = new Set((g.initializer ?? []).map((t) => t.name!));
  const inputs = (g.input ?? []).filter((i) => !initNames.has(i.name!));
  if (inputs.length === 0) return { ok: false, reason: 'the graph has no inputs' };
  const dim0 = (vi: import('onnx-proto').onnx.IValueInfoProto) => vi.type?.tensorType?.shape?.dim?.[0];
  let fixed = 0;
  for (const i of inputs) {
    const d = dim0(i);
    if (!d) return { ok: false, reason: `input ${i.name} has no declared shape` };
    if (d.dimParam) continue;
    if (Number(String(d.dimValue ?? 0)) !== 1) return { ok: false, reason: `input ${i.name}'s first axis is ${String(d.dimValue)}, not 1` };
    fixed++;
  }
  if (fixed === 0) return { ok: true, bytes, changed: false, notes: ['the inputs already have a free first axis'] };
  if (fixed !== inputs.length) return { ok: false, reason: 'some inputs have a free first axis and others a fixed one' };

  const consts = new Map<string, TensorProto>();
  for (const t of g.initializer ?? []) consts.set(t.name!, t);
  for (const n of g.node ?? []) {
    if (n.opType === 'Constant' && attr(n, 'value')?.t) consts.set(n.output![0]!, attr(n, 'value')!.t!);
  }
  const producer = new Map<string, Node>();
  for (const n of g.node ?? []) for (const o of n.output ?? []) producer.set(o, n);
  const carries = new Set(inputs.map((i) => i.name!));
  const notes: string[] = [];
  let coupled: string | undefined;
  let fresh = 0;
  const newInits: TensorProto[] = [];
  const newNodes = new Map<Node, Node[]>(); // nodes to insert before a node
  /** Shapes this rewrite made (already batch-free: visited again, they are left alone). */
  const ours = new Set<string>();
  const addConst = (stem: string, values: bigint[]) => {
    const name = `${stem}__batch${fresh++}`;
    const t = int64Tensor(name, values);
    newInits.push(t);
    consts.set(name, t);
    ours.add(name);
    return name;
  };
  const replacements = new Map<Node, Node>();

  for (const n of g.node ?? []) {
    const ins = n.input ?? [];
    const carried = ins.map((i) => i !== '' && carries.has(i));
    if (!carried.some(Boolean)) continue;
    const op = n.opType!;
    const where = `${op} node ${n.name || n.output?.[0]}`;
    const refuse = (why: string): BatchAxisResult => ({ ok: false, reason: `${where}: ${why}` });
    if (op === 'DynamicQuantizeLinear') coupled ??= 'per-tensor dynamic quantisation (DynamicQuantizeLinear) takes its range over the whole batch';
    if (ROW_WISE.has(op)) {
      // A row-wise op's other inputs (weights, scales) stay as they are.
    } else if (op in AXIS_OPS) {
      let axis = attrInt(n, 'axis', AXIS_OPS[op]!);
      if (op === 'CumSum') {
        const c = consts.get(ins[1] ?? '');
        if (!c) return refuse('its axis is not a constant');
        axis = Number(int64s(c)[0]);
      }
      if (Number.isNaN(axis)) return refuse('it has no axis attribute');
      if (axis === 0) return refuse('it works across the first axis');
      if (op === 'Flatten' && axis < 0) return refuse('a negative Flatten axis may fold the batch');
    } else if (op === 'Transpose') {
      const perm = attrInts(n, 'perm');
      if (!perm || perm[0] !== 0) return refuse('it moves the first axis');
    } else if (op === 'Squeeze' || op === 'Unsqueeze') {
      const axes = attrInts(n, 'axes') ?? (ins[1] ? (consts.get(ins[1]) ? int64s(consts.get(ins[1])!).map(Number) : undefined) : undefined);
      if (!axes) return refuse('its axes are not constant');
      if (axes.includes(0)) return refuse('it adds or removes the first axis');
      if (op === 'Squeeze' && axes.some((a) => a < 0)) return refuse('a negative squeeze axis may reach the first axis');
    } else if (op.startsWith('Reduce')) {
      const axes = attrInts(n, 'axes') ?? (ins[1] && consts.get(ins[1]) ? int64s(consts.get(ins[1])!).map(Number) : undefined);
      if (!axes || axes.length === 0 || axes.includes(0)) return refuse('it reduces over the first axis');
    } else if (op === 'Reshape') {
      if (!carried[0]) return refuse('only its shape depends on the input');
      const c = consts.get(ins[1] ?? '');
      const shape = c ? int64s(c) : [];
      if (!c) {
        notes.push(`${where}: shape computed in the graph, kept`);
      } else if (ours.has(ins[1]!)) {
        // Rewritten already (a batch gather's reshapes).
      } else if (attrInt(n, 'allowzero', 0) !== 0 && shape.includes(0n)) {
        return refuse('allowzero with a zero in its shape');
      } else if (shape[0] === 1n || shape[0] === 0n) {
        const next = [...shape];
        next[0] = shape.includes(-1n) ? 0n : -1n;
        n.input![1] = addConst(ins[1]!, next);
      } else {
      const gathered = batchGather(n, g.node ?? [], consts, producer);
      if (typeof gathered === 'string') return refuse(gathered);
      for (const [node, repl] of gathered.replace) replacements.set(node, repl);
      for (const [node, shapeVals] of gathered.reshapes) node.input![1] = addConst(node.input![1]!, shapeVals);
      notes.push(`${where}: a batch gather, rewritten as GatherND with batch_dims 1`);
      }
    } else if (op === 'Gather') {
      if (attrInt(n, 'axis', 0) === 0 && carried[0] && !replacements.has(n)) return refuse('it gathers along the first axis');
      if (replacements.has(n)) { /* rewritten by the batch gather above */ }
    } else if (op === 'GatherND') {
      if (!replacements.has(n) && attrInt(n, 'batch_dims', 0) < 1) return refuse('it indexes the first axis');
    } else if (op === 'Slice') {
      if (!carried[0]) return refuse('only its bounds depend on the input');
      const [starts, ends, axes] = [consts.get(ins[1] ?? ''), consts.get(ins[2] ?? ''), ins[3] ? consts.get(ins[3]) : undefined];
      if (!starts || !ends || (ins[3] && !axes)) return refuse('its bounds are not constant');
      const ax = axes ? int64s(axes).map(Number) : int64s(starts).map((_, i) => i);
      const k = ax.indexOf(0);
      const s = int64s(starts), e = int64s(ends);
      if (k >= 0) {
      if (s[k] !== 0n || e[k] < 1n) return refuse('it slices the first axis');
      if (ins[4]) {
        const steps = consts.get(ins[4]);
        if (!steps || int64s(steps)[k] !== 1n) return refuse('it steps along the first axis');
      }
      e[k] = INT64_MAX;
      n.input![2] = addConst(ins[2]!, e);
      }
    } else if (op === 'Resize' || op === 'Upsample') {
      if (!carried[0]) return refuse('only its sizes depend on the input');
      const scalesName = op === 'Upsample' ? ins[1] : ins[2];
      const sizesName = op === 'Resize' ? ins[3] : undefined;
      if (sizesName) {
        const c = consts.get(sizesName);
        const sizes = c ? int64s(c) : [];
        if (!c) notes.push(`${where}: sizes computed in the graph, kept`);
        else {
        if (sizes[0] !== 1n) return refuse('its sizes change the first axis');
        // sizes = concat(shape(x)[0:1], the constant's other sizes)
        const shapeOut = `${n.name || n.output![0]}__batch_shape${fresh}`;
        const firstOut = `${shapeOut}_0`;
        const sizesOut = `${shapeOut}_sizes`;
        const zero = addConst('zero', [0n]), one = addConst('one', [1n]), rest = addConst(sizesName, sizes.slice(1));
        newNodes.set(n, [
          { opType: 'Shape', input: [ins[0]!], output: [shapeOut], name: `${shapeOut}_node` },
          { opType: 'Slice', input: [shapeOut, zero, one, zero], output: [firstOut], name: `${firstOut}_node` },
          { opType: 'Concat', input: [firstOut, rest], output: [sizesOut], name: `${sizesOut}_node`, attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }] },
        ]);
        n.input![3] = sizesOut;
        }
      } else if (scalesName) {
        const c = consts.get(scalesName);
        if (!c) return refuse('its scales are not constant');
        const data = c.rawData?.length ? new Float32Array(new Uint8Array(c.rawData).slice().buffer) : Float32Array.from(c.floatData ?? []);
        if (data[0] !== 1) return refuse('it scales the first axis');
      }
    } else if (op === 'Pad') {
      const pads = attrInts(n, 'pads') ?? (ins[1] && consts.get(ins[1]) ? int64s(consts.get(ins[1])!).map(Number) : undefined);
      if (!pads) return refuse('its pads are not constant');
      if (pads[0] !== 0 || pads[pads.length / 2] !== 0) return refuse('it pads the first axis');
      if (ins[3]) return refuse('it pads chosen axes');
    } else if (op === 'Expand' || op === 'Tile') {
      if (!carried[0]) return refuse('only its shape depends on the input');
      const c = consts.get(ins[1] ?? '');
      if (!c) return refuse('its shape is not constant');
      if (int64s(c)[0] !== 1n) return refuse('it repeats the first axis');
    } else if (op === 'Gemm') {
      if (attrInt(n, 'transA', 0) !== 0 || !carried[0] || carried[1] || carried[2]) return refuse('its rows are not the batch');
    } else {
      return refuse('an operator the batch rewrite does not know');
    }
    // A shape's value depends on the batch but its first axis is the rank: what is computed from it is
    // checked where it is used (a Reshape with a computed shape is kept as it is).
    if (op !== 'Shape' && op !== 'Size') for (const o of n.output ?? []) carries.add(o);
  }

  // Apply node replacements and insertions, then the new declared shapes.
  const nodes: Node[] = [];
  for (const n of g.node ?? []) {
    nodes.push(...(newNodes.get(n) ?? []));
    nodes.push(replacements.get(n) ?? n);
  }
  g.node = nodes;
  // Constants the rewrite replaced and nothing else reads are dropped (ONNX Runtime warns of each otherwise).
  const used = new Set(nodes.flatMap((n) => n.input ?? []));
  for (const o of g.output ?? []) used.add(o.name!);
  for (const i of g.input ?? []) used.add(i.name!);
  g.initializer = [...(g.initializer ?? []), ...newInits].filter((t) => used.has(t.name!));
  for (const vi of [...inputs, ...(g.output ?? [])]) {
    const d = dim0(vi);
    if (d && !d.dimParam) { d.dimValue = undefined as never; d.dimParam = BATCH_DIM; }
  }
  const outputs = new Set((g.output ?? []).map((o) => o.name!));
  for (const o of outputs) if (!carries.has(o)) return { ok: false, reason: `output ${o} does not depend on the input's batch` };
  g.valueInfo = [];
  const out = onnx.ModelProto.encode(model).finish();
  return { ok: true, bytes: out, changed: true, notes, ...(coupled ? { coupled } : {}) };
}

/**
 * A TFJS batch gather on one image: Reshape(x [1, ..., C] -> [M, C]) -> Gather(axis 0, Reshape(idx [1, K] -> [K]))
 * -> Reshape([1, K, C]). At batch N it is GatherND(x as [N, M, C], idx as [N, K, 1], batch_dims 1) -> [N, K, C].
 * `flat` is the first Reshape; answers the nodes to replace and the Reshapes' new shapes, or why not.
 */
function batchGather(flat: Node, nodes: Node[], consts: Map<string, TensorProto>, producer: Map<string, Node>):
  { replace: Map<Node, Node>; reshapes: Map<Node, bigint[]> } | string {
  const flatOut = flat.output![0]!;
  const users = nodes.filter((u) => u.input?.includes(flatOut));
  const gather = users.length === 1 && users[0]!.opType === 'Gather' && users[0]!.input![0] === flatOut && attrInt(users[0]!, 'axis', 0) === 0 ? users[0]! : undefined;
  if (!gather) return 'its constant shape folds the first axis into another';
  const flatShape = int64s(consts.get(flat.input![1]!)!);
  if (flatShape.length !== 2 || flatShape.some((v) => v < 1n)) return 'a batch gather over a shape other than [rows, columns]';
  const idxReshape = producer.get(gather.input![1]!);
  const idxShape = idxReshape?.opType === 'Reshape' ? consts.get(idxReshape.input![1]!) : undefined;
  if (!idxReshape || !idxShape || int64s(idxShape).length !== 1) return 'a batch gather whose indices are not a reshaped [1, K]';
  const K = int64s(idxShape)[0]!;
  const after = nodes.filter((u) => u.input?.includes(gather.output![0]!));
  const back = after.length === 1 && after[0]!.opType === 'Reshape' ? after[0]! : undefined;
  const backShape = back ? consts.get(back.input![1]!) : undefined;
  const bs = backShape ? int64s(backShape) : [];
  if (!back || bs.length !== 3 || bs[0] !== 1n || bs[1] !== K || bs[2] !== flatShape[1]) return 'a batch gather not reshaped back to [1, K, C]';
  const replace = new Map<Node, Node>();
  replace.set(gather, {
    opType: 'GatherND', name: gather.name, input: [...gather.input!], output: [...gather.output!],
    attribute: [{ name: 'batch_dims', type: onnx.AttributeProto.AttributeType.INT, i: 1 }],
  });
  const reshapes = new Map<Node, bigint[]>([
    [flat, [-1n, flatShape[0]!, flatShape[1]!]],
    [idxReshape, [-1n, K, 1n]],
    [back, [-1n, K, flatShape[1]!]],
  ]);
  return { replace, reshapes };
}
