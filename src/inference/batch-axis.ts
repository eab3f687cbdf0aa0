// Gives an ONNX graph exported for one image (`[1, ...]` inputs) a free batch axis, so that dynamic batching
// can run several images in one session call. The rewrite is conservative: it follows every tensor that
// carries the batch from the graph's inputs and refuses (returns the reason) at the first node whose meaning
// at batch N it cannot vouch for, so a model it cannot rewrite simply runs one image a call as before.
// What it changes: input and output dim 0 become `batch`; the value_info shapes (static 1s) are dropped; on
// batch-carrying tensors a Reshape's constant leading 1 becomes -1 (or 0, copy dim 0, when -1 is taken), a
// Slice of [0, 1) on axis 0 keeps the whole axis, a Resize's constant `sizes` take dim 0 from the input, and a
// TFJS-style batch gather (flatten to [H*W, C], Gather axis 0 on [K] indices, Reshape to [1, K, C]) becomes
// GatherND with batch_dims 1, and per-tensor dynamic int8 quantisation is made per image (see
// perImageQuantisation). At batch 1 every change computes exactly what the original graph did.
import onnxProto from 'onnx-proto';
import { attr, attrInt, attrInts, decodeModel, int64s, int64Tensor } from './onnx-tensors.js';

const { onnx } = onnxProto;
type Node = import('onnx-proto').onnx.INodeProto;
type TensorProto = import('onnx-proto').onnx.ITensorProto;

export const BATCH_DIM = 'batch';

export type BatchAxisResult =
  | { ok: true; bytes: Uint8Array; changed: boolean; notes: string[]; coupled?: string }
  | { ok: false; reason: string };

const INT64_MAX = 9223372036854775807n;

/** Ops that work on each batch row alone whatever their other inputs (elementwise, per-image spatial). */
const ROW_WISE = new Set([
  'Abs',
  'Add',
  'And',
  'BatchNormalization',
  'Cast',
  'CastLike',
  'Ceil',
  'Clip',
  'Conv',
  'ConvInteger',
  'ConvTranspose',
  'DequantizeLinear',
  'Div',
  'Dropout',
  'Elu',
  'Equal',
  'Erf',
  'Exp',
  'Floor',
  'Gelu',
  'GlobalAveragePool',
  'GlobalMaxPool',
  'Greater',
  'GreaterOrEqual',
  'HardSigmoid',
  'HardSwish',
  'Identity',
  'InstanceNormalization',
  'IsInf',
  'IsNaN',
  'LeakyRelu',
  'Less',
  'LessOrEqual',
  'Log',
  'LpNormalization',
  'MatMul',
  'MatMulInteger',
  'Max',
  'MaxPool',
  'AveragePool',
  'Mean',
  'Min',
  'Mish',
  'Mod',
  'Mul',
  'Neg',
  'Not',
  'Or',
  'PRelu',
  'Pow',
  'QLinearConv',
  'QLinearMatMul',
  'QuantizeLinear',
  'Reciprocal',
  'Relu',
  'Round',
  'Selu',
  'Shape',
  'Sigmoid',
  'Sign',
  'Sin',
  'Cos',
  'Softplus',
  'Softsign',
  'Sqrt',
  'Sub',
  'Sum',
  'Tanh',
  'ThresholdedRelu',
  'Where',
  'Xor',
  'DepthToSpace',
  'SpaceToDepth',
  'LRN',
  'Size',
  'DynamicQuantizeLinear',
]);

/** Ops that work on each row given an axis (attribute `axis`, default below) that is not 0. */
const AXIS_OPS: Record<string, number> = {
  Concat: NaN,
  Split: 0,
  Softmax: -1,
  LogSoftmax: -1,
  Hardmax: -1,
  ArgMax: 0,
  ArgMin: 0,
  TopK: -1,
  Flatten: 1,
  LayerNormalization: -1,
  CumSum: NaN,
  GatherElements: 0,
};

/**
 * The graph with a free batch axis (bytes unchanged when every input's dim 0 is already free), or why not.
 * `coupled` says when the rows still influence each other (per-tensor dynamic quantisation: a batch then
 * quantises with the range of all its images, which moves results slightly from one-at-a-time runs).
 */
export function withBatchAxis(bytes: Uint8Array): BatchAxisResult {
  const decoded = decodeModel(bytes);
  if (!decoded.ok) return decoded;
  const { model, graph: g } = decoded;
  const initNames = new Set((g.initializer ?? []).map((t) => t.name!));
  const inputs = (g.input ?? []).filter((i) => !initNames.has(i.name!));
  if (inputs.length === 0) return { ok: false, reason: 'the graph has no inputs' };
  const dim0 = (vi: import('onnx-proto').onnx.IValueInfoProto) => vi.type?.tensorType?.shape?.dim?.[0];
  let fixed = 0;
  for (const i of inputs) {
    const d = dim0(i);
    if (!d) return { ok: false, reason: `input ${i.name} has no declared shape` };
    if (d.dimParam) continue;
    if (Number(String(d.dimValue ?? 0)) !== 1)
      return { ok: false, reason: `input ${i.name}'s first axis is ${String(d.dimValue)}, not 1` };
    fixed++;
  }
  if (fixed === 0) return { ok: true, bytes, changed: false, notes: ['the inputs already have a free first axis'] };
  if (fixed !== inputs.length)
    return { ok: false, reason: 'some inputs have a free first axis and others a fixed one' };

  const consts = new Map<string, TensorProto>();
  for (const t of g.initializer ?? []) consts.set(t.name!, t);
  for (const n of g.node ?? []) {
    if (n.opType === 'Constant' && attr(n, 'value')?.t) consts.set(n.output![0]!, attr(n, 'value')!.t!);
  }
  const carries = new Set(inputs.map((i) => i.name!));
  const notes: string[] = [];
  let coupled: string | undefined;
  let fresh = 0;
  const newInits: TensorProto[] = [];
  const newNodes = new Map<Node, Node[]>(); // nodes to insert before a node
  /** Shapes this rewrite made (already batch-free: visited again, they are left alone). */
  const ours = new Set<string>();
  const addInit = (stem: string, t: TensorProto) => {
    const name = `${stem}__batch${fresh++}`;
    newInits.push({ ...t, name });
    consts.set(name, { ...t, name });
    ours.add(name);
    return name;
  };
  const addConst = (stem: string, values: bigint[]) => addInit(stem, int64Tensor(stem, values));
  const replacements = new Map<Node, Node>();

  const opset = Number(String(model.opsetImport?.find((o) => !o.domain)?.version ?? 0));
  const perImage = perImageQuantisation(g, consts, opset, addInit, addConst);
  if (typeof perImage === 'string') {
    if ((g.node ?? []).some((n) => n.opType === 'DynamicQuantizeLinear'))
      notes.push(`dynamic quantisation kept per tensor: ${perImage}`);
  } else if (perImage > 0) {
    notes.push(`${perImage} DynamicQuantizeLinear quantise each image with its own range`);
  }
  const producer = new Map<string, Node>();
  for (const n of g.node ?? []) for (const o of n.output ?? []) producer.set(o, n);

  for (const n of g.node ?? []) {
    const ins = n.input ?? [];
    const carried = ins.map((i) => i !== '' && carries.has(i));
    if (!carried.some(Boolean)) continue;
    const op = n.opType!;
    const where = `${op} node ${n.name || n.output?.[0]}`;
    const refuse = (why: string): BatchAxisResult => ({ ok: false, reason: `${where}: ${why}` });
    if (op === 'DynamicQuantizeLinear')
      coupled ??= 'per-tensor dynamic quantisation (DynamicQuantizeLinear) takes its range over the whole batch';
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
      const axes =
        attrInts(n, 'axes') ??
        (ins[1] ? (consts.get(ins[1]) ? int64s(consts.get(ins[1])!).map(Number) : undefined) : undefined);
      if (!axes) return refuse('its axes are not constant');
      if (axes.includes(0)) return refuse('it adds or removes the first axis');
      if (op === 'Squeeze' && axes.some((a) => a < 0))
        return refuse('a negative squeeze axis may reach the first axis');
    } else if (op.startsWith('Reduce')) {
      const axes =
        attrInts(n, 'axes') ?? (ins[1] && consts.get(ins[1]) ? int64s(consts.get(ins[1])!).map(Number) : undefined);
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
      if (attrInt(n, 'axis', 0) === 0 && carried[0] && !replacements.has(n))
        return refuse('it gathers along the first axis');
      if (replacements.has(n)) {
        /* rewritten by the batch gather above */
      }
    } else if (op === 'GatherND') {
      if (!replacements.has(n) && attrInt(n, 'batch_dims', 0) < 1) return refuse('it indexes the first axis');
    } else if (op === 'Slice') {
      if (!carried[0]) return refuse('only its bounds depend on the input');
      const [starts, ends, axes] = [
        consts.get(ins[1] ?? ''),
        consts.get(ins[2] ?? ''),
        ins[3] ? consts.get(ins[3]) : undefined,
      ];
      if (!starts || !ends || (ins[3] && !axes)) return refuse('its bounds are not constant');
      const ax = axes ? int64s(axes).map(Number) : int64s(starts).map((_, i) => i);
      const k = ax.indexOf(0);
      const s = int64s(starts),
        e = int64s(ends);
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
          const zero = addConst('zero', [0n]),
            one = addConst('one', [1n]),
            rest = addConst(sizesName, sizes.slice(1));
          newNodes.set(n, [
            { opType: 'Shape', input: [ins[0]!], output: [shapeOut], name: `${shapeOut}_node` },
            { opType: 'Slice', input: [shapeOut, zero, one, zero], output: [firstOut], name: `${firstOut}_node` },
            {
              opType: 'Concat',
              input: [firstOut, rest],
              output: [sizesOut],
              name: `${sizesOut}_node`,
              attribute: [{ name: 'axis', type: onnx.AttributeProto.AttributeType.INT, i: 0 }],
            },
          ]);
          n.input![3] = sizesOut;
        }
      } else if (scalesName) {
        const c = consts.get(scalesName);
        if (!c) return refuse('its scales are not constant');
        const data = c.rawData?.length
          ? new Float32Array(new Uint8Array(c.rawData).slice().buffer)
          : Float32Array.from(c.floatData ?? []);
        if (data[0] !== 1) return refuse('it scales the first axis');
      }
    } else if (op === 'Pad') {
      const pads =
        attrInts(n, 'pads') ?? (ins[1] && consts.get(ins[1]) ? int64s(consts.get(ins[1])!).map(Number) : undefined);
      if (!pads) return refuse('its pads are not constant');
      if (pads[0] !== 0 || pads[pads.length / 2] !== 0) return refuse('it pads the first axis');
      if (ins[3]) return refuse('it pads chosen axes');
    } else if (op === 'Expand' || op === 'Tile') {
      if (!carried[0]) return refuse('only its shape depends on the input');
      const c = consts.get(ins[1] ?? '');
      if (!c) return refuse('its shape is not constant');
      if (int64s(c)[0] !== 1n) return refuse('it repeats the first axis');
    } else if (op === 'Gemm') {
      if (attrInt(n, 'transA', 0) !== 0 || !carried[0] || carried[1] || carried[2])
        return refuse('its rows are not the batch');
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
    if (d && !d.dimParam) {
      d.dimValue = undefined as never;
      d.dimParam = BATCH_DIM;
    }
  }
  const outputs = new Set((g.output ?? []).map((o) => o.name!));
  for (const o of outputs)
    if (!carries.has(o)) return { ok: false, reason: `output ${o} does not depend on the input's batch` };
  g.valueInfo = [];
  const out = onnx.ModelProto.encode(model).finish();
  return { ok: true, bytes: out, changed: true, notes, ...(coupled ? { coupled } : {}) };
}

const INT = onnx.AttributeProto.AttributeType.INT;
const FLOAT = 1,
  UINT8 = 2,
  INT32 = 6;

/**
 * Per-tensor dynamic int8 (ONNX Runtime's quantize_dynamic: DynamicQuantizeLinear -> ConvInteger -> Cast ->
 * Mul by x_scale * w_scale) made per image, so the images of a batch do not change each other's results:
 * each image's range (ReduceMin / ReduceMax over its own axes) gives its scale and zero point exactly as
 * DynamicQuantizeLinear computes them, QuantizeLinear quantises along axis 0 with them, and ConvInteger runs
 * with zero point 0 less zp * ConvInteger(ones): the same integers as with the image's zero point, padding
 * included (padding reads as the zero point there and as 0 here, and `ones` is 0 in the padding too). The
 * `ones` have a constant shape where the graph's value_info gives it, so ONNX Runtime folds that convolution
 * when the session loads. Answers how many it rewrote, or why none (then the graph is left as it was).
 */
function perImageQuantisation(
  g: import('onnx-proto').onnx.IGraphProto,
  consts: Map<string, TensorProto>,
  opset: number,
  addInit: (stem: string, t: TensorProto) => string,
  addConst: (stem: string, v: bigint[]) => string,
): number | string {
  const nodes = g.node ?? [];
  const dqls = nodes.filter((n) => n.opType === 'DynamicQuantizeLinear');
  if (dqls.length === 0) return 0;
  if (opset < 13) return `opset ${opset} has no per-axis QuantizeLinear`;
  const users = (name: string) => nodes.filter((n) => n.input?.includes(name));
  const shapes = new Map<string, number[]>();
  for (const vi of g.valueInfo ?? []) {
    const dims = vi.type?.tensorType?.shape?.dim;
    if (dims?.every((d) => d.dimValue !== undefined && d.dimValue !== null && !d.dimParam))
      shapes.set(
        vi.name!,
        dims.map((d) => Number(String(d.dimValue))),
      );
  }
  const isScalar = (t?: TensorProto) => !!t && (t.dims ?? []).reduce((a: number, b) => a * Number(String(b)), 1) === 1;
  // Check every one first: all or none.
  for (const q of dqls) {
    const [y, scale, zp] = q.output!;
    const convs = users(y!);
    if (
      convs.length === 0 ||
      convs.some(
        (c) => c.opType !== 'ConvInteger' || c.input![0] !== y || c.input![2] !== zp || !consts.has(c.input![1]!),
      )
    )
      return `${q.name}: its output feeds something other than ConvInteger's input`;
    if (users(zp!).some((c) => !convs.includes(c))) return `${q.name}: its zero point is read elsewhere`;
    for (const m of users(scale!)) {
      const other = m.input!.find((i) => i !== scale);
      if (m.opType !== 'Mul' || !isScalar(consts.get(other ?? '')))
        return `${q.name}: its scale is read other than times a constant scalar`;
    }
  }
  const f32 = (v: number): TensorProto => ({
    dims: [],
    dataType: FLOAT,
    rawData: new Uint8Array(Float32Array.of(v).buffer),
  });
  const zero = addInit('dq_zero', f32(0)),
    one = addInit('dq_one', f32(1)),
    q255 = addInit('dq_255', f32(255));
  const after = new Map<Node, Node[]>();
  const before = new Map<Node, Node[]>();
  for (const q of dqls) {
    const [y, scale] = q.output!;
    const x = q.input![0]!;
    const convs = users(y!);
    const rank = (consts.get(convs[0]!.input![1]!)!.dims ?? []).length;
    const axes = Array.from({ length: rank - 1 }, (_, i) => BigInt(i + 1));
    const id = `${q.name || y}__per_image`;
    const reduce = (op: string, out: string): Node =>
      opset >= 18
        ? {
            opType: op,
            name: `${out}_node`,
            input: [x, addConst('dq_axes', axes)],
            output: [out],
            attribute: [{ name: 'keepdims', type: INT, i: 1 }],
          }
        : {
            opType: op,
            name: `${out}_node`,
            input: [x],
            output: [out],
            attribute: [
              { name: 'axes', type: onnx.AttributeProto.AttributeType.INTS, ints: axes.map(Number) },
              { name: 'keepdims', type: INT, i: 1 },
            ],
          };
    const n = (opType: string, input: string[], out: string, attribute: Node['attribute'] = []): Node => ({
      opType,
      name: `${out}_node`,
      input,
      output: [out],
      attribute,
    });
    const cast = (to: number) => [{ name: 'to', type: INT, i: to }];
    const scale4 = `${id}_scale4`,
      zpf = `${id}_zpf`,
      zp4 = `${id}_zp_i32`;
    const made: Node[] = [
      reduce('ReduceMin', `${id}_min`),
      reduce('ReduceMax', `${id}_max`),
      n('Min', [`${id}_min`, zero], `${id}_min0`),
      n('Max', [`${id}_max`, zero], `${id}_max0`),
      n('Sub', [`${id}_max0`, `${id}_min0`], `${id}_range`),
      n('Div', [`${id}_range`, q255], `${id}_rscale`),
      n('Equal', [`${id}_max0`, `${id}_min0`], `${id}_flat`),
      n('Where', [`${id}_flat`, one, `${id}_rscale`], scale4),
      n('Div', [`${id}_min0`, scale4], `${id}_mins`),
      n('Sub', [zero, `${id}_mins`], `${id}_zp0`),
      n('Clip', [`${id}_zp0`, zero, q255], `${id}_zpc`),
      n('Round', [`${id}_zpc`], zpf),
      n('Reshape', [scale4, addConst('dq_flat', [-1n])], `${id}_scale1`),
      n('Cast', [zpf], `${id}_zpu8_4`, cast(UINT8)),
      n('Reshape', [`${id}_zpu8_4`, addConst('dq_flat', [-1n])], `${id}_zp1`),
      n('QuantizeLinear', [x, `${id}_scale1`, `${id}_zp1`], y!, [{ name: 'axis', type: INT, i: 0 }]),
      n('Cast', [zpf], zp4, cast(INT32)),
    ];
    before.set(q, made);
    for (const m of users(scale!)) m.input = m.input!.map((i) => (i === scale ? scale4 : i));
    const xShape = shapes.get(x);
    for (const c of convs) {
      const out = c.output![0]!;
      const raw = `${out}__raw`;
      const w = c.input![1]!,
        wzp = c.input![3] ?? '';
      let onesShape: string;
      const extra: Node[] = [];
      if (xShape && xShape.length === rank) {
        onesShape = addConst('dq_ones_shape', [1n, ...xShape.slice(1).map(BigInt)]);
      } else {
        // The shape from the input itself: [1, the rest of x's shape].
        onesShape = `${out}__ones_shape`;
        extra.push(
          n('Shape', [x], `${out}__xshape`),
          n(
            'Slice',
            [`${out}__xshape`, addConst('dq_s', [1n]), addConst('dq_e', [BigInt(rank)]), addConst('dq_a', [0n])],
            `${out}__rest`,
          ),
          n('Concat', [addConst('dq_one_dim', [1n]), `${out}__rest`], onesShape, [{ name: 'axis', type: INT, i: 0 }]),
        );
      }
      const onesValue: TensorProto = { dims: [1], dataType: UINT8, rawData: Uint8Array.of(1) };
      extra.push(
        {
          opType: 'ConstantOfShape',
          name: `${out}__ones_node`,
          input: [onesShape],
          output: [`${out}__ones`],
          attribute: [{ name: 'value', type: onnx.AttributeProto.AttributeType.TENSOR, t: onesValue }],
        },
        {
          opType: 'ConvInteger',
          name: `${out}__count_node`,
          input: [`${out}__ones`, w, '', ...(wzp ? [wzp] : [])],
          output: [`${out}__count`],
          attribute: c.attribute,
        },
        n('Mul', [`${out}__count`, zp4], `${out}__offset`),
        n('Sub', [raw, `${out}__offset`], out),
      );
      c.input = [c.input![0]!, w, '', ...(wzp ? [wzp] : [])];
      c.output = [raw];
      after.set(c, extra);
    }
  }
  const next: Node[] = [];
  for (const node of nodes) {
    if (before.has(node)) {
      next.push(...before.get(node)!);
      continue;
    } // the DynamicQuantizeLinear itself goes
    next.push(node, ...(after.get(node) ?? []));
  }
  g.node = next;
  return dqls.length;
}

/**
 * A TFJS batch gather on one image: Reshape(x [1, ..., C] -> [M, C]) -> Gather(axis 0, Reshape(idx [1, K] -> [K]))
 * -> Reshape([1, K, C]). At batch N it is GatherND(x as [N, M, C], idx as [N, K, 1], batch_dims 1) -> [N, K, C].
 * `flat` is the first Reshape; answers the nodes to replace and the Reshapes' new shapes, or why not.
 */
function batchGather(
  flat: Node,
  nodes: Node[],
  consts: Map<string, TensorProto>,
  producer: Map<string, Node>,
): { replace: Map<Node, Node>; reshapes: Map<Node, bigint[]> } | string {
  const flatOut = flat.output![0]!;
  const users = nodes.filter((u) => u.input?.includes(flatOut));
  const gather =
    users.length === 1 &&
    users[0]!.opType === 'Gather' &&
    users[0]!.input![0] === flatOut &&
    attrInt(users[0]!, 'axis', 0) === 0
      ? users[0]!
      : undefined;
  if (!gather) return 'its constant shape folds the first axis into another';
  const flatShape = int64s(consts.get(flat.input![1]!)!);
  if (flatShape.length !== 2 || flatShape.some((v) => v < 1n))
    return 'a batch gather over a shape other than [rows, columns]';
  const idxReshape = producer.get(gather.input![1]!);
  const idxShape = idxReshape?.opType === 'Reshape' ? consts.get(idxReshape.input![1]!) : undefined;
  if (!idxReshape || !idxShape || int64s(idxShape).length !== 1)
    return 'a batch gather whose indices are not a reshaped [1, K]';
  const K = int64s(idxShape)[0]!;
  const after = nodes.filter((u) => u.input?.includes(gather.output![0]!));
  const back = after.length === 1 && after[0]!.opType === 'Reshape' ? after[0]! : undefined;
  const backShape = back ? consts.get(back.input![1]!) : undefined;
  const bs = backShape ? int64s(backShape) : [];
  if (!back || bs.length !== 3 || bs[0] !== 1n || bs[1] !== K || bs[2] !== flatShape[1])
    return 'a batch gather not reshaped back to [1, K, C]';
  const replace = new Map<Node, Node>();
  replace.set(gather, {
    opType: 'GatherND',
    name: gather.name,
    input: [...gather.input!],
    output: [...gather.output!],
    attribute: [{ name: 'batch_dims', type: onnx.AttributeProto.AttributeType.INT, i: 1 }],
  });
  const reshapes = new Map<Node, bigint[]>([
    [flat, [-1n, flatShape[0]!, flatShape[1]!]],
    [idxReshape, [-1n, K, 1n]],
    [back, [-1n, K, flatShape[1]!]],
  ]);
  return { replace, reshapes };
}
