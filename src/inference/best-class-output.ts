// Which outputs of a detector's graph get a reduced twin (best-class.ts), of which form, and the twin's name: read by the
// runtime when it plans a graph and by the session worker when it runs one, neither of which loads the ONNX
// protobuf library for it.
import { ELEM_FLOAT16, type OnnxTensorInfo } from './onnx-metadata.js';

/** TensorProto.DataType of float32. */
const ELEM_FLOAT = 1;

/** The reduced output's name for a raw output. */
export const bestClassOutput = (output: string): string => `${output}/best-class`;

/**
 * The twin a declared output gets, by its shape: `channels` for a channels-first YOLO output [N, 4 + C, A]
 * (YOLOv8, YOLO11; a fixed feature axis of at least 5, a box and one class, and more anchors than features or
 * anchors not fixed), `rows` for one anchor a row [N, A, 5 + C] (YOLOv5: a box, an objectness, the classes; a
 * fixed feature axis of at least 7, since six is an end-to-end export's box, score and class, and more anchors
 * than features); undefined for any other output. float32,
 * or float16, which the graph's first step casts to float32.
 */
export function twinForm(o: OnnxTensorInfo): 'channels' | 'rows' | undefined {
  if (o.shape.length !== 3 || (o.elemType !== ELEM_FLOAT && o.elemType !== ELEM_FLOAT16)) return undefined;
  const [, a, b] = o.shape;
  if (typeof a === 'number' && a >= 5 && (typeof b !== 'number' || b > a)) return 'channels';
  if (typeof b === 'number' && b >= 7 && (typeof a !== 'number' || a > b)) return 'rows';
  return undefined;
}

/** Whether a declared output gets a reduced twin (twinForm). */
export const reducibleOutput = (o: OnnxTensorInfo): boolean => twinForm(o) !== undefined;
