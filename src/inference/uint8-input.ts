// A detector's graph that takes its image as bytes: a uint8 [N, H, W, 3] RGB input (the resized or
// letterboxed image as decoded, a quarter of a float32 tensor's bytes) with the model's own normalisation
// in front of the graph: out = (pixel * scale - mean[c]) / std[c] in the model's channel order, moved to
// NCHW when the model reads that layout. The arithmetic is what the CPU preprocessing does per pixel
// (src/native/image.ts), so on a GPU the input crosses as bytes and is normalised where the model runs.
// The runtime applies it when it makes a detector's graph (graph-steps.ts); the detector then writes the
// letterbox or stretch as bytes (src/detection/detect.ts, modelInputBytes).
import onnxProto from 'onnx-proto';
import { DT } from './onnx-tensors.js';
import type { RewriteMode } from './graph-rewrite-mode.js';

const { onnx } = onnxProto;
type TensorProto = import('onnx-proto').onnx.ITensorProto;
type Node = import('onnx-proto').onnx.INodeProto;

export interface Uint8Preprocess {
  layout: 'nhwc' | 'nchw';
  channelOrder: 'rgb' | 'bgr';
  scale: number;
  mean?: readonly [number, number, number];
  std?: readonly [number, number, number];
}

export type Uint8InputResult = { ok: true; bytes: Uint8Array; input: string } | { ok: false; reason: string };

const { FLOAT, UINT8, INT64 } = DT;
const INT = onnx.AttributeProto.AttributeType.INT;

/** The graph with its one image input taken as uint8 NHWC RGB under the same name, or why not. */
export function withUint8Input(bytes: Uint8Array, pre: Uint8Preprocess): Uint8InputResult {
  const model = onnx.ModelProto.decode(bytes);
  const g = model.graph;
  if (!g) return { ok: false, reason: 'the model has no graph' };
  const inits = new Set((g.initializer ?? []).map((t) => t.name!));
  const inputs = (g.input ?? []).filter((i) => !inits.has(i.name!));
  if (inputs.length !== 1) return { ok: false, reason: `the graph has ${inputs.length} inputs, not one image` };
  const input = inputs[0]!;
  const tt = input.type?.tensorType;
  const dims = tt?.shape?.dim ?? [];
  if (tt?.elemType !== FLOAT || dims.length !== 4)
    return { ok: false, reason: 'the input is not a float32 image tensor of rank 4' };
  const channels = dims[pre.layout === 'nhwc' ? 3 : 1];
  if (Number(String(channels?.dimValue ?? 0)) !== 3)
    return { ok: false, reason: 'the input does not have 3 channels where its layout says' };
  const name = input.name!;
  const raw = `${name}__float`;
  // Every reader of the input now reads the normalised tensor.
  for (const n of g.node ?? []) n.input = n.input!.map((i) => (i === name ? raw : i));
  for (const o of g.output ?? []) if (o.name === name) return { ok: false, reason: 'the input is also an output' };
  const f32 = (stem: string, values: number[], shape: number[]): string => {
    const t: TensorProto = {
      name: `${name}__${stem}`,
      dims: shape,
      dataType: FLOAT,
      rawData: new Uint8Array(Float32Array.from(values).buffer),
    };
    g.initializer = [...(g.initializer ?? []), t];
    return t.name!;
  };
  const mean = pre.mean ?? [0, 0, 0];
  const std = pre.std ?? [1, 1, 1];
  const nodes: Node[] = [];
  const n = (opType: string, ins: string[], out: string, attribute: Node['attribute'] = []) => {
    nodes.push({ opType, name: `${out}_node`, input: ins, output: [out], attribute });
    return out;
  };
  let x = n('Cast', [name], `${name}__cast`, [{ name: 'to', type: INT, i: FLOAT }]);
  if (pre.channelOrder === 'bgr') {
    const idx: TensorProto = {
      name: `${name}__bgr_index`,
      dims: [3],
      dataType: INT64,
      rawData: new Uint8Array(BigInt64Array.of(2n, 1n, 0n).buffer),
    };
    g.initializer = [...(g.initializer ?? []), idx];
    x = n('Gather', [x, idx.name!], `${name}__bgr`, [{ name: 'axis', type: INT, i: 3 }]);
  }
  // NHWC: the channel is the last axis, so [3] constants broadcast over it.
  x = n('Mul', [x, f32('scale', [pre.scale], [])], `${name}__scaled`);
  x = n('Sub', [x, f32('mean', [...mean], [3])], `${name}__centred`);
  const last = pre.layout === 'nhwc' ? raw : `${name}__nhwc`;
  n('Div', [x, f32('std', [...std], [3])], last);
  if (pre.layout === 'nchw')
    n('Transpose', [last], raw, [{ name: 'perm', type: onnx.AttributeProto.AttributeType.INTS, ints: [0, 3, 1, 2] }]);
  g.node = [...nodes, ...(g.node ?? [])];
  g.valueInfo = (g.valueInfo ?? []).filter((v) => v.name !== name && v.name !== raw);
  // The input itself: uint8, NHWC, with the model's batch axis and spatial size.
  const [b, d1, d2, d3] = dims;
  const hw = pre.layout === 'nhwc' ? [d1!, d2!] : [d2!, d3!];
  tt.elemType = UINT8;
  tt.shape = { dim: [b!, ...hw, { dimValue: 3 }] };
  return { ok: true, bytes: onnx.ModelProto.encode(model).finish(), input: name };
}

/**
 * When a detector's graph takes its image as bytes: always, never, or (auto) on a GPU provider, where the image
 * crosses the bus to the device and a quarter of the bytes is the point. On the CPU the float tensor is written
 * in place and read where it lies.
 */
export type Uint8InputMode = RewriteMode;
