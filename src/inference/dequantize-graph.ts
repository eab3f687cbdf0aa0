// Turns an int8 export into a float graph that a GPU provider runs natively. ONNX Runtime's CUDA provider has
// no kernels for dynamic quantisation (DynamicQuantizeLinear, ConvInteger, MatMulInteger), so it keeps those
// nodes on the CPU and copies every activation across and back; its CPU kernels run such a graph slower than
// the float one made here (docs/capacity.md, "Graphs for the GPU").
// What it rewrites:
//  - dynamic int8 as ONNX Runtime's quantize_dynamic makes it: DynamicQuantizeLinear(x) -> ConvInteger or
//    MatMulInteger(x_q, W_q, x_zp, W_zp) -> Cast(float) -> Mul(x_scale * W_scale) [-> Add(bias)] becomes
//    Conv(x, W) [+ bias] or MatMul(x, W) with the float weights W = (W_q - W_zp) * W_scale, per tensor or per
//    output channel (column) as the export has them; a Conv's per-channel bias folds into the Conv;
//  - QDQ: DequantizeLinear of constant weights becomes a float initialiser, and QuantizeLinear ->
//    DequantizeLinear pairs around activations go (their users read the float tensor).
// The weights are the export's own int8 values, so only the activations' rounding differs from the int8 graph.
// Like batch-axis.ts it is conservative: any quantised node outside these patterns, or a pattern with a shape
// or scale it cannot place, refuses the whole graph with the node named, and the model loads as exported.
import onnxProto from 'onnx-proto';
import type { RewriteMode } from './graph-rewrite-mode.js';
import { attrInt, decodeModel, DT, dimsOf, floats, floatTensor, int64s, integers } from './onnx-tensors.js';

const { onnx } = onnxProto;
type Graph = import('onnx-proto').onnx.IGraphProto;
type Node = import('onnx-proto').onnx.INodeProto;
type TensorProto = import('onnx-proto').onnx.ITensorProto;

export type DequantizeResult =
  | { ok: true; bytes: Uint8Array; changed: boolean; notes: string[] }
  | { ok: false; reason: string };

/**
 * When sessions load the float graph: always, never, or (auto) on a GPU provider, which runs float convolutions
 * but not the int8 ones, and on the CPU for dynamic int8, which ONNX Runtime's CPU kernels run slower than the
 * float graph (docs/capacity.md, "Graphs for the GPU"); a QDQ export keeps its int8 form on the CPU.
 */
export type DequantizeMode = RewriteMode;

/** Which int8 forms a rewrite takes: every one, or only dynamic quantisation (a QDQ graph stays as it is). */
export type DequantizeForms = 'any' | 'dynamic';

/** Ops of dynamic quantisation as ONNX Runtime's quantize_dynamic writes it. */
const DYNAMIC_OPS = ['DynamicQuantizeLinear', 'ConvInteger', 'MatMulInteger'];
const isDynamic = (op: string) => DYNAMIC_OPS.includes(op);

/** Ops that only an int8 graph has; one the rewrite did not consume refuses the graph. */
const isQuantised = (op: string) => /Integer|Quantiz|^QLinear|^Q[A-Z]/.test(op);

/** A rewritten ConvInteger / MatMulInteger chain. */
interface Chain {
  op: 'Conv' | 'MatMul';
  integer: Node;
  quantize: Node;
  cast: Node;
  mul: Node;
  scaleMul: Node;
  /** The Add folded into the Conv as its bias (absent: the Add, if any, stays). */
  add?: Node;
  weight: string;
  bias?: string;
  output: string;
}

/**
 * The float graph, `changed: false` when there was nothing quantised (or, with forms `dynamic`, no dynamic
 * quantisation), or why not (the node named).
 */
export function dequantizeGraph(bytes: Uint8Array, forms: DequantizeForms = 'any'): DequantizeResult {
  // An op's type is stored as its name's bytes: a graph none of whose bytes spell a dynamic op has none, and
  // is not decoded (on the CPU every model's load asks, whatever its size: OCR, CLIP, a brought describer).
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (forms === 'dynamic' && !DYNAMIC_OPS.some((op) => raw.includes(op)))
    return { ok: true, bytes, changed: false, notes: ['no dynamic quantisation: kept as exported'] };
  const decoded = decodeModel(bytes);
  if (!decoded.ok) return decoded;
  const { model, graph: g } = decoded;
  const nodes = g.node ?? [];
  if (!nodes.some((n) => isQuantised(n.opType ?? '')))
    return { ok: true, bytes, changed: false, notes: ['nothing quantised'] };
  if (forms === 'dynamic' && !nodes.some((n) => isDynamic(n.opType ?? '')))
    return { ok: true, bytes, changed: false, notes: ['no dynamic quantisation: kept as exported'] };
  const sub = nodes.find((n) => n.attribute?.some((a) => a.g || a.graphs?.length));
  if (sub) return { ok: false, reason: `${sub.opType} node ${sub.name}: subgraphs are not rewritten` };
  const r = rewrite(g);
  if (typeof r === 'string') return { ok: false, reason: r };
  return { ok: true, bytes: onnx.ModelProto.encode(model).finish(), changed: true, notes: r };
}

function rewrite(g: Graph): string[] | string {
  const nodes = g.node ?? [];
  const consts = new Map<string, TensorProto>();
  for (const t of g.initializer ?? []) consts.set(t.name!, t);
  for (const n of nodes) {
    const v = n.opType === 'Constant' ? n.attribute?.find((a) => a.name === 'value')?.t : undefined;
    if (v) consts.set(n.output![0]!, v);
  }
  const producer = new Map<string, Node>();
  const users = new Map<string, Node[]>();
  for (const n of nodes) {
    for (const o of n.output ?? []) producer.set(o, n);
    for (const i of n.input ?? []) if (i) users.set(i, [...(users.get(i) ?? []), n]);
  }
  const outputs = new Set((g.output ?? []).map((o) => o.name!));
  const usersOf = (t: string) => users.get(t) ?? [];
  const only = (t: string): Node | undefined =>
    outputs.has(t) ? undefined : usersOf(t).length === 1 ? usersOf(t)[0] : undefined;
  const where = (n: Node) => `${n.opType} node ${n.name || n.output?.[0]}`;
  const names = new Set([...consts.keys(), ...producer.keys(), ...(g.input ?? []).map((i) => i.name!)]);
  const fresh = (stem: string) => {
    let name = `${stem}_float`;
    for (let k = 1; names.has(name); k++) name = `${stem}_float${k}`;
    names.add(name);
    return name;
  };
  const added: TensorProto[] = [];
  const notes: string[] = [];
  const gone = new Set<Node>();
  const replaced = new Map<Node, Node>();

  // Dynamic int8: every ConvInteger / MatMulInteger must be one whole chain.
  const chains: Chain[] = [];
  const weights = new Map<string, string>();
  for (const c of nodes) {
    if (c.opType !== 'ConvInteger' && c.opType !== 'MatMulInteger') continue;
    const chain = matchChain(c);
    if (typeof chain === 'string') return `${where(c)}: ${chain}`;
    chains.push(chain);
  }
  function matchChain(c: Node): Chain | string {
    const conv = c.opType === 'ConvInteger';
    const [x, w, xzp, wzp] = [...(c.input ?? []), '', '', '', ''];
    const q = producer.get(x!);
    if (q?.opType !== 'DynamicQuantizeLinear' || q.output![0] !== x)
      return 'its input is not quantised by a DynamicQuantizeLinear';
    if (xzp !== q.output![2]) return "its input zero point is not the DynamicQuantizeLinear's";
    const wq = consts.get(w!);
    if (!wq || (wq.dataType !== DT.INT8 && wq.dataType !== DT.UINT8))
      return 'its weights are not a constant int8 tensor';
    const wdims = dimsOf(wq);
    if (!conv && wdims.length !== 2) return 'its weights are not a matrix';
    const channels = conv ? wdims[0]! : wdims[1]!;
    const zp = wzp ? consts.get(wzp) : undefined;
    if (wzp && (!zp || zp.dataType !== wq.dataType))
      return 'its weight zero point is not a constant of the weights’ type';
    const zpv = zp ? integers(zp) : Int32Array.of(0);
    if (zpv.length !== 1 && zpv.length !== channels)
      return 'its weight zero point is neither per tensor nor per channel';
    const cast = only(c.output![0]!);
    if (cast?.opType !== 'Cast' || attrInt(cast, 'to', 0) !== DT.FLOAT) return 'its output is not cast to float alone';
    const mul = only(cast.output![0]!);
    if (mul?.opType !== 'Mul') return 'its float output is not scaled by a Mul alone';
    const s = mul.input!.find((i) => i !== cast.output![0]);
    const scaleMul = s ? producer.get(s) : undefined;
    const ws = scaleMul?.input?.find((i) => i !== q.output![1]);
    if (
      scaleMul?.opType !== 'Mul' ||
      !scaleMul.input!.includes(q.output![1]!) ||
      !ws ||
      consts.get(ws)?.dataType !== DT.FLOAT ||
      mul.input!.filter((i) => i === cast.output![0]).length !== 1
    )
      return "its scale is not the input's scale times a constant";
    const wsv = floats(consts.get(ws)!);
    // The scale multiplies the output [N, M, ...] (Conv) or [..., N] (MatMul): it must vary along that axis only.
    const rank = conv ? wdims.length : 2;
    const perChannel = alongAxis(dimsOf(consts.get(ws)!), rank, conv ? 1 : rank - 1, channels);
    if (wsv.length !== 1 && !perChannel) return 'its weight scale is neither per tensor nor per output channel';
    const key = `${w}|${wzp}|${ws}`;
    let weight = weights.get(key);
    if (!weight) {
      const per = conv ? wdims.slice(1).reduce((a, b) => a * b, 1) : 1;
      const wv = integers(wq);
      const out = new Float32Array(wv.length);
      for (let i = 0; i < wv.length; i++) {
        const m = conv ? Math.floor(i / per) : i % channels;
        out[i] = (wv[i]! - zpv[zpv.length === 1 ? 0 : m]!) * wsv[wsv.length === 1 ? 0 : m]!;
      }
      weight = fresh(w!);
      added.push(floatTensor(weight, wdims, out));
      weights.set(key, weight);
    }
    const chain: Chain = {
      op: conv ? 'Conv' : 'MatMul',
      integer: c,
      quantize: q,
      cast,
      mul,
      scaleMul,
      weight,
      output: mul.output![0]!,
    };
    const add = conv ? only(mul.output![0]!) : undefined;
    if (add?.opType === 'Add') {
      const b = add.input!.find((i) => i !== mul.output![0]);
      const bias =
        b && add.input!.filter((i) => i === mul.output![0]).length === 1 ? constantBias(b, rank, channels) : undefined;
      if (bias) {
        chain.bias = fresh(b!);
        added.push(floatTensor(chain.bias, [channels], bias));
        chain.add = add;
        chain.output = add.output![0]!;
      }
    }
    return chain;
  }
  /** A constant (or a Reshape of one to a constant shape) that adds one value per output channel, spread out. */
  function constantBias(name: string, rank: number, channels: number): Float32Array | undefined {
    let t = consts.get(name);
    let dims = t ? dimsOf(t) : [];
    const p = producer.get(name);
    if (!t && p?.opType === 'Reshape') {
      t = consts.get(p.input![0]!);
      const shape = consts.get(p.input![1] ?? '');
      if (!t || !shape || attrInt(p, 'allowzero', 0) !== 0) return undefined;
      // Reshape's 0 copies the input's dim, one -1 takes what the others leave.
      const from = dimsOf(t);
      dims = int64s(shape).map((d, i) => (d === 0n ? (from[i] ?? NaN) : Number(d)));
      const known = dims.filter((d) => d !== -1).reduce((a, b) => a * b, 1);
      const total = from.reduce((a, b) => a * b, 1);
      if (dims.filter((d) => d === -1).length > 1) return undefined;
      dims = dims.map((d) => (d === -1 ? total / known : d));
      if (dims.some((d) => !Number.isInteger(d) || d < 1)) return undefined;
    }
    if (!t || t.dataType !== DT.FLOAT) return undefined;
    const v = floats(t);
    if (v.length === 1) return new Float32Array(channels).fill(v[0]!);
    return alongAxis(dims, rank, 1, channels) && v.length === channels ? v : undefined;
  }

  // Each DynamicQuantizeLinear goes only when all it feeds went with it.
  const byQuantize = new Map<Node, Chain[]>();
  for (const ch of chains) byQuantize.set(ch.quantize, [...(byQuantize.get(ch.quantize) ?? []), ch]);
  for (const [q, cs] of byQuantize) {
    const [y, scale, zp] = q.output!;
    const ours = new Set(cs.flatMap((ch) => [ch.integer, ch.scaleMul]));
    for (const t of [y!, scale!, zp!]) {
      if (outputs.has(t)) return `${where(q)}: its output ${t} is an output of the graph`;
      const other = usersOf(t).find((u) => !ours.has(u));
      if (other) return `${where(q)}: its output ${t} also feeds ${where(other)}`;
    }
    gone.add(q);
  }
  for (const ch of chains) {
    const conv: Node = {
      opType: ch.op,
      name: ch.integer.name ? `${ch.integer.name}_float` : undefined,
      input: [ch.quantize.input![0]!, ch.weight, ...(ch.bias ? [ch.bias] : [])],
      output: [ch.output],
      attribute: ch.op === 'Conv' ? ch.integer.attribute : [],
    };
    replaced.set(ch.integer, conv);
    for (const n of [ch.cast, ch.mul, ...(ch.add ? [ch.add] : [])]) gone.add(n);
  }
  if (chains.length)
    notes.push(
      `${chains.length} integer ${chains.some((c) => c.op === 'MatMul') ? 'convolutions and matrix products' : 'convolutions'} made float`,
    );

  // QDQ: DequantizeLinear of constants become initialisers; QuantizeLinear -> DequantizeLinear pairs go.
  const renamed = new Map<string, string>();
  let folded = 0,
    pairs = 0;
  for (const d of nodes) {
    if (d.opType !== 'DequantizeLinear') continue;
    const [x, s, zp] = [...(d.input ?? []), '', ''];
    const q = producer.get(x!);
    if (consts.has(x!)) {
      const v = dequantized(d);
      if (typeof v === 'string') return `${where(d)}: ${v}`;
      const out = d.output![0]!;
      if (outputs.has(out)) return `${where(d)}: its output is an output of the graph`;
      added.push(floatTensor(out, dimsOf(consts.get(x!)!), v));
      gone.add(d);
      folded++;
    } else if (q?.opType === 'QuantizeLinear') {
      const [qs, qzp] = [q.input![1] ?? '', q.input![2] ?? ''];
      if (s !== qs || (zp ?? '') !== qzp)
        return `${where(d)}: it does not undo ${where(q)} (other scale or zero point)`;
      if (consts.has(q.input![0]!)) return `${where(q)}: a QuantizeLinear of a constant`;
      // A graph output keeps its name through an Identity; elsewhere the readers take the float tensor.
      if (outputs.has(d.output![0]!))
        replaced.set(d, { opType: 'Identity', name: d.name, input: [q.input![0]!], output: [d.output![0]!] });
      else {
        renamed.set(d.output![0]!, q.input![0]!);
        gone.add(d);
      }
      pairs++;
    } else return `${where(d)}: its input is neither a constant nor a QuantizeLinear's`;
  }
  for (const q of nodes) {
    if (q.opType !== 'QuantizeLinear') continue;
    if (outputs.has(q.output![0]!)) return `${where(q)}: its output is an output of the graph`;
    const other = usersOf(q.output![0]!).find((u) => !gone.has(u) && !replaced.has(u));
    if (other) return `${where(q)}: its output feeds ${where(other)}, not only DequantizeLinear`;
    gone.add(q);
  }
  if (folded) notes.push(`${folded} DequantizeLinear of constants folded into float initialisers`);
  if (pairs) notes.push(`${pairs} QuantizeLinear/DequantizeLinear pairs removed`);
  function dequantized(d: Node): Float32Array | string {
    const [x, s, zp] = [...(d.input ?? []), '', ''];
    const xt = consts.get(x!)!;
    const st = consts.get(s!);
    const zt = zp ? consts.get(zp) : undefined;
    if (![DT.INT8, DT.UINT8, DT.INT32].includes(xt.dataType as never))
      return 'its constant is not int8, uint8 or int32';
    if (!st || st.dataType !== DT.FLOAT) return 'its scale is not a float constant';
    if (zp && (!zt || zt.dataType !== xt.dataType)) return "its zero point is not a constant of its input's type";
    if (attrInt(d, 'block_size', 0) !== 0) return 'blocked quantisation';
    const xv = integers(xt),
      sv = floats(st),
      zv = zt ? integers(zt) : Int32Array.of(0);
    const dims = dimsOf(xt);
    let axis = attrInt(d, 'axis', 1);
    if (axis < 0) axis += dims.length;
    const n = sv.length;
    if (zv.length !== n) return 'its scale and zero point differ in size';
    if (n !== 1 && dims[axis] !== n) return 'its scale is neither per tensor nor along its axis';
    const inner = dims.slice(axis + 1).reduce((a, b) => a * b, 1);
    const out = new Float32Array(xv.length);
    for (let i = 0; i < xv.length; i++) {
      const k = n === 1 ? 0 : Math.floor(i / inner) % n;
      out[i] = (xv[i]! - zv[k]!) * sv[k]!;
    }
    return out;
  }

  // The graph without the consumed nodes; inputs of what remains follow the renames.
  const next: Node[] = [];
  for (const n of nodes) {
    if (gone.has(n)) continue;
    const m = replaced.get(n) ?? n;
    m.input = (m.input ?? []).map((i) => {
      while (renamed.has(i)) i = renamed.get(i)!;
      return i;
    });
    next.push(m);
  }
  const left = next.find((n) => isQuantised(n.opType ?? ''));
  if (left) return `${where(left)}: a quantised operator the rewrite does not know`;
  // Nodes that only fed the consumed ones (the scale products, the bias reshapes) go too.
  let used: Set<string>;
  for (;;) {
    used = new Set([...next.flatMap((n) => n.input ?? []), ...outputs]);
    const dead = next.filter((n) => (n.output ?? []).every((o) => !used.has(o)));
    if (dead.length === 0) break;
    for (const n of dead) next.splice(next.indexOf(n), 1);
  }
  g.node = next;
  const inits = [...(g.initializer ?? []).filter((t) => !added.some((a) => a.name === t.name)), ...added];
  g.initializer = inits.filter((t) => used.has(t.name!));
  const dropped = new Set(inits.filter((t) => !used.has(t.name!)).map((t) => t.name!));
  g.input = (g.input ?? []).filter((i) => !dropped.has(i.name!));
  // Declared shapes of tensors that are gone (ints of the integer chain) would describe nothing.
  const produced = new Set(next.flatMap((n) => n.output ?? []));
  g.valueInfo = (g.valueInfo ?? []).filter((vi) => produced.has(vi.name!));
  return notes;
}

/**
 * Whether a constant of `dims`, broadcast against an output of `rank` dimensions, varies along `axis` only
 * (with `size` values there): a per-channel scale or bias.
 */
function alongAxis(dims: number[], rank: number, axis: number, size: number): boolean {
  if (dims.length > rank) return false;
  const aligned = [...new Array<number>(rank - dims.length).fill(1), ...dims];
  return aligned.every((d, i) => (i === axis ? d === size : d === 1));
}
