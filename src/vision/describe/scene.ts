// A scene guess from the set of detected classes: the first rule whose classes are present wins, so the
// specific rules (a toilet means a bathroom) come before the general ones (a car means a street).

export interface Scene {
  en: string;
  zh: string;
}

interface Rule {
  /** All of these must be present... */
  all?: string[];
  /** ...and at least `min` (default 1) of these. */
  any?: string[];
  min?: number;
  scene: Scene;
}

const TABLEWARE = [
  'chair',
  'fork',
  'knife',
  'spoon',
  'cup',
  'wine glass',
  'bowl',
  'bottle',
  'pizza',
  'cake',
  'sandwich',
  'donut',
];

const RULES: Rule[] = [
  { any: ['toilet'], scene: { en: 'a bathroom', zh: '浴室' } },
  { any: ['bed'], scene: { en: 'a bedroom', zh: '卧室' } },
  { all: ['dining table'], any: ['chair'], scene: { en: 'a dining room', zh: '餐厅' } },
  { all: ['dining table'], any: TABLEWARE, scene: { en: 'a meal at a table', zh: '餐桌上的一餐' } },
  { any: ['oven', 'microwave', 'refrigerator', 'toaster', 'sink'], scene: { en: 'a kitchen', zh: '厨房' } },
  { any: ['couch', 'tv', 'remote'], scene: { en: 'a living room', zh: '客厅' } },
  { any: ['laptop', 'keyboard', 'mouse'], scene: { en: 'a desk or an office', zh: '办公桌或办公室' } },
  { any: ['skis', 'snowboard'], scene: { en: 'a snowy slope', zh: '雪坡' } },
  { any: ['surfboard'], scene: { en: 'a beach or the sea', zh: '海滩或海边' } },
  {
    any: ['baseball bat', 'baseball glove', 'tennis racket', 'sports ball'],
    scene: { en: 'a sports game', zh: '一场体育比赛' },
  },
  { any: ['skateboard'], scene: { en: 'skateboarding outdoors', zh: '户外滑板运动' } },
  { any: ['train'], scene: { en: 'a railway', zh: '铁路' } },
  { any: ['airplane'], scene: { en: 'an airport or the sky', zh: '机场或天空' } },
  { any: ['boat'], scene: { en: 'a harbour or a river', zh: '港口或河边' } },
  {
    any: ['traffic light', 'stop sign', 'fire hydrant', 'parking meter', 'bus'],
    scene: { en: 'a street', zh: '街道' },
  },
  { any: ['car', 'truck', 'motorcycle', 'bicycle'], min: 2, scene: { en: 'a street', zh: '街道' } },
  {
    any: ['giraffe', 'zebra', 'elephant'],
    scene: { en: 'wildlife, perhaps on a savanna or in a zoo', zh: '野生动物，可能在草原或动物园' },
  },
  { any: ['cow', 'sheep', 'horse'], scene: { en: 'a farm or a pasture', zh: '农场或牧场' } },
  { any: ['frisbee', 'kite'], scene: { en: 'a park', zh: '公园' } },
];

/** `counts`: class -> number of detections; `min` counts detections, not distinct classes. */
export function guessScene(counts: ReadonlyMap<string, number>): Scene | undefined {
  for (const r of RULES) {
    if (r.all && !r.all.every((c) => counts.has(c))) continue;
    if (r.any) {
      const n = r.any.reduce((s, c) => s + (counts.get(c) ?? 0), 0);
      if (n < (r.min ?? 1)) continue;
    }
    return r.scene;
  }
  return undefined;
}
