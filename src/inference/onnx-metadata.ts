// What an ONNX file says about itself without loading it: its metadata_props (exporters write the input size
// and class names there: Ultralytics' imgsz, names, stride, task, end2end) and the declared graph inputs and
// outputs with their shapes. onnxruntime-node exposes neither the metadata nor the input shapes, so this reads
// the ModelProto protobuf directly: only the few fields needed, skipping everything else (the weights) by its
// length, which takes well under a millisecond on a model of a few MB.

export interface OnnxTensorInfo {
  name: string;
  /** Dimensions: a number, a symbolic name (string), or null when neither is given. */
  shape: (number | string | null)[];
  /** TensorProto.DataType (1 float, 2 uint8, 3 int8, 6 int32, 7 int64, 10 float16). */
  elemType: number;
}

/** TensorProto.DataType of float16. */
export const ELEM_FLOAT16 = 10;

export interface OnnxModelInfo {
  metadata: Record<string, string>;
  inputs: OnnxTensorInfo[];
  outputs: OnnxTensorInfo[];
  producer: string;
}

import { open, type FileHandle } from 'node:fs/promises';

// Protobuf wire types.
const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;

class Reader {
  pos: number;
  constructor(
    readonly buf: Uint8Array,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  varint(): number {
    let result = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
    throw new Error('varint longer than 10 bytes');
  }

  /** The next field's number and wire type. */
  tag(): { field: number; wire: number } {
    const t = this.varint();
    return { field: Math.floor(t / 8), wire: t & 7 };
  }

  /** A length-delimited field's sub-reader (and moves past it). */
  sub(): Reader {
    const len = this.varint();
    const start = this.pos;
    if (start + len > this.end) throw new Error('length-delimited field runs past its message');
    this.pos += len;
    return new Reader(this.buf, start, start + len);
  }

  string(): string {
    const r = this.sub();
    return new TextDecoder().decode(this.buf.subarray(r.pos, r.end));
  }

  skip(wire: number): void {
    if (wire === VARINT) this.varint();
    else if (wire === I64) this.pos += 8;
    else if (wire === LEN) this.sub();
    else if (wire === I32) this.pos += 4;
    else throw new Error(`unsupported protobuf wire type ${wire}`);
    if (this.pos > this.end) throw new Error('field runs past its message');
  }
}

/** Reads an ONNX ModelProto's metadata_props, producer and graph input/output declarations. */
export function readOnnxInfo(bytes: Uint8Array): OnnxModelInfo {
  const info: OnnxModelInfo = { metadata: {}, inputs: [], outputs: [], producer: '' };
  const r = new Reader(bytes);
  try {
    while (!r.done) {
      const { field, wire } = r.tag();
      if (field === 2 && wire === LEN)
        info.producer = r.string(); // producer_name
      else if (field === 7 && wire === LEN)
        readGraph(r.sub(), info); // graph
      else if (field === 14 && wire === LEN) {
        // metadata_props: StringStringEntryProto {key = 1, value = 2}
        const e = r.sub();
        let key = '';
        let value = '';
        while (!e.done) {
          const t = e.tag();
          if (t.field === 1 && t.wire === LEN) key = e.string();
          else if (t.field === 2 && t.wire === LEN) value = e.string();
          else e.skip(t.wire);
        }
        if (key) info.metadata[key] = value;
      } else r.skip(wire);
    }
  } catch (e) {
    throw new Error(`not a readable ONNX model: ${(e as Error).message}`);
  }
  return info;
}

function readGraph(g: Reader, info: OnnxModelInfo): void {
  const initializers = new Set<string>();
  const inputs: OnnxTensorInfo[] = [];
  while (!g.done) {
    const { field, wire } = g.tag();
    if (field === 11 && wire === LEN) inputs.push(readValueInfo(g.sub()));
    else if (field === 12 && wire === LEN) info.outputs.push(readValueInfo(g.sub()));
    else if (field === 5 && wire === LEN) {
      // initializer (TensorProto): only its name (field 8) matters here
      const t = g.sub();
      while (!t.done) {
        const x = t.tag();
        if (x.field === 8 && x.wire === LEN) initializers.add(t.string());
        else t.skip(x.wire);
      }
    } else g.skip(wire);
  }
  // Old exporters list initializers among the inputs; they are not fed.
  info.inputs = inputs.filter((i) => !initializers.has(i.name));
}

// ValueInfoProto {name = 1, type = 2 (TypeProto {tensor_type = 1 (Tensor {elem_type = 1, shape = 2})})}.
function readValueInfo(v: Reader): OnnxTensorInfo {
  const out: OnnxTensorInfo = { name: '', shape: [], elemType: 0 };
  while (!v.done) {
    const { field, wire } = v.tag();
    if (field === 1 && wire === LEN) out.name = v.string();
    else if (field === 2 && wire === LEN) {
      const type = v.sub();
      while (!type.done) {
        const t = type.tag();
        if (t.field === 1 && t.wire === LEN) readTensorType(type.sub(), out);
        else type.skip(t.wire);
      }
    } else v.skip(wire);
  }
  return out;
}

function readTensorType(t: Reader, out: OnnxTensorInfo): void {
  while (!t.done) {
    const { field, wire } = t.tag();
    if (field === 1 && wire === VARINT) out.elemType = t.varint();
    else if (field === 2 && wire === LEN) {
      // TensorShapeProto {dim = 1 (Dimension {dim_value = 1, dim_param = 2})}
      const s = t.sub();
      while (!s.done) {
        const d = s.tag();
        if (d.field !== 1 || d.wire !== LEN) {
          s.skip(d.wire);
          continue;
        }
        const dim = s.sub();
        let value: number | string | null = null;
        while (!dim.done) {
          const x = dim.tag();
          if (x.field === 1 && x.wire === VARINT) value = dim.varint();
          else if (x.field === 2 && x.wire === LEN) value = dim.string();
          else dim.skip(x.wire);
        }
        out.shape.push(value);
      }
    } else t.skip(wire);
  }
}

/**
 * The graph's declared inputs and outputs of an ONNX file on disk, read without reading its weights: the few
 * bytes of each field's tag and length are read where they lie and the large fields (initialisers, nodes'
 * tensors) are stepped over, so a model of hundreds of MB costs a few small reads (its graph's inputs and
 * outputs usually come after its weights). Old exporters' initialisers listed among the inputs stay listed.
 */
export async function readOnnxIoFromFile(path: string): Promise<Pick<OnnxModelInfo, 'inputs' | 'outputs'>> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    const file = new FileWindow(fh, size);
    const out: Pick<OnnxModelInfo, 'inputs' | 'outputs'> = { inputs: [], outputs: [] };
    let pos = 0;
    while (pos < size) {
      const { field, wire, at } = await file.tag(pos);
      if (field === 7 && wire === LEN) {
        const { value: len, at: start } = await file.varint(at);
        let g = start;
        const end = start + len;
        if (end > size) throw new Error('the graph runs past the file');
        while (g < end) {
          const t = await file.tag(g);
          if ((t.field === 11 || t.field === 12) && t.wire === LEN) {
            const { value: n, at: s } = await file.varint(t.at);
            const vi = readValueInfo(new Reader(await file.bytes(s, n)));
            (t.field === 11 ? out.inputs : out.outputs).push(vi);
            g = s + n;
          } else g = await file.skip(t.wire, t.at);
        }
        pos = end;
      } else pos = await file.skip(wire, at);
    }
    return out;
  } catch (e) {
    throw new Error(`not a readable ONNX model: ${(e as Error).message}`);
  } finally {
    await fh.close();
  }
}

/** Reads a file in windows of 64 KB, for walking a protobuf's tags and lengths at any offset. */
class FileWindow {
  private buf = new Uint8Array(0);
  private start = 0;
  constructor(
    private readonly fh: FileHandle,
    private readonly size: number,
  ) {}

  /** At least `n` bytes (fewer at the file's end) from `pos`. */
  async bytes(pos: number, n: number): Promise<Uint8Array> {
    if (pos < this.start || pos + n > this.start + this.buf.length) {
      const len = Math.min(Math.max(n, 65536), this.size - pos);
      if (len < n) throw new Error('a field runs past the file');
      const buf = new Uint8Array(len);
      const { bytesRead } = await this.fh.read(buf, 0, len, pos);
      this.buf = buf.subarray(0, bytesRead);
      this.start = pos;
    }
    return this.buf.subarray(pos - this.start, pos - this.start + n);
  }

  async varint(pos: number): Promise<{ value: number; at: number }> {
    const r = new Reader(await this.bytes(pos, Math.min(10, this.size - pos)));
    const value = r.varint();
    return { value, at: pos + r.pos };
  }

  async tag(pos: number): Promise<{ field: number; wire: number; at: number }> {
    const { value, at } = await this.varint(pos);
    return { field: Math.floor(value / 8), wire: value & 7, at };
  }

  /** Where the field whose value starts at `pos` ends. */
  async skip(wire: number, pos: number): Promise<number> {
    if (wire === VARINT) return (await this.varint(pos)).at;
    if (wire === I64) return pos + 8;
    if (wire === I32) return pos + 4;
    if (wire === LEN) {
      const { value, at } = await this.varint(pos);
      return at + value;
    }
    throw new Error(`unsupported protobuf wire type ${wire}`);
  }
}
