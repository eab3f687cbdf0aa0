// Reads a TFJS graph model (model.json + .bin shards) into plain nodes and decoded constant tensors.
// float16-quantized weights are widened to float32 exactly as TFJS does at load time.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export interface TfNode {
  name: string;
  op: string;
  inputs: string[];
  attr: Record<string, TfAttr>;
}

export interface TfAttr {
  s?: string;
  i?: string | number;
  f?: number;
  b?: boolean;
  type?: string;
  list?: { i?: (string | number)[]; s?: string[]; f?: number[] };
  shape?: { dim?: { size: string | number }[] };
}

export interface TfConst {
  dtype: 'float32' | 'int32' | 'bool';
  shape: number[];
  data: Float32Array | Int32Array | Uint8Array;
}

export interface TfGraph {
  nodes: TfNode[];
  consts: Map<string, TfConst>;
  inputs: { name: string; shape: number[] }[];
  outputs: string[];
}

interface WeightSpec {
  name: string;
  shape: number[];
  dtype: string;
  quantization?: { dtype: string; scale?: number; min?: number; original_dtype?: string };
}

export async function readTfjsGraph(modelJsonPath: string): Promise<TfGraph> {
  const json = JSON.parse(await readFile(modelJsonPath, 'utf8'));
  if (json.format !== 'graph-model')
    throw new Error(`${modelJsonPath}: expected a TFJS graph-model, got ${json.format}`);
  const consts = new Map<string, TfConst>();
  for (const group of json.weightsManifest as { paths: string[]; weights: WeightSpec[] }[]) {
    const shards = await Promise.all(group.paths.map((p) => readFile(join(dirname(modelJsonPath), p))));
    const buf = Buffer.concat(shards);
    let offset = 0;
    for (const w of group.weights) {
      const { value, bytes } = decodeWeight(w, buf, offset);
      consts.set(w.name, value);
      offset += bytes;
    }
  }
  const nodes: TfNode[] = (
    json.modelTopology.node as { name: string; op: string; input?: string[]; attr?: Record<string, TfAttr> }[]
  ).map((n) => ({
    name: n.name,
    op: n.op,
    inputs: (n.input ?? []).filter((i) => !i.startsWith('^')),
    attr: n.attr ?? {},
  }));
  const sig = json.signature ?? {};
  const inputs = Object.values(sig.inputs ?? {}).map((v) => {
    const info = v as { name: string; tensorShape: { dim: { size: string }[] } };
    return { name: info.name.replace(/:0$/, ''), shape: info.tensorShape.dim.map((d) => Number(d.size)) };
  });
  const outputs = Object.values(sig.outputs ?? {}).map((v) => (v as { name: string }).name.replace(/:0$/, ''));
  return { nodes, consts, inputs, outputs };
}

function decodeWeight(w: WeightSpec, buf: Buffer, offset: number): { value: TfConst; bytes: number } {
  const count = w.shape.reduce((a, b) => a * b, 1);
  const q = w.quantization;
  if (q) {
    if (q.dtype === 'float16') {
      const out = new Float32Array(count);
      for (let i = 0; i < count; i++) out[i] = halfToFloat(buf.readUInt16LE(offset + 2 * i));
      return { value: { dtype: 'float32', shape: w.shape, data: out }, bytes: 2 * count };
    }
    if (q.dtype === 'uint8' || q.dtype === 'uint16') {
      const size = q.dtype === 'uint8' ? 1 : 2;
      const out = new Float32Array(count);
      for (let i = 0; i < count; i++) {
        const v = size === 1 ? buf[offset + i] : buf.readUInt16LE(offset + 2 * i);
        out[i] = v * (q.scale ?? 1) + (q.min ?? 0);
      }
      return { value: { dtype: 'float32', shape: w.shape, data: out }, bytes: size * count };
    }
    throw new Error(`unsupported weight quantization ${q.dtype} for ${w.name}`);
  }
  const slice = buf.buffer.slice(buf.byteOffset + offset, buf.byteOffset + offset + 4 * count);
  if (w.dtype === 'float32')
    return { value: { dtype: 'float32', shape: w.shape, data: new Float32Array(slice) }, bytes: 4 * count };
  if (w.dtype === 'int32')
    return { value: { dtype: 'int32', shape: w.shape, data: new Int32Array(slice) }, bytes: 4 * count };
  if (w.dtype === 'bool') {
    return {
      value: { dtype: 'bool', shape: w.shape, data: Uint8Array.from(buf.subarray(offset, offset + count)) },
      bytes: count,
    };
  }
  throw new Error(`unsupported weight dtype ${w.dtype} for ${w.name}`);
}

/** IEEE 754 binary16 -> number (Node 20 has no Float16Array). */
export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

export function attrInts(a: TfAttr | undefined): number[] {
  return (a?.list?.i ?? []).map(Number);
}

export function attrString(a: TfAttr | undefined): string {
  return a?.s ? Buffer.from(a.s, 'base64').toString('utf8') : '';
}

export function attrStrings(a: TfAttr | undefined): string[] {
  return (a?.list?.s ?? []).map((s) => Buffer.from(s, 'base64').toString('utf8'));
}
