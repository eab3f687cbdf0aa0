// How far a detector fed bytes (its graph normalises the letterboxed bytes) may answer from the same detector
// fed the float tensor: the input differs only by its rounding to whole bytes, so boxes match one for one,
// but a score moves a little, and an int8 export's dynamic quantisation (each layer's range from its input)
// turns that rounding into more. Each tolerance is about twice the worst difference measured over the 64 COCO
// photos of the evaluation set (docs/capacity.md, "Dynamic batching"), so a box's twin is always found while a
// wrong input (a channel swapped, an unnormalised tensor) is not.
import type { TwinTolerance } from './detection-twins.js';

export const BYTES_VS_FLOAT: Record<'centernet-coco' | 'yolov8n-int8', TwinTolerance> = {
  'centernet-coco': { threshold: 0.3, margin: 0.02, score: 0.02, minIou: 0.8 },
  'yolov8n-int8': { threshold: 0.3, margin: 0.12, score: 0.12, minIou: 0.85 },
};
