// A float32 graph rewritten to run in float16 on a GPU, for callers that change nothing: its inputs and outputs
// stay float32 (a Cast to float16 after each float input its float16 part reads, one back before each output).
// onnxruntime-node passes the CUDA and TensorRT providers nothing but a device id, so FP16 cannot be asked of
// them from JavaScript; the graph itself must be in float16.
// What becomes float16: float initialisers and Constant values (finite values beyond float16's range clamped to
// +-65504, and counted), the float tensors of the operators on an allowlist that the CUDA provider runs in
// float16 and that are numerically safe there, and their value_info; a Cast to FLOAT all of whose readers are in
// the float16 part casts to FLOAT16 instead. Everything else is kept float32 with Casts around it, and
// listed in `kept`: an operator not on the list (an unknown one too: allowlist, conservative), one of a custom
// domain, one that ranks or compares scores and boxes (TopK, NonMaxSuppression, RoiAlign), one prone to
// overflow (Exp, Pow, ReduceSum, ...), and every operator that computes in float with shapes, sizes or indices:
// a float made from an int32/int64 (Cast of a Shape or of TopK's indices, Range, ConstantOfShape) and whatever
// is computed from it, so box coordinates stay exact past 2048 and a computed size never rounds. Resize's and
// Upsample's roi and scales stay float32 beside a float16 image.
// It refuses (says why) a graph it cannot vouch for: quantised arithmetic (ConvInteger, QuantizeLinear, ...:
// int8 is left as it was exported, and an int32 sum cast to float16 would overflow), control flow with
// subgraphs, weights stored outside the file, and a graph none of whose nodes would run in float16.
// ONNX Runtime on the CPU runs the result too: for a float16 node without a CPU kernel it casts around a
// float32 one, so a GPU's float16 answers can be checked here; `auto` keeps the float32 graph on the CPU.
import onnxProto from 'onnx-proto';
import type { RewriteMode } from './graph-rewrite-mode.js';
import { attr, castNode, decodeModel, DT, floats } from './onnx-tensors.js';

const { onnx } = onnxProto;
type Node = import('onnx-proto').onnx.INodeProto;
type TensorProto = import('onnx-proto').onnx.ITensorProto;

/**
 * When sessions load the float16 graph: always, never, or (auto) on a GPU provider; on the CPU float16 is slower
 * (ONNX Runtime casts around most nodes).
 */
export type Fp16Mode = RewriteMode;

/** A node left in float32, and why. */
export interface KeptNode {
  node: string;
  op: string;
  why: string;
}

export type Fp16Result =
  | {
      ok: true;
      bytes: Uint8Array;
      /** Nodes that read or write floats and still run in float32. */
      kept: KeptNode[];
      /** Nodes that run in float16. */
      half: number;
      /** Finite weights and constants beyond float16's range, clamped to +-65504. */
      clamped: number;
    }
  | { ok: false; reason: string };

const { FLOAT, UINT16, INT16, INT32, INT64, STRING, BOOL, FLOAT16, UINT32, UINT64 } = DT;
/** Integer types that carry shapes, sizes and indices (8-bit ones carry pixels and quantised values). */
const INDEX_TYPES = new Set<number>([INT64, INT32, UINT64, UINT32, INT16, UINT16]);

/** Operators the CUDA provider runs in float16 whose results float16 keeps close: the float16 part's members. */
const HALF_OPS = new Set([
  'Abs',
  'Add',
  'AveragePool',
  'BatchNormalization',
  'Cast',
  'Ceil',
  'Clip',
  'Concat',
  'Conv',
  'ConvTranspose',
  'DepthToSpace',
  'Div',
  'Dropout',
  'Elu',
  'Equal',
  'Erf',
  'Expand',
  'Flatten',
  'Floor',
  'Gather',
  'GatherElements',
  'GatherND',
  'Gemm',
  'GlobalAveragePool',
  'GlobalMaxPool',
  'Greater',
  'GreaterOrEqual',
  'HardSigmoid',
  'HardSwish',
  'Identity',
  'InstanceNormalization',
  'LayerNormalization',
  'LeakyRelu',
  'Less',
  'LessOrEqual',
  'MatMul',
  'Max',
  'MaxPool',
  'Min',
  'Mul',
  'Neg',
  'Pad',
  'PRelu',
  'Relu',
  'Reshape',
  'Resize',
  'Round',
  'Selu',
  'Shape',
  'Sigmoid',
  'Size',
  'Slice',
  'Softmax',
  'SpaceToDepth',
  'Split',
  'Sqrt',
  'Squeeze',
  'Sub',
  'Sum',
  'Tanh',
  'Tile',
  'Transpose',
  'Unsqueeze',
  'Upsample',
  'Where',
]);

/** Why a known operator stays float32 (any other operator not in HALF_OPS: not known to run in float16). */
const KEEP_WHY: Record<string, string> = {
  TopK: 'it ranks scores (float16 ties reorder them)',
  NonMaxSuppression: 'it compares boxes and thresholds',
  RoiAlign: 'it samples at box coordinates',
  Einsum: 'no float16 kernel in the CUDA provider',
  Range: 'it computes sizes',
  ConstantOfShape: 'it makes a shape-sized tensor',
  Exp: 'float16 overflows above e^11',
  Pow: 'float16 overflows',
  Log: 'float16 loses its small inputs',
  Reciprocal: 'float16 overflows on small inputs',
  ReduceSum: 'a float16 sum overflows',
  ReduceSumSquare: 'a float16 sum overflows',
  ReduceL2: 'a float16 sum overflows',
  ReduceLogSumExp: 'float16 overflows',
  ReduceProd: 'a float16 product overflows',
  ReduceMean: 'a float16 sum overflows',
  CumSum: 'a float16 sum overflows',
  Softplus: 'float16 overflows',
};

/** Inputs that stay float32 on a float16 node (coordinates and scale factors). */
const FLOAT32_INPUTS: Record<string, number[]> = { Resize: [1, 2], Upsample: [1] };

/** Quantised arithmetic: a graph with any of these is refused. */
const QUANTISED = new Set([
  'ConvInteger',
  'MatMulInteger',
  'DynamicQuantizeLinear',
  'QuantizeLinear',
  'DequantizeLinear',
  'QLinearConv',
  'QLinearMatMul',
  'QLinearAdd',
  'QLinearMul',
]);

const BOOL_OUT = new Set([
  'Equal',
  'Less',
  'Greater',
  'LessOrEqual',
  'GreaterOrEqual',
  'Not',
  'And',
  'Or',
  'Xor',
  'IsNaN',
  'IsInf',
]);
const INT64_OUT = new Set(['Shape', 'Size', 'NonZero', 'ArgMax', 'ArgMin', 'NonMaxSuppression']);
/** Operators whose outputs have the type of their first input (apart from index outputs, below). */
const SAME_AS_FIRST = new Set([
  ...HALF_OPS,
  ...Object.keys(KEEP_WHY),
  'Not',
  'And',
  'Or',
  'Xor',
  'Mod',
  'Sign',
  'Sin',
  'Cos',
  'Mish',
  'Gelu',
  'Softsign',
  'ThresholdedRelu',
  'LRN',
  'LpNormalization',
  'LogSoftmax',
  'Hardmax',
  'ReduceMax',
  'ReduceMin',
  'ScatterElements',
  'ScatterND',
  'ReverseSequence',
  'Trilu',
  'Einsum',
  'RoiAlign',
]);

const attrInt = (n: Node, name: string): number | undefined => {
  const a = attr(n, name);
  return a?.i === undefined || a.i === null ? undefined : Number(String(a.i));
};

/** The element types of a node's outputs from those of its inputs (undefined: not known). */
function outputTypes(n: Node, ins: (number | undefined)[]): (number | undefined)[] {
  const op = n.opType ?? '';
  const outs = n.output ?? [];
  const all = (t: number | undefined) => outs.map(() => t);
  if (n.domain && n.domain !== 'ai.onnx') return all(undefined);
  if (op === 'Cast') return all(attrInt(n, 'to'));
  if (op === 'CastLike') return all(ins[1]);
  if (BOOL_OUT.has(op)) return all(BOOL);
  if (INT64_OUT.has(op)) return all(INT64);
  if (op === 'TopK' || op === 'MaxPool') return outs.map((_, i) => (i === 0 ? ins[0] : INT64));
  if (op === 'Dropout') return outs.map((_, i) => (i === 0 ? ins[0] : BOOL));
  if (op === 'Where') return all(ins[1]);
  if (op === 'Constant') {
    const a = n.attribute?.[0];
    if (a?.t) return all(a.t.dataType ?? undefined);
    if (a?.name === 'value_float' || a?.name === 'value_floats') return all(FLOAT);
    if (a?.name === 'value_int' || a?.name === 'value_ints') return all(INT64);
    if (a?.name === 'value_string' || a?.name === 'value_strings') return all(STRING);
    return all(undefined);
  }
  if (op === 'ConstantOfShape') return all(attr(n, 'value')?.t?.dataType ?? FLOAT);
  if (op === 'LayerNormalization') return outs.map((_, i) => (i === 0 ? ins[0] : undefined));
  if (op === 'BatchNormalization') return outs.map((_, i) => (i === 0 ? ins[0] : undefined));
  if (SAME_AS_FIRST.has(op)) return all(ins[0]);
  return all(undefined);
}

// float32 -> float16 bits, rounding to nearest even.
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const HALF_MAX = 0x7bff;

/** The float16 bits of v; `clamped` is set when a finite v lies beyond float16's range. */
function toHalf(v: number, out: { clamped: boolean }): number {
  f32[0] = v;
  const x = u32[0]!;
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // infinity stays infinity, NaN stays NaN
  const e = exp - 112; // rebias 127 -> 15
  if (e >= 0x1f) {
    out.clamped = true;
    return sign | HALF_MAX;
  }
  if (e <= 0) {
    // A float16 subnormal: m * 2^-24.
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const m = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    return sign | (rem > mid || (rem === mid && m & 1) ? m + 1 : m);
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++;
  if (h >= 0x7c00) {
    out.clamped = true;
    return sign | HALF_MAX;
  }
  return sign | h;
}

/** A float32 tensor as float16 (same name unless given); counts clamped values. */
function halfTensor(t: TensorProto, count: { clamped: number }, name = t.name ?? ''): TensorProto {
  const src = floats(t);
  const dst = new Uint16Array(src.length);
  const flag = { clamped: false };
  for (let i = 0; i < src.length; i++) {
    flag.clamped = false;
    dst[i] = toHalf(src[i]!, flag);
    if (flag.clamped) count.clamped++;
  }
  const bytes = new Uint8Array(dst.buffer);
  // Protobuf stores raw_data little-endian, as every platform Node runs on is.
  return { name, dims: t.dims, dataType: FLOAT16, rawData: bytes, docString: t.docString };
}

/** The graph with its float part in float16 and float32 inputs and outputs, or why not. */
export function withFloat16(bytes: Uint8Array): Fp16Result {
  const decoded = decodeModel(bytes);
  if (!decoded.ok) return decoded;
  const { model, graph: g } = decoded;
  const nodes = g.node ?? [];
  for (const n of nodes) {
    const where = `${n.opType} node ${n.name || n.output?.[0]}`;
    if ((!n.domain || n.domain === 'ai.onnx') && QUANTISED.has(n.opType ?? ''))
      return { ok: false, reason: `${where}: quantised arithmetic is left as it was exported` };
    if (n.attribute?.some((a) => a.g || a.graphs?.length))
      return { ok: false, reason: `${where}: a graph with subgraphs (control flow) is not rewritten` };
  }
  if (g.sparseInitializer?.length) return { ok: false, reason: 'the graph has sparse initialisers' };
  // A second pass would only add casts: a graph with float16 weights or casts is taken as already rewritten.
  if (
    (g.initializer ?? []).some((t) => t.dataType === FLOAT16) ||
    nodes.some((n) => n.opType === 'Cast' && attrInt(n, 'to') === FLOAT16)
  )
    return { ok: false, reason: 'the graph already computes in float16' };
  const inits = new Map<string, TensorProto>();
  for (const t of g.initializer ?? []) {
    if (t.dataType === FLOAT && t.dataLocation === onnx.TensorProto.DataLocation.EXTERNAL)
      return { ok: false, reason: `initialiser ${t.name} is stored outside the file` };
    inits.set(t.name ?? '', t);
  }

  // The element type of every tensor, from the declarations and then node by node.
  const declared = new Map<string, number>();
  for (const vi of [...(g.input ?? []), ...(g.valueInfo ?? []), ...(g.output ?? [])]) {
    const t = vi.type?.tensorType?.elemType;
    if (t) declared.set(vi.name ?? '', t);
  }
  const type = new Map<string, number | undefined>();
  for (const i of g.input ?? []) type.set(i.name ?? '', declared.get(i.name ?? ''));
  for (const t of g.initializer ?? []) type.set(t.name ?? '', t.dataType ?? undefined);
  for (const n of nodes) {
    for (const i of n.input ?? [])
      if (i !== '' && !type.has(i))
        return { ok: false, reason: `${n.opType} node ${n.name || n.output?.[0]} reads ${i} before it is made` };
    const outs = outputTypes(
      n,
      (n.input ?? []).map((i) => (i === '' ? undefined : type.get(i))),
    );
    (n.output ?? []).forEach((o, k) => {
      if (o !== '') type.set(o, outs[k] ?? declared.get(o));
    });
  }

  // Which nodes run in float16. Floats made from shapes, sizes or indices ("exact") stay float32 downstream.
  const outputs = new Set((g.output ?? []).map((o) => o.name ?? ''));
  const exact = new Set<string>();
  const half = new Set<Node>();
  const kept: KeptNode[] = [];
  const isFloat = (name: string) => name !== '' && type.get(name) === FLOAT;
  /** Casts to FLOAT and float Constants: in the float16 part when all their readers are. */
  const sources: Node[] = [];
  for (const n of nodes) {
    const op = n.opType ?? '';
    const ins = n.input ?? [];
    const outs = n.output ?? [];
    const custom = !!n.domain && n.domain !== 'ai.onnx';
    const touches = [...ins, ...outs].some(isFloat);
    const unknown = [...ins, ...outs].some((x) => x !== '' && type.get(x) === undefined);
    const fromIndex = op === 'Cast' && INDEX_TYPES.has(type.get(ins[0] ?? '') ?? 0);
    let why: string | undefined;
    if (custom) why = `an operator of the ${n.domain} domain`;
    else if (ins.some((i) => exact.has(i))) why = 'it computes with shapes, sizes or indices';
    else if (fromIndex) why = 'it makes a float of shapes, sizes or indices';
    else if (unknown) why = 'a type it reads or writes is not known';
    else if (KEEP_WHY[op]) why = KEEP_WHY[op];
    else if (!HALF_OPS.has(op) && op !== 'Constant') why = 'not known to run in float16';
    else if ((op === 'LayerNormalization' || op === 'BatchNormalization') && outs.filter(Boolean).length > 1)
      why = 'its statistics outputs are float32';
    if (!touches && !unknown) continue;
    if (why === undefined) {
      if ((op === 'Cast' && attrInt(n, 'to') === FLOAT) || op === 'Constant') sources.push(n);
      else half.add(n);
      continue;
    }
    if (!(op === 'Cast' && !fromIndex))
      kept.push({ node: n.name || outs[0] || '', op: custom ? `${n.domain}.${op}` : op, why });
    if (fromIndex || op === 'Range' || op === 'ConstantOfShape' || ins.some((i) => exact.has(i)))
      for (const o of outs) if (isFloat(o)) exact.add(o);
  }
  // Who reads each tensor: a float16 node (outside its float32 inputs) wants float16, anything else float32.
  const wants16 = (n: Node, k: number) => half.has(n) && !FLOAT32_INPUTS[n.opType ?? '']?.includes(k);
  const readers = new Map<string, { n: Node; k: number }[]>();
  for (const n of nodes)
    (n.input ?? []).forEach((i, k) => {
      if (i !== '') readers.set(i, [...(readers.get(i) ?? []), { n, k }]);
    });
  const allHalf = (name: string) =>
    !outputs.has(name) && (readers.get(name) ?? []).length > 0 && readers.get(name)!.every((r) => wants16(r.n, r.k));
  for (const n of [...sources].reverse()) if (allHalf(n.output?.[0] ?? '')) half.add(n);
  if (half.size === 0) return { ok: false, reason: 'no node of the graph would run in float16' };

  // Float initialisers: float16 for float16 readers, float32 (the original) for the others.
  const count = { clamped: 0 };
  const v16 = new Map<string, string>();
  const v32 = new Map<string, string>();
  const newInits: TensorProto[] = [];
  for (const t of g.initializer ?? []) {
    const name = t.name ?? '';
    if (t.dataType !== FLOAT) {
      newInits.push(t);
      continue;
    }
    const rs = readers.get(name) ?? [];
    const to16 = rs.some((r) => wants16(r.n, r.k));
    const to32 = outputs.has(name) || rs.some((r) => !wants16(r.n, r.k));
    if (to32) {
      newInits.push(t);
      v32.set(name, name);
    }
    if (to16) {
      const n16 = to32 ? `${name}__fp16` : name;
      newInits.push(halfTensor(t, count, n16));
      v16.set(name, n16);
    }
  }
  for (const i of g.input ?? []) if (isFloat(i.name ?? '') && !inits.has(i.name ?? '')) v32.set(i.name!, i.name!);

  const out: Node[] = [];
  /** The name of tensor x in float16 (want) or float32, casting once where it has only the other. */
  const read = (x: string, want16: boolean): string => {
    if (!isFloat(x)) return x;
    const [have, other] = want16 ? [v16, v32] : [v32, v16];
    let name = have.get(x);
    if (name === undefined) {
      const from = other.get(x);
      if (from === undefined) return x; // not reached: every float tensor has one version when it is read
      name = `${x}__${want16 ? 'fp16' : 'fp32'}`;
      out.push(castNode(from, name, want16 ? FLOAT16 : FLOAT));
      have.set(x, name);
    }
    return name;
  };
  for (const n of nodes) {
    const isHalf = half.has(n);
    n.input = (n.input ?? []).map((x, k) => (x === '' ? x : read(x, wants16(n, k))));
    if (!isHalf) {
      out.push(n);
      for (const o of n.output ?? []) if (isFloat(o)) v32.set(o, o);
      continue;
    }
    if (n.opType === 'Cast' && attrInt(n, 'to') === FLOAT) attr(n, 'to')!.i = FLOAT16;
    if (n.opType === 'Constant') halfConstant(n, count);
    const after: Node[] = [];
    n.output = (n.output ?? []).map((o) => {
      if (!isFloat(o)) return o;
      if (!outputs.has(o)) {
        v16.set(o, o);
        return o;
      }
      // A graph output: float16 under another name, cast back to float32 under its own.
      const o16 = `${o}__fp16`;
      v16.set(o, o16);
      v32.set(o, o);
      after.push(castNode(o16, o, FLOAT));
      return o16;
    });
    out.push(n, ...after);
  }
  g.node = out;
  g.initializer = newInits;
  // Declared types follow: a tensor now made in float16 under its own name is declared float16.
  for (const vi of [...(g.valueInfo ?? []), ...(g.input ?? [])]) {
    const name = vi.name ?? '';
    const tt = vi.type?.tensorType;
    if (tt?.elemType === FLOAT && v16.get(name) === name && v32.get(name) !== name) tt.elemType = FLOAT16;
  }
  return {
    ok: true,
    bytes: onnx.ModelProto.encode(model).finish(),
    kept,
    half: [...half].filter((n) => n.opType !== 'Constant').length,
    clamped: count.clamped,
  };
}

/** A float Constant node's value as float16. */
function halfConstant(n: Node, count: { clamped: number }): void {
  const a = n.attribute?.[0];
  if (!a) return;
  let t: TensorProto | undefined;
  if (a.t) t = a.t;
  else if (a.name === 'value_float') t = { dims: [], dataType: FLOAT, floatData: [a.f ?? 0] };
  else if (a.name === 'value_floats') t = { dims: [a.floats?.length ?? 0], dataType: FLOAT, floatData: a.floats ?? [] };
  if (!t) return;
  n.attribute = [
    { name: 'value', type: onnx.AttributeProto.AttributeType.TENSOR, t: halfTensor(t, count, t.name ?? '') },
  ];
}
