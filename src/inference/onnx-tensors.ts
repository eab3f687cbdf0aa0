// Reading and writing the pieces of an ONNX graph that the graph rewrites (batch-axis.ts,
// dequantize-graph.ts, fp16-graph.ts, uint8-input.ts) share: decoding a model, the data type codes, constant tensors' values in either of the protobuf's encodings (raw bytes or the
// typed fields) and node attributes with the defaults the operator's definition gives.
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;
type Model = import('onnx-proto').onnx.ModelProto;
type Graph = import('onnx-proto').onnx.IGraphProto;
type TensorProto = import('onnx-proto').onnx.ITensorProto;
type Node = import('onnx-proto').onnx.INodeProto;

/** TensorProto data types the rewrites read or write. */
export const DT = {
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  UINT16: 4,
  INT16: 5,
  INT32: 6,
  INT64: 7,
  STRING: 8,
  BOOL: 9,
  FLOAT16: 10,
  UINT32: 12,
  UINT64: 13,
} as const;

/** A model's bytes decoded, with its graph, or why not (the rewrites' first step). */
export function decodeModel(
  bytes: Uint8Array,
): { ok: true; model: Model; graph: Graph } | { ok: false; reason: string } {
  let model: Model;
  try {
    model = onnx.ModelProto.decode(bytes);
  } catch (e) {
    return { ok: false, reason: `not an ONNX model (${(e as Error).message})` };
  }
  if (!model.graph) return { ok: false, reason: 'the model has no graph' };
  return { ok: true, model, graph: model.graph };
}

/** A tensor's raw bytes as a fresh, aligned copy (protobuf slices may start anywhere). */
function rawCopy(t: TensorProto): ArrayBuffer | undefined {
  return t.rawData && t.rawData.length ? new Uint8Array(t.rawData).slice().buffer : undefined;
}

export function int64s(t: TensorProto): bigint[] {
  if (t.rawData && t.rawData.length) {
    const raw = new Uint8Array(t.rawData);
    const dv = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
    return Array.from({ length: raw.byteLength / 8 }, (_, i) => dv.getBigInt64(i * 8, true));
  }
  return (t.int64Data ?? []).map((v) => BigInt(String(v)));
}

export function int64Tensor(name: string, values: bigint[]): TensorProto {
  const arr = BigInt64Array.from(values);
  return { name, dims: [values.length], dataType: DT.INT64, rawData: new Uint8Array(arr.buffer) };
}

/** A float32 tensor's values. */
export function floats(t: TensorProto): Float32Array {
  const raw = rawCopy(t);
  return raw ? new Float32Array(raw) : Float32Array.from(t.floatData ?? []);
}

/** An int8, uint8 or int32 tensor's values (the small types sit in int32Data when not raw). */
export function integers(t: TensorProto): Int32Array {
  const raw = rawCopy(t);
  if (!raw) return Int32Array.from(t.int32Data ?? []);
  if (t.dataType === DT.UINT8) return Int32Array.from(new Uint8Array(raw));
  if (t.dataType === DT.INT8) return Int32Array.from(new Int8Array(raw));
  return new Int32Array(raw);
}

export function floatTensor(name: string, dims: number[], values: Float32Array): TensorProto {
  return {
    name,
    dims,
    dataType: DT.FLOAT,
    rawData: new Uint8Array(values.buffer, values.byteOffset, values.byteLength),
  };
}

/** A tensor's dims as numbers. */
export const dimsOf = (t: TensorProto): number[] => (t.dims ?? []).map((d) => Number(String(d)));

/** A Cast of `from` to `type`, made as `to` (its node named after what it makes). */
export const castNode = (from: string, to: string, type: number): Node => ({
  opType: 'Cast',
  name: `${to}_node`,
  input: [from],
  output: [to],
  attribute: [{ name: 'to', type: onnx.AttributeProto.AttributeType.INT, i: type }],
});

export const attr = (n: Node, name: string) => n.attribute?.find((a) => a.name === name);
export const attrInt = (n: Node, name: string, dflt: number): number => {
  const a = attr(n, name);
  return a?.i === undefined || a.i === null ? dflt : Number(String(a.i));
};
export const attrInts = (n: Node, name: string): number[] | undefined =>
  attr(n, name)?.ints?.map((v) => Number(String(v)));
