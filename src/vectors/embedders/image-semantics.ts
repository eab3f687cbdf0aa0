// What the built-in models see in a photo, in the words people use for it: each detected COCO class (by
// confidence and size), its colour, the image's overall colour and any text OCR reads, mapped into the
// GloVe space that text queries use. Class names become the words captions say ("person" -> man, woman,
// people; "dining table" -> table, food).
import type { DetectedObject } from '../../detection/detect.js';
import type { TextSemantics } from './text-semantics.js';
import { tokenize } from './text-semantics.js';

const CLASS_WORDS: Record<string, string> = {
  person: 'person man woman people',
  bicycle: 'bicycle bike',
  car: 'car street',
  motorcycle: 'motorcycle',
  airplane: 'airplane plane jet',
  bus: 'bus',
  train: 'train tracks',
  truck: 'truck',
  boat: 'boat water',
  'traffic light': 'traffic light street',
  'fire hydrant': 'fire hydrant',
  'stop sign': 'stop sign',
  'parking meter': 'parking meter',
  bench: 'bench',
  bird: 'bird',
  cat: 'cat',
  dog: 'dog',
  horse: 'horse',
  sheep: 'sheep',
  cow: 'cow cattle',
  elephant: 'elephant',
  bear: 'bear',
  zebra: 'zebra',
  giraffe: 'giraffe',
  backpack: 'backpack',
  umbrella: 'umbrella',
  handbag: 'handbag bag',
  tie: 'tie suit',
  suitcase: 'suitcase luggage',
  frisbee: 'frisbee',
  skis: 'skis skiing snow',
  snowboard: 'snowboard snow',
  'sports ball': 'ball',
  kite: 'kite flying',
  'baseball bat': 'baseball bat',
  'baseball glove': 'baseball glove',
  skateboard: 'skateboard',
  surfboard: 'surfboard surfing wave',
  'tennis racket': 'tennis racket',
  bottle: 'bottle',
  'wine glass': 'wine glass',
  cup: 'cup coffee',
  fork: 'fork',
  knife: 'knife',
  spoon: 'spoon',
  bowl: 'bowl',
  banana: 'banana',
  apple: 'apple',
  sandwich: 'sandwich',
  orange: 'orange fruit',
  broccoli: 'broccoli',
  carrot: 'carrot',
  'hot dog': 'hotdog sausage',
  pizza: 'pizza',
  donut: 'donut',
  cake: 'cake',
  chair: 'chair',
  couch: 'couch sofa',
  'potted plant': 'plant',
  bed: 'bed',
  'dining table': 'table food',
  toilet: 'toilet bathroom',
  tv: 'television tv',
  laptop: 'laptop computer',
  mouse: 'mouse computer',
  remote: 'remote',
  keyboard: 'keyboard',
  'cell phone': 'phone',
  microwave: 'microwave',
  oven: 'oven kitchen',
  toaster: 'toaster',
  sink: 'sink',
  refrigerator: 'refrigerator kitchen',
  book: 'book',
  clock: 'clock',
  vase: 'vase flowers',
  scissors: 'scissors',
  'teddy bear': 'teddy bear',
  'hair drier': 'hair dryer',
  toothbrush: 'toothbrush',
};

export interface SeenInImage {
  objects: DetectedObject[];
  width: number;
  height: number;
  /** Named colour of the whole image (centre-weighted), if any. */
  colour?: string;
  ocrText?: string;
}

const COLOUR_WEIGHT = 0.25;
const SCENE_COLOUR_WEIGHT = 0.15;
const OCR_WEIGHT = 0.5;

export function imageSemantics(sem: TextSemantics, seen: SeenInImage): Float32Array {
  const v = new Float32Array(sem.dims);
  const area = seen.width * seen.height;
  // Per class: many people in a crowd should not drown the one bus; weights grow sub-linearly with count.
  const byClass = new Map<string, { w: number; colours: Map<string, number> }>();
  for (const o of seen.objects) {
    const [x1, y1, x2, y2] = o.bbox;
    const frac = Math.max(0, (x2 - x1) * (y2 - y1)) / area;
    const w = o.confidence * (0.2 + Math.sqrt(frac));
    const c = byClass.get(o.class) ?? { w: 0, colours: new Map() };
    c.w += w;
    if (o.attributes.color) c.colours.set(o.attributes.color, (c.colours.get(o.attributes.color) ?? 0) + w);
    byClass.set(o.class, c);
  }
  for (const [cls, c] of byClass) {
    const w = Math.pow(c.w, 0.7);
    const p = sem.phrase(CLASS_WORDS[cls] ?? cls);
    for (let d = 0; d < sem.dims; d++) v[d]! += p[d]! * w;
    for (const [colour, cw] of c.colours) {
      const q = sem.phrase(colour);
      for (let d = 0; d < sem.dims; d++) v[d]! += q[d]! * COLOUR_WEIGHT * (cw / c.w) * w;
    }
  }
  if (seen.colour) {
    const q = sem.phrase(seen.colour);
    for (let d = 0; d < sem.dims; d++) v[d]! += q[d]! * SCENE_COLOUR_WEIGHT;
  }
  if (seen.ocrText) sem.addWords(v, tokenize(seen.ocrText), OCR_WEIGHT);
  return sem.finish(v);
}
