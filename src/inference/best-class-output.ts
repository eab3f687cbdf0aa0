// Which outputs of a detector's graph get a reduced twin (best-class.ts) and the twin's name: read by the
// runtime when it plans a graph and by the session worker when it runs one, neither of which loads the ONNX
// protobuf library for it.
import { ELEM_FLOAT16, type OnnxTensorInfo } from './onnx-metadata.js';

/** TensorProto.DataType of float32. */
const ELEM_FLOAT = 1;

/** The reduced output's name for a raw output. */
export const bestClassOutput = (output: string): string => `${output}/best-class`;

/**
 * Whether a declared output may be a channels-first YOLO output worth reducing: float32 (or float16, which the
 * graph's first step casts to float32), rank 3, a fixed feature axis of at least 5 (a box and one class), and
 * more anchors than features (or anchors not fixed).
 */
export function reducibleOutput(o: OnnxTensorInfo): boolean {
  if (o.shape.length !== 3 || (o.elemType !== ELEM_FLOAT && o.elemType !== ELEM_FLOAT16)) return false;
  const [, f, a] = o.shape;
  return typeof f === 'number' && f >= 5 && (typeof a !== 'number' || a > f);
}
