// TFJS graph -> ONNX. Walks the TF nodes in order and emits ONNX ops. 4-D activations are carried in NCHW
// (ONNX Runtime's native conv layout) with one Transpose at the input; any op without an NCHW rule gets its
// operand transposed back to NHWC first, so the result is correct for every supported op and fast for the
// convolutional trunk. Shapes are tracked in TF (NHWC) terms to compute SAME padding and resize sizes.
import { DataType, OnnxGraphBuilder } from './onnx-builder.js';
import { fuseActivations } from './fuse-activations.js';
import {
  attrInts,
  attrString,
  attrStrings,
  readTfjsGraph,
  type TfConst,
  type TfGraph,
  type TfNode,
} from './tfjs-graph.js';

type DType = 'float' | 'int' | 'bool';

interface Value {
  /** ONNX tensor name. */
  name: string;
  /** Shape in TF terms (NHWC for images). */
  shape: number[];
  dtype: DType;
  /** True when the ONNX tensor holds this 4-D value transposed to NCHW. */
  nchw: boolean;
  /** The TF value is this ONNX tensor times scale; convolutions fold it into their weights. */
  scale?: number;
}

type Operand = { kind: 'const'; c: TfConst } | { kind: 'value'; v: Value };

const NHWC_TO_NCHW = [0, 3, 1, 2];
const NCHW_TO_NHWC = [0, 2, 3, 1];
/** TF axis of an NHWC tensor -> axis of the NCHW tensor. */
const AXIS_TO_NCHW = [0, 2, 3, 1];

export interface ConvertOptions {
  /** Output tensor names to export (default: the signature outputs). */
  outputs?: string[];
  /** ONNX names for the graph input/outputs, keyed by TF name. */
  rename?: Record<string, string>;
  /** Rewrite hard-swish/hard-sigmoid subgraphs into single ops (default true). */
  fuse?: boolean;
}

export async function convertTfjsModel(modelJsonPath: string, opts: ConvertOptions = {}): Promise<Uint8Array> {
  return convertTfjsGraph(await readTfjsGraph(modelJsonPath), opts);
}

export function convertTfjsGraph(graph: TfGraph, opts: ConvertOptions = {}): Uint8Array {
  return new Converter(graph, opts).run();
}

class Converter {
  private b = new OnnxGraphBuilder();
  private values = new Map<string, Value>();
  private plainCache = new Map<string, Value>();
  private unscaledCache = new Map<string, Value>();
  private int64ConstCache = new Map<string, string>();
  private floatConstCache = new Map<string, string>();

  constructor(
    private graph: TfGraph,
    private opts: ConvertOptions,
  ) {}

  run(): Uint8Array {
    const rename = this.opts.rename ?? {};
    const outputs = this.opts.outputs ?? this.graph.outputs;
    const inputs = [];
    // Graph output names are reserved first so no internal tensor can take them.
    for (const tfName of outputs) this.b.fresh(rename[tfName] ?? tfName);
    const nodes = this.opts.fuse === false ? this.graph.nodes : fuseActivations(this.graph.nodes, this.graph.consts);
    for (const node of nodes) {
      if (node.op === 'Placeholder') {
        const shape =
          this.graph.inputs.find((i) => i.name === node.name)?.shape ??
          (node.attr.shape?.shape?.dim ?? []).map((d) => Number(d.size));
        const name = rename[node.name] ?? node.name;
        this.b.fresh(name);
        inputs.push({ name, elemType: DataType.FLOAT, shape });
        this.values.set(node.name, { name, shape, dtype: 'float', nchw: false });
        if (shape.length === 4) {
          // The only layout change on the way in.
          const t = this.b.op('Transpose', [name], { perm: NHWC_TO_NCHW }, `${name}_nchw`);
          this.values.set(node.name, { name: t, shape, dtype: 'float', nchw: true });
        }
        continue;
      }
      if (node.op === 'Const') continue;
      this.convertNode(node);
    }
    const outInfos = outputs.map((tfName) => {
      const v = this.plain(this.value(tfName));
      const name = rename[tfName] ?? tfName;
      this.b.node('Identity', [v.name], [name]);
      return {
        name,
        elemType: v.dtype === 'float' ? DataType.FLOAT : v.dtype === 'int' ? DataType.INT64 : DataType.BOOL,
        shape: v.shape,
      };
    });
    return this.b.encode({
      name: 'tfjs_import',
      inputs,
      outputs: outInfos,
      doc: 'converted from a TFJS graph model by sightflow',
    });
  }

  // ---- operands -------------------------------------------------------------------------------------

  private operand(ref: string): Operand {
    const c = this.graph.consts.get(ref) ?? this.graph.consts.get(ref.replace(/:0$/, ''));
    if (c) return { kind: 'const', c };
    return { kind: 'value', v: this.value(ref) };
  }

  /** The value with any pending scale applied (one Mul per tensor, shared by its consumers). */
  private value(ref: string): Value {
    const v = this.scaledValue(ref);
    if (v.scale === undefined) return v;
    let s = this.unscaledCache.get(v.name);
    if (!s) {
      s = { ...v, scale: undefined, name: this.b.op('Mul', [v.name, this.float1(v.scale)], {}, `${v.name}_scaled`) };
      this.unscaledCache.set(v.name, s);
    }
    return s;
  }

  private scaledValue(ref: string): Value {
    const key = ref.replace(/:0$/, '');
    const v = this.values.get(key);
    if (!v) {
      if (this.graph.consts.has(key)) return this.materialize(this.graph.consts.get(key)!, key);
      throw new Error(`importer: tensor ${ref} is used before it is defined`);
    }
    return v;
  }

  private constOf(ref: string, what: string): TfConst {
    const c = this.graph.consts.get(ref);
    if (!c) throw new Error(`importer: ${what} (${ref}) must be a constant`);
    return c;
  }

  /** A constant as a plain ONNX initializer (ints widened to int64, the one integer type used here). */
  private materialize(c: TfConst, stem: string): Value {
    if (c.dtype === 'float32')
      return {
        name: this.b.floatInit(stem, c.shape, c.data as Float32Array),
        shape: c.shape,
        dtype: 'float',
        nchw: false,
      };
    if (c.dtype === 'int32') {
      const key = stem;
      let name = this.int64ConstCache.get(key);
      if (!name) {
        name = this.b.int64Init(stem, c.shape, c.data);
        this.int64ConstCache.set(key, name);
      }
      return { name, shape: c.shape, dtype: 'int', nchw: false };
    }
    throw new Error(`importer: bool constant ${stem} is not supported`);
  }

  /** The value in TF layout (adds a Transpose back to NHWC once per tensor when needed). */
  private plain(v: Value): Value {
    if (!v.nchw) return v;
    let p = this.plainCache.get(v.name);
    if (!p) {
      p = { ...v, name: this.b.op('Transpose', [v.name], { perm: NCHW_TO_NHWC }, `${v.name}_nhwc`), nchw: false };
      this.plainCache.set(v.name, p);
    }
    return p;
  }

  private set(node: TfNode, v: Value, index = 0): void {
    this.values.set(index === 0 ? node.name : `${node.name}:${index}`, v);
  }

  private float1(value: number): string {
    const key = String(value);
    let name = this.floatConstCache.get(key);
    if (!name) {
      name = this.b.floatInit('scalar', [], [value]);
      this.floatConstCache.set(key, name);
    }
    return name;
  }

  // ---- ops ------------------------------------------------------------------------------------------

  private convertNode(node: TfNode): void {
    switch (node.op) {
      case 'Identity':
        this.set(node, this.value(node.inputs[0]));
        return;
      case 'Conv2D':
      case '_FusedConv2D':
        this.conv(node, false);
        return;
      case 'DepthwiseConv2dNative':
      case 'FusedDepthwiseConv2dNative':
        this.conv(node, true);
        return;
      case 'Add':
      case 'AddV2':
      case 'Sub':
      case 'Mul':
      case 'RealDiv':
      case 'Maximum':
      case 'Minimum':
      case 'Equal':
      case 'Greater':
      case 'Less':
      case 'FloorDiv':
      case 'FloorMod':
        this.binary(node);
        return;
      case 'Relu':
        this.unary(node, 'Relu');
        return;
      case 'Sigmoid':
        this.unary(node, 'Sigmoid');
        return;
      case 'Tanh':
        this.unary(node, 'Tanh');
        return;
      case 'Relu6':
        this.relu6(node);
        return;
      case 'HardSwishScaled':
        this.scaledActivation(node, 'HardSwish', {});
        return;
      case 'HardSigmoidScaled':
        this.scaledActivation(node, 'HardSigmoid', { alpha: { float: 1 / 6 }, beta: { float: 0.5 } });
        return;
      case 'Cast':
        this.cast(node);
        return;
      case 'Mean':
      case 'Max':
      case 'Sum':
        this.reduce(node);
        return;
      case 'MaxPool':
      case 'AvgPool':
        this.pool(node);
        return;
      case 'ResizeBilinear':
      case 'ResizeNearestNeighbor':
        this.resize(node);
        return;
      case 'ConcatV2':
        this.concat(node);
        return;
      case 'Reshape':
        this.reshape(node);
        return;
      case 'ExpandDims':
        this.expandDims(node);
        return;
      case 'Squeeze':
        this.squeeze(node);
        return;
      case 'TopKV2':
        this.topk(node);
        return;
      case 'GatherV2':
        this.gather(node);
        return;
      case 'StridedSlice':
        this.stridedSlice(node);
        return;
      default:
        throw new Error(`importer: TF op ${node.op} (${node.name}) is not supported`);
    }
  }

  private conv(node: TfNode, depthwise: boolean): void {
    // A pending activation scale folds into the weights: conv(s*x) == conv(x) with s*W.
    const x = this.scaledValue(node.inputs[0]);
    const inScale = x.scale ?? 1;
    if (x.shape.length !== 4) throw new Error(`importer: ${node.name} expects a 4-D input`);
    const nchw = x.nchw ? x : this.toNchw(x);
    const w = this.constOf(node.inputs[1], 'conv weights');
    if (attrString(node.attr.data_format) && attrString(node.attr.data_format) !== 'NHWC')
      throw new Error(`importer: ${node.name} data_format`);
    const [kh, kw, cin, cout] = w.shape;
    const wd = w.data as Float32Array;
    let weights: Float32Array;
    let outC: number;
    let group = 1;
    if (depthwise) {
      // TF depthwise [kh,kw,C,M]: output channel c*M+m reads input channel c -> ONNX [C*M,1,kh,kw], group C.
      outC = cin * cout;
      group = cin;
      weights = new Float32Array(outC * kh * kw);
      for (let y = 0; y < kh; y++)
        for (let xx = 0; xx < kw; xx++)
          for (let c = 0; c < cin; c++)
            for (let m = 0; m < cout; m++) {
              weights[((c * cout + m) * kh + y) * kw + xx] = wd[((y * kw + xx) * cin + c) * cout + m];
            }
    } else {
      // HWIO -> OIHW
      outC = cout;
      weights = new Float32Array(cout * cin * kh * kw);
      for (let y = 0; y < kh; y++)
        for (let xx = 0; xx < kw; xx++)
          for (let i = 0; i < cin; i++)
            for (let o = 0; o < cout; o++) {
              weights[((o * cin + i) * kh + y) * kw + xx] = wd[((y * kw + xx) * cin + i) * cout + o];
            }
    }
    const strides = attrInts(node.attr.strides);
    const dil = attrInts(node.attr.dilations);
    const [sh, sw] = [strides[1] ?? 1, strides[2] ?? 1];
    const [dh, dw] = [dil[1] ?? 1, dil[2] ?? 1];
    const padding = attrString(node.attr.padding);
    const [ph0, ph1, oh] = samePad(x.shape[1], kh, sh, dh, padding);
    const [pw0, pw1, ow] = samePad(x.shape[2], kw, sw, dw, padding);
    if (inScale !== 1) for (let i = 0; i < weights.length; i++) weights[i] *= inScale;
    const inputs = [nchw.name, this.b.floatInit(`${node.name}/W`, [outC, depthwise ? 1 : cin, kh, kw], weights)];
    const fused = attrStrings(node.attr.fused_ops);
    let activation: string | undefined;
    if (fused.length) {
      if (fused[0] !== 'BiasAdd')
        throw new Error(`importer: ${node.name} fused op ${fused.join('+')} is not supported`);
      const bias = this.constOf(node.inputs[2], 'conv bias');
      inputs.push(this.b.floatInit(`${node.name}/B`, [outC], bias.data as Float32Array));
      activation = fused[1];
    }
    let out = this.b.op(
      'Conv',
      inputs,
      {
        kernel_shape: [kh, kw],
        strides: [sh, sw],
        dilations: [dh, dw],
        pads: [ph0, pw0, ph1, pw1],
        group,
      },
      `${node.name}`,
    );
    if (activation === 'Relu') out = this.b.op('Relu', [out], {}, `${node.name}/relu`);
    else if (activation === 'Relu6')
      out = this.b.op('Clip', [out, this.float1(0), this.float1(6)], {}, `${node.name}/relu6`);
    else if (activation) throw new Error(`importer: ${node.name} fused activation ${activation} is not supported`);
    this.set(node, { name: out, shape: [x.shape[0], oh, ow, outC], dtype: 'float', nchw: true });
  }

  private toNchw(x: Value): Value {
    return { ...x, name: this.b.op('Transpose', [x.name], { perm: NHWC_TO_NCHW }, `${x.name}_nchw`), nchw: true };
  }

  private binary(node: TfNode): void {
    const [a, b] = [this.operand(node.inputs[0]), this.operand(node.inputs[1])];
    const valueShape = (o: Operand) => (o.kind === 'const' ? o.c.shape : o.v.shape);
    const outShape = broadcastShape(valueShape(a), valueShape(b));
    // Stay in NCHW when every non-constant operand is NCHW and the result is 4-D.
    const nchw =
      outShape.length === 4 &&
      [a, b].every((o) => o.kind === 'const' || o.v.nchw) &&
      [a, b].some((o) => o.kind === 'value');
    const dtypeOf = (o: Operand): DType =>
      o.kind === 'value' ? o.v.dtype : o.c.dtype === 'float32' ? 'float' : o.c.dtype === 'int32' ? 'int' : 'bool';
    const dtype = dtypeOf(a) === 'float' || dtypeOf(b) === 'float' ? 'float' : 'int';
    const name = (o: Operand) => {
      if (o.kind === 'value') return nchw ? o.v.name : this.plain(o.v).name;
      const c = o.c;
      if (c.data.length === 1) {
        if (dtype === 'float') return this.float1(Number(c.data[0]));
        return this.materialize(c, `${node.name}/const`).name;
      }
      if (nchw) return this.constNchw(c, 4, `${node.name}/const`);
      return this.materialize(c, `${node.name}/const`).name;
    };
    const [an, bn] = [name(a), name(b)];
    let out: string;
    let outType: DType = dtype;
    switch (node.op) {
      case 'Add':
      case 'AddV2':
        out = this.b.op('Add', [an, bn], {}, node.name);
        break;
      case 'Sub':
        out = this.b.op('Sub', [an, bn], {}, node.name);
        break;
      case 'Mul':
        out = this.b.op('Mul', [an, bn], {}, node.name);
        break;
      case 'RealDiv':
        out = this.b.op('Div', [an, bn], {}, node.name);
        break;
      case 'Maximum':
        out = this.b.op('Max', [an, bn], {}, node.name);
        break;
      case 'Minimum':
        out = this.b.op('Min', [an, bn], {}, node.name);
        break;
      case 'Equal':
        out = this.b.op('Equal', [an, bn], {}, node.name);
        outType = 'bool';
        break;
      case 'Greater':
        out = this.b.op('Greater', [an, bn], {}, node.name);
        outType = 'bool';
        break;
      case 'Less':
        out = this.b.op('Less', [an, bn], {}, node.name);
        outType = 'bool';
        break;
      case 'FloorDiv':
        // Integer Div truncates; the indices divided here are never negative, where truncation == floor.
        out =
          dtype === 'int'
            ? this.b.op('Div', [an, bn], {}, node.name)
            : this.b.op('Floor', [this.b.op('Div', [an, bn])], {}, node.name);
        break;
      case 'FloorMod':
        if (dtype !== 'int') throw new Error(`importer: float FloorMod (${node.name}) is not supported`);
        out = this.b.op('Mod', [an, bn], { fmod: 0 }, node.name); // fmod=0: sign of the divisor, as TF
        break;
      default:
        throw new Error(`importer: ${node.op}`);
    }
    this.set(node, { name: out, shape: outShape, dtype: outType, nchw });
  }

  /** A constant broadcast against an NCHW value: [C] or [1,1,1,C] -> [1,C,1,1]-compatible layout. */
  private constNchw(c: TfConst, rank: number, stem: string): string {
    if (c.dtype !== 'float32') throw new Error(`importer: non-float constant ${stem} against an NCHW tensor`);
    const s = [...Array(rank - c.shape.length).fill(1), ...c.shape];
    const [n, h, w, ch] = s;
    const src = c.data as Float32Array;
    const dst = new Float32Array(src.length);
    for (let i0 = 0; i0 < n; i0++)
      for (let y = 0; y < h; y++)
        for (let x = 0; x < w; x++)
          for (let k = 0; k < ch; k++) {
            dst[((i0 * ch + k) * h + y) * w + x] = src[((i0 * h + y) * w + x) * ch + k];
          }
    return this.b.floatInit(stem, [n, ch, h, w], dst);
  }

  private unary(node: TfNode, op: string): void {
    const x = this.value(node.inputs[0]);
    this.set(node, { ...x, name: this.b.op(op, [x.name], {}, node.name) });
  }

  private relu6(node: TfNode): void {
    const x = this.value(node.inputs[0]);
    this.set(node, { ...x, name: this.b.op('Clip', [x.name, this.float1(0), this.float1(6)], {}, node.name) });
  }

  private scaledActivation(node: TfNode, op: string, attrs: Record<string, { float: number }>): void {
    const x = this.value(node.inputs[0]);
    const scale = Number(node.attr.scale?.f ?? 1);
    const out = this.b.op(op, [x.name], attrs, node.name);
    this.set(node, { ...x, name: out, scale: scale === 1 ? undefined : scale });
  }

  private cast(node: TfNode): void {
    const x = this.value(node.inputs[0]);
    const dst = node.attr.DstT?.type;
    const [to, dtype]: [number, DType] =
      dst === 'DT_FLOAT'
        ? [DataType.FLOAT, 'float']
        : dst === 'DT_INT32' || dst === 'DT_INT64'
          ? [DataType.INT64, 'int']
          : dst === 'DT_BOOL'
            ? [DataType.BOOL, 'bool']
            : [0, 'float'];
    if (!to) throw new Error(`importer: Cast to ${dst} (${node.name}) is not supported`);
    this.set(node, { ...x, dtype, name: this.b.op('Cast', [x.name], { to }, node.name) });
  }

  private reduce(node: TfNode): void {
    let x = this.value(node.inputs[0]);
    const axesTf = Array.from(this.constOf(node.inputs[1], 'reduction axes').data as Int32Array).map((a) =>
      a < 0 ? a + x.shape.length : a,
    );
    const keep = node.attr.keep_dims?.b === true;
    if (x.nchw && !keep) x = this.plain(x);
    const axes = x.nchw ? axesTf.map((a) => AXIS_TO_NCHW[a]) : axesTf;
    const shape0 = keep
      ? x.shape.map((d, i) => (axesTf.includes(i) ? 1 : d))
      : x.shape.filter((_, i) => !axesTf.includes(i));
    if (x.nchw && node.op === 'Mean' && axes.length === 2 && axes.includes(2) && axes.includes(3)) {
      // Spatial mean == GlobalAveragePool, which ONNX Runtime runs in its blocked conv layout.
      this.set(node, {
        name: this.b.op('GlobalAveragePool', [x.name], {}, node.name),
        shape: shape0,
        dtype: x.dtype,
        nchw: true,
      });
      return;
    }
    const op = node.op === 'Mean' ? 'ReduceMean' : node.op === 'Max' ? 'ReduceMax' : 'ReduceSum';
    const out =
      op === 'ReduceSum'
        ? this.b.op(
            op,
            [x.name, this.b.int64Init(`${node.name}/axes`, [axes.length], axes)],
            { keepdims: keep ? 1 : 0 },
            node.name,
          )
        : this.b.op(op, [x.name], { axes, keepdims: keep ? 1 : 0 }, node.name);
    const shape = keep
      ? x.shape.map((d, i) => (axesTf.includes(i) ? 1 : d))
      : x.shape.filter((_, i) => !axesTf.includes(i));
    this.set(node, { name: out, shape, dtype: x.dtype, nchw: x.nchw });
  }

  private pool(node: TfNode): void {
    const x0 = this.value(node.inputs[0]);
    const x = x0.nchw ? x0 : this.toNchw(x0);
    const k = attrInts(node.attr.ksize);
    const s = attrInts(node.attr.strides);
    const padding = attrString(node.attr.padding);
    const [ph0, ph1, oh] = samePad(x.shape[1], k[1], s[1], 1, padding);
    const [pw0, pw1, ow] = samePad(x.shape[2], k[2], s[2], 1, padding);
    const attrs: Record<string, number[] | number> = {
      kernel_shape: [k[1], k[2]],
      strides: [s[1], s[2]],
      pads: [ph0, pw0, ph1, pw1],
    };
    // TF's SAME average pooling divides by the number of real (unpadded) cells.
    if (node.op === 'AvgPool') attrs.count_include_pad = 0;
    const out = this.b.op(node.op === 'MaxPool' ? 'MaxPool' : 'AveragePool', [x.name], attrs, node.name);
    this.set(node, { name: out, shape: [x.shape[0], oh, ow, x.shape[3]], dtype: x.dtype, nchw: true });
  }

  private resize(node: TfNode): void {
    const x0 = this.value(node.inputs[0]);
    const x = x0.nchw ? x0 : this.toNchw(x0);
    const [h, w] = Array.from(this.constOf(node.inputs[1], 'resize size').data as Int32Array);
    const alignCorners = node.attr.align_corners?.b === true;
    const halfPixel = node.attr.half_pixel_centers?.b === true;
    const bilinear = node.op === 'ResizeBilinear';
    const mode = alignCorners
      ? 'align_corners'
      : halfPixel
        ? bilinear
          ? 'half_pixel'
          : 'tf_half_pixel_for_nn'
        : 'asymmetric';
    const sizes = this.b.int64Init(`${node.name}/sizes`, [4], [x.shape[0], x.shape[3], h, w]);
    const out = this.b.op(
      'Resize',
      [x.name, '', '', sizes],
      {
        mode: bilinear ? 'linear' : 'nearest',
        coordinate_transformation_mode: mode,
        ...(bilinear ? {} : { nearest_mode: alignCorners ? 'round_prefer_ceil' : 'floor' }),
      },
      node.name,
    );
    this.set(node, { name: out, shape: [x.shape[0], h, w, x.shape[3]], dtype: x.dtype, nchw: true });
  }

  private concat(node: TfNode): void {
    const n = node.inputs.length - 1;
    const axisC = this.constOf(node.inputs[n], 'concat axis');
    const vals = node.inputs.slice(0, n).map((r) => this.value(r));
    const rank = vals[0].shape.length;
    const axis = ((Number(axisC.data[0]) % rank) + rank) % rank;
    const nchw = vals.every((v) => v.nchw);
    const ins = nchw ? vals : vals.map((v) => this.plain(v));
    const out = this.b.op(
      'Concat',
      ins.map((v) => v.name),
      { axis: nchw ? AXIS_TO_NCHW[axis] : axis },
      node.name,
    );
    const shape = [...vals[0].shape];
    shape[axis] = vals.reduce((s, v) => s + v.shape[axis], 0);
    this.set(node, { name: out, shape, dtype: vals[0].dtype, nchw });
  }

  private reshape(node: TfNode): void {
    const x = this.plain(this.value(node.inputs[0]));
    const target = Array.from(this.constOf(node.inputs[1], 'reshape shape').data as Int32Array);
    const total = x.shape.reduce((a, b) => a * b, 1);
    const known = target.filter((d) => d !== -1).reduce((a, b) => a * b, 1);
    const shape = target.map((d) => (d === -1 ? total / known : d));
    const out = this.b.op(
      'Reshape',
      [x.name, this.b.int64Init(`${node.name}/shape`, [shape.length], shape)],
      {},
      node.name,
    );
    this.set(node, { name: out, shape, dtype: x.dtype, nchw: false });
  }

  private expandDims(node: TfNode): void {
    const x = this.plain(this.value(node.inputs[0]));
    let axis = Number(this.constOf(node.inputs[1], 'expand dims axis').data[0]);
    if (axis < 0) axis += x.shape.length + 1;
    const out = this.b.op('Unsqueeze', [x.name, this.b.int64Init(`${node.name}/axes`, [1], [axis])], {}, node.name);
    const shape = [...x.shape];
    shape.splice(axis, 0, 1);
    this.set(node, { name: out, shape, dtype: x.dtype, nchw: false });
  }

  private squeeze(node: TfNode): void {
    const x = this.plain(this.value(node.inputs[0]));
    let axes = attrInts(node.attr.squeeze_dims).map((a) => (a < 0 ? a + x.shape.length : a));
    if (!axes.length) axes = x.shape.flatMap((d, i) => (d === 1 ? [i] : []));
    const out = this.b.op(
      'Squeeze',
      [x.name, this.b.int64Init(`${node.name}/axes`, [axes.length], axes)],
      {},
      node.name,
    );
    this.set(node, { name: out, shape: x.shape.filter((_, i) => !axes.includes(i)), dtype: x.dtype, nchw: false });
  }

  private topk(node: TfNode): void {
    const x = this.plain(this.value(node.inputs[0]));
    const k = Number(this.constOf(node.inputs[1], 'top-k k').data[0]);
    const values = this.b.fresh(`${node.name}/values`);
    const indices = this.b.fresh(`${node.name}/indices`);
    this.b.node('TopK', [x.name, this.b.int64Init(`${node.name}/k`, [1], [k])], [values, indices], {
      axis: -1,
      largest: 1,
      sorted: 1,
    });
    const shape = [...x.shape.slice(0, -1), k];
    this.set(node, { name: values, shape, dtype: 'float', nchw: false }, 0);
    this.set(node, { name: indices, shape, dtype: 'int', nchw: false }, 1);
  }

  private gather(node: TfNode): void {
    const params = this.plain(this.value(node.inputs[0]));
    const idx = this.operand(node.inputs[1]);
    const indices = idx.kind === 'const' ? this.materialize(idx.c, `${node.name}/indices`) : this.plain(idx.v);
    let axis = Number(this.constOf(node.inputs[2], 'gather axis').data[0]);
    if (axis < 0) axis += params.shape.length;
    if (Number(node.attr.batch_dims?.i ?? 0) !== 0)
      throw new Error(`importer: GatherV2 batch_dims (${node.name}) is not supported`);
    const out = this.b.op('Gather', [params.name, indices.name], { axis }, node.name);
    const shape = [...params.shape.slice(0, axis), ...indices.shape, ...params.shape.slice(axis + 1)];
    this.set(node, { name: out, shape, dtype: params.dtype, nchw: false });
  }

  private stridedSlice(node: TfNode): void {
    const x = this.plain(this.value(node.inputs[0]));
    const [begin, end, strides] = [1, 2, 3].map((i) =>
      Array.from(this.constOf(node.inputs[i], 'strided slice bounds').data as Int32Array),
    );
    const mask = (k: string) => Number(node.attr[k]?.i ?? 0);
    if (mask('ellipsis_mask') || mask('new_axis_mask'))
      throw new Error(`importer: StridedSlice ellipsis/new_axis masks (${node.name}) are not supported`);
    const bm = mask('begin_mask'),
      em = mask('end_mask'),
      sm = mask('shrink_axis_mask');
    const starts: number[] = [],
      ends: number[] = [],
      axes: number[] = [],
      steps: number[] = [];
    const shape = [...x.shape];
    const squeeze: number[] = [];
    for (let i = 0; i < begin.length; i++) {
      const dim = x.shape[i];
      const step = strides[i] ?? 1;
      let s = bm & (1 << i) ? (step > 0 ? 0 : dim - 1) : begin[i];
      let e = em & (1 << i) ? (step > 0 ? dim : -dim - 1) : end[i];
      if (sm & (1 << i)) {
        e = s + 1;
        squeeze.push(i);
      }
      if (s < 0) s += dim;
      if (e < 0 && !(em & (1 << i))) e += dim;
      starts.push(s);
      ends.push(e);
      axes.push(i);
      steps.push(step);
      shape[i] = Math.max(0, Math.ceil((Math.min(e, dim) - s) / step));
    }
    let out = this.b.op(
      'Slice',
      [
        x.name,
        this.b.int64Init(`${node.name}/starts`, [starts.length], starts),
        this.b.int64Init(`${node.name}/ends`, [ends.length], ends),
        this.b.int64Init(`${node.name}/axes`, [axes.length], axes),
        this.b.int64Init(`${node.name}/steps`, [steps.length], steps),
      ],
      {},
      node.name,
    );
    let outShape = shape;
    if (squeeze.length) {
      out = this.b.op(
        'Squeeze',
        [out, this.b.int64Init(`${node.name}/squeeze`, [squeeze.length], squeeze)],
        {},
        `${node.name}/squeeze`,
      );
      outShape = shape.filter((_, i) => !squeeze.includes(i));
    }
    this.set(node, { name: out, shape: outShape, dtype: x.dtype, nchw: false });
  }
}

/** TF padding -> [before, after, output size]. SAME puts the extra cell at the end (ONNX SAME_UPPER). */
function samePad(size: number, k: number, stride: number, dilation: number, padding: string): [number, number, number] {
  const eff = (k - 1) * dilation + 1;
  if (padding === 'VALID') return [0, 0, Math.floor((size - eff) / stride) + 1];
  if (padding !== 'SAME') throw new Error(`importer: padding ${padding} is not supported`);
  const out = Math.ceil(size / stride);
  const total = Math.max((out - 1) * stride + eff - size, 0);
  return [Math.floor(total / 2), total - Math.floor(total / 2), out];
}

function broadcastShape(a: number[], b: number[]): number[] {
  const n = Math.max(a.length, b.length);
  const out = [];
  for (let i = 0; i < n; i++) {
    const x = a[a.length - n + i] ?? 1;
    const y = b[b.length - n + i] ?? 1;
    out.push(x === 1 ? y : x);
  }
  return out;
}
