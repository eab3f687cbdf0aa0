// A small typed front over onnx-proto (the maintained protobuf encoder): collects nodes and initializers
// and encodes a ModelProto. Used by the TFJS importer and by tests that generate tiny models.
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

export const DataType = { FLOAT: 1, UINT8: 2, INT32: 6, INT64: 7, BOOL: 9 } as const;
export type AttrValue = number | string | number[] | { floats: number[] } | { float: number };

export interface ValueInfo {
  name: string;
  elemType: number;
  shape: (number | string)[];
}

export class OnnxGraphBuilder {
  private nodes: import('onnx-proto').onnx.INodeProto[] = [];
  private inits: import('onnx-proto').onnx.ITensorProto[] = [];
  private names = new Set<string>();
  private counter = 0;

  /** A fresh tensor name with the given stem (ONNX names must be unique within the graph). */
  fresh(stem: string): string {
    let name = stem;
    while (this.names.has(name)) name = `${stem}__${++this.counter}`;
    this.names.add(name);
    return name;
  }

  node(op: string, inputs: string[], outputs: string[], attrs: Record<string, AttrValue> = {}, name?: string): void {
    const attribute = Object.entries(attrs).map(([k, v]) => toAttr(k, v));
    this.nodes.push({ opType: op, input: inputs, output: outputs, attribute, name: name ?? this.fresh(`${op}_node`) });
  }

  /** Adds a node with one output and returns that output's name. */
  op(op: string, inputs: string[], attrs: Record<string, AttrValue> = {}, stem?: string): string {
    const out = this.fresh(stem ?? op);
    this.node(op, inputs, [out], attrs);
    return out;
  }

  floatInit(stem: string, dims: number[], data: Float32Array | number[]): string {
    const arr = data instanceof Float32Array ? data : Float32Array.from(data);
    return this.rawInit(
      stem,
      dims,
      DataType.FLOAT,
      new Uint8Array(arr.buffer.slice(arr.byteOffset, arr.byteOffset + arr.byteLength)),
    );
  }

  int64Init(stem: string, dims: number[], data: ArrayLike<number | bigint>): string {
    const arr = new BigInt64Array(data.length);
    for (let i = 0; i < data.length; i++) arr[i] = BigInt(data[i]);
    return this.rawInit(stem, dims, DataType.INT64, new Uint8Array(arr.buffer));
  }

  private rawInit(stem: string, dims: number[], dataType: number, rawData: Uint8Array): string {
    const name = this.fresh(stem);
    this.inits.push({ name, dims, dataType, rawData });
    return name;
  }

  /** `metadata`: the model's metadata_props (what exporters write there, e.g. class names). */
  encode(opts: {
    name: string;
    inputs: ValueInfo[];
    outputs: ValueInfo[];
    opset?: number;
    doc?: string;
    metadata?: Record<string, string>;
  }): Uint8Array {
    const model = onnx.ModelProto.create({
      irVersion: 8,
      producerName: 'sightflow',
      producerVersion: '0.1.0',
      docString: opts.doc ?? '',
      opsetImport: [{ domain: '', version: opts.opset ?? 17 }],
      graph: {
        name: opts.name,
        node: this.nodes,
        initializer: this.inits,
        input: opts.inputs.map(valueInfo),
        output: opts.outputs.map(valueInfo),
      },
      metadataProps: Object.entries(opts.metadata ?? {}).map(([key, value]) => ({ key, value })),
    });
    return onnx.ModelProto.encode(model).finish();
  }
}

function valueInfo(v: ValueInfo): import('onnx-proto').onnx.IValueInfoProto {
  return {
    name: v.name,
    type: {
      tensorType: {
        elemType: v.elemType,
        shape: { dim: v.shape.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

function toAttr(name: string, v: AttrValue): import('onnx-proto').onnx.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType;
  if (typeof v === 'string') return { name, type: T.STRING, s: new TextEncoder().encode(v) };
  if (typeof v === 'number') return { name, type: T.INT, i: v };
  if (Array.isArray(v)) return { name, type: T.INTS, ints: v };
  if ('floats' in v) return { name, type: T.FLOATS, floats: v.floats };
  return { name, type: T.FLOAT, f: v.float };
}
