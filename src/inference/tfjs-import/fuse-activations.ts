// Peephole rewrites of TF activation subgraphs into single ONNX ops, so ONNX Runtime keeps its blocked
// (NCHWc) conv layout across them instead of reordering around every scalar Mul/Add:
//   hard-swish   Mul(Mul(c, x), Relu6(Add(x, 3)))  -> HardSwish(x) * 6c
//   hard-sigmoid Mul(c, Relu6(Add(y, 3)))          -> HardSigmoid(y) * 6c
// c is 1/6 stored as float16 (0.16663); multiplying by 6c keeps the result equal to the original graph.
import type { TfConst, TfNode } from './tfjs-graph.js';

export function fuseActivations(nodes: TfNode[], consts: Map<string, TfConst>): TfNode[] {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const consumers = new Map<string, number>();
  for (const n of nodes) for (const i of n.inputs) consumers.set(i, (consumers.get(i) ?? 0) + 1);
  const scalar = (ref: string): number | undefined => {
    const c = consts.get(ref);
    return c && c.dtype === 'float32' && c.data.length === 1 ? Number(c.data[0]) : undefined;
  };
  const single = (ref: string) => consumers.get(ref) === 1;
  const producer = (ref: string, op: string) => {
    const n = byName.get(ref);
    return n && n.op === op && single(ref) ? n : undefined;
  };
  /** Relu6(Add(x, 3)) -> x */
  const relu6Plus3 = (ref: string): { x: string; parts: TfNode[] } | undefined => {
    const r = producer(ref, 'Relu6');
    const add = r && (producer(r.inputs[0], 'Add') ?? producer(r.inputs[0], 'AddV2'));
    if (!r || !add) return undefined;
    const [a, b] = add.inputs;
    if (scalar(b) === 3 && scalar(a) === undefined) return { x: a, parts: [r, add] };
    if (scalar(a) === 3 && scalar(b) === undefined) return { x: b, parts: [r, add] };
    return undefined;
  };

  const removed = new Set<TfNode>();
  const replaced = new Map<TfNode, TfNode>();
  for (const n of nodes) {
    if (n.op !== 'Mul' || removed.has(n)) continue;
    for (const [p, q] of [
      [0, 1],
      [1, 0],
    ]) {
      // hard-sigmoid: Mul(c, Relu6(Add(y, 3)))
      const c = scalar(n.inputs[p]);
      if (c !== undefined) {
        const hs = relu6Plus3(n.inputs[q]);
        if (hs) {
          hs.parts.forEach((x) => removed.add(x));
          replaced.set(n, { name: n.name, op: 'HardSigmoidScaled', inputs: [hs.x], attr: { scale: { f: 6 * c } } });
          break;
        }
        continue;
      }
      // hard-swish: Mul(Mul(c, x), Relu6(Add(x, 3)))
      const m = producer(n.inputs[p], 'Mul');
      const hs = relu6Plus3(n.inputs[q]);
      if (!m || !hs) continue;
      const [ma, mb] = m.inputs;
      const cm = scalar(ma) ?? scalar(mb);
      const x = scalar(ma) !== undefined ? mb : ma;
      if (cm === undefined || x !== hs.x) continue;
      [m, ...hs.parts].forEach((r) => removed.add(r));
      replaced.set(n, { name: n.name, op: 'HardSwishScaled', inputs: [x], attr: { scale: { f: 6 * cm } } });
      break;
    }
  }
  return nodes.filter((n) => !removed.has(n)).map((n) => replaced.get(n) ?? n);
}
