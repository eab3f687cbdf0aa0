// Words the describer needs for the 80 COCO classes in English and Chinese: plural forms, Chinese names with
// their measure words, the words a prompt may use for a class, colour names and small numbers. A label this
// table does not know (a bring-your-own model's) is used as it is.

interface ClassWords {
  /** Plural when not name + "s". */
  plural?: string;
  /** Chinese name and measure word (个 when left out). */
  zh: string;
  measure?: string;
  /** Other English words a prompt may use (singular and plural), and other Chinese names. */
  synonyms?: string[];
  zhSynonyms?: string[];
}

const C: Record<string, ClassWords> = {
  person: {
    plural: 'people',
    zh: '人',
    synonyms: [
      'persons',
      'man',
      'men',
      'woman',
      'women',
      'child',
      'children',
      'kid',
      'kids',
      'boy',
      'boys',
      'girl',
      'girls',
      'player',
      'players',
      'pedestrian',
      'pedestrians',
      'human',
      'humans',
      'someone',
      'anyone',
      'people',
    ],
    zhSynonyms: ['人们', '行人', '男人', '女人', '孩子', '小孩', '人'],
  },
  bicycle: { zh: '自行车', measure: '辆', synonyms: ['bike', 'bikes'], zhSynonyms: ['单车'] },
  car: { zh: '汽车', measure: '辆', zhSynonyms: ['小汽车', '轿车', '车'] },
  motorcycle: { zh: '摩托车', measure: '辆', synonyms: ['motorbike', 'motorbikes'] },
  airplane: {
    zh: '飞机',
    measure: '架',
    synonyms: ['plane', 'planes', 'aeroplane', 'aeroplanes', 'aircraft', 'jet', 'jets'],
  },
  bus: { plural: 'buses', zh: '公共汽车', measure: '辆', zhSynonyms: ['公交车', '巴士'] },
  train: { zh: '火车', measure: '列', zhSynonyms: ['列车'] },
  truck: { zh: '卡车', measure: '辆', synonyms: ['lorry', 'lorries'], zhSynonyms: ['货车'] },
  boat: { zh: '船', measure: '艘', synonyms: ['ship', 'ships'] },
  'traffic light': { zh: '红绿灯', measure: '个', zhSynonyms: ['交通灯', '信号灯'] },
  'fire hydrant': { zh: '消防栓', measure: '个' },
  'stop sign': { zh: '停车标志', measure: '块' },
  'parking meter': { zh: '停车计时器', measure: '个' },
  bench: { plural: 'benches', zh: '长椅', measure: '张' },
  bird: { zh: '鸟', measure: '只' },
  cat: { zh: '猫', measure: '只', synonyms: ['kitten', 'kittens'] },
  dog: { zh: '狗', measure: '只', synonyms: ['puppy', 'puppies'] },
  horse: { zh: '马', measure: '匹' },
  sheep: { plural: 'sheep', zh: '羊', measure: '只', synonyms: ['lamb', 'lambs'], zhSynonyms: ['绵羊'] },
  cow: { zh: '牛', measure: '头', synonyms: ['cattle'], zhSynonyms: ['奶牛'] },
  elephant: { zh: '大象', measure: '头' },
  bear: { zh: '熊', measure: '只' },
  zebra: { zh: '斑马', measure: '匹' },
  giraffe: { zh: '长颈鹿', measure: '只' },
  backpack: { zh: '背包', measure: '个' },
  umbrella: { zh: '雨伞', measure: '把', zhSynonyms: ['伞'] },
  handbag: { zh: '手提包', measure: '个', synonyms: ['bag', 'bags', 'purse', 'purses'], zhSynonyms: ['包'] },
  tie: { zh: '领带', measure: '条' },
  suitcase: { zh: '行李箱', measure: '个', synonyms: ['luggage'] },
  frisbee: { zh: '飞盘', measure: '个' },
  skis: { plural: 'skis', zh: '滑雪板', measure: '副', synonyms: ['ski'] },
  snowboard: { zh: '单板滑雪板', measure: '块' },
  'sports ball': { zh: '球', measure: '个', synonyms: ['ball', 'balls', 'football', 'soccer ball', 'basketball'] },
  kite: { zh: '风筝', measure: '只' },
  'baseball bat': { zh: '棒球棒', measure: '根' },
  'baseball glove': { zh: '棒球手套', measure: '副' },
  skateboard: { zh: '滑板', measure: '块' },
  surfboard: { zh: '冲浪板', measure: '块' },
  'tennis racket': { zh: '网球拍', measure: '把', synonyms: ['racket', 'rackets'] },
  bottle: { zh: '瓶子', measure: '个', zhSynonyms: ['瓶'] },
  'wine glass': { plural: 'wine glasses', zh: '酒杯', measure: '个' },
  cup: { zh: '杯子', measure: '个', synonyms: ['mug', 'mugs'], zhSynonyms: ['杯'] },
  fork: { zh: '叉子', measure: '把' },
  knife: { plural: 'knives', zh: '刀', measure: '把', zhSynonyms: ['刀子'] },
  spoon: { zh: '勺子', measure: '把' },
  bowl: { zh: '碗', measure: '个' },
  banana: { zh: '香蕉', measure: '根' },
  apple: { zh: '苹果', measure: '个' },
  sandwich: { plural: 'sandwiches', zh: '三明治', measure: '个' },
  orange: { zh: '橙子', measure: '个', zhSynonyms: ['橘子'] },
  broccoli: { plural: 'broccoli', zh: '西兰花', measure: '棵' },
  carrot: { zh: '胡萝卜', measure: '根' },
  'hot dog': { zh: '热狗', measure: '个' },
  pizza: { zh: '披萨', measure: '个', zhSynonyms: ['比萨'] },
  donut: { zh: '甜甜圈', measure: '个', synonyms: ['doughnut', 'doughnuts'] },
  cake: { zh: '蛋糕', measure: '块' },
  chair: { zh: '椅子', measure: '把' },
  couch: { plural: 'couches', zh: '沙发', measure: '张', synonyms: ['sofa', 'sofas'] },
  'potted plant': {
    zh: '盆栽',
    measure: '盆',
    synonyms: ['plant', 'plants', 'houseplant', 'houseplants'],
    zhSynonyms: ['植物'],
  },
  bed: { zh: '床', measure: '张' },
  'dining table': { zh: '餐桌', measure: '张', synonyms: ['table', 'tables'], zhSynonyms: ['桌子'] },
  toilet: { zh: '马桶', measure: '个' },
  tv: {
    plural: 'TVs',
    zh: '电视',
    measure: '台',
    synonyms: ['television', 'televisions', 'tvs', 'monitor', 'monitors', 'screen', 'screens'],
  },
  laptop: { zh: '笔记本电脑', measure: '台', synonyms: ['notebook', 'computer', 'computers'], zhSynonyms: ['电脑'] },
  mouse: { plural: 'mice', zh: '鼠标', measure: '个' },
  remote: { zh: '遥控器', measure: '个', synonyms: ['remote control', 'remote controls'] },
  keyboard: { zh: '键盘', measure: '个' },
  'cell phone': {
    zh: '手机',
    measure: '部',
    synonyms: ['phone', 'phones', 'mobile phone', 'smartphone', 'smartphones'],
  },
  microwave: { zh: '微波炉', measure: '台' },
  oven: { zh: '烤箱', measure: '台' },
  toaster: { zh: '烤面包机', measure: '台' },
  sink: { zh: '水槽', measure: '个' },
  refrigerator: { zh: '冰箱', measure: '台', synonyms: ['fridge', 'fridges'] },
  book: { zh: '书', measure: '本' },
  clock: { zh: '时钟', measure: '个', zhSynonyms: ['钟'] },
  vase: { zh: '花瓶', measure: '个' },
  scissors: { plural: 'pairs of scissors', zh: '剪刀', measure: '把' },
  'teddy bear': { zh: '泰迪熊', measure: '只', zhSynonyms: ['玩具熊'] },
  'hair drier': { zh: '吹风机', measure: '个', synonyms: ['hair dryer', 'hairdryer'] },
  toothbrush: { plural: 'toothbrushes', zh: '牙刷', measure: '把' },
};

/** Classes whose singular takes "an". */
const AN = /^[aeiou]/i;

export function englishName(cls: string, count: number): string {
  if (count === 1) return cls === 'scissors' ? 'pair of scissors' : cls === 'tv' ? 'TV' : cls;
  return C[cls]?.plural ?? `${cls}s`;
}

/** "a giraffe", "an airplane", "two giraffes", "12 people"; an adjective (colour) goes before the noun. */
export function englishCount(cls: string, count: number, adjective?: string): string {
  const noun = adjective ? `${adjective} ${englishName(cls, count)}` : englishName(cls, count);
  if (count === 1) return `${AN.test(noun) ? 'an' : 'a'} ${noun}`;
  return `${numberWord(count)} ${noun}`;
}

const NUMBERS = ['no', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten'];
export function numberWord(n: number): string {
  return NUMBERS[n] ?? String(n);
}

export function chineseName(cls: string): string {
  return C[cls]?.zh ?? cls;
}

export function measureWord(cls: string): string {
  return C[cls]?.measure ?? '个';
}

const ZH_DIGITS = ['零', '一', '两', '三', '四', '五', '六', '七', '八', '九', '十'];
/** 一只长颈鹿, 两只长颈鹿, 12个人; an adjective phrase (棕色的) goes before the noun. */
export function chineseCount(cls: string, count: number, adjective?: string): string {
  const n = count <= 10 ? ZH_DIGITS[count] : String(count);
  return `${n}${measureWord(cls)}${adjective ?? ''}${chineseName(cls)}`;
}

const COLOURS_ZH: Record<string, string> = {
  black: '黑色',
  white: '白色',
  gray: '灰色',
  brown: '棕色',
  red: '红色',
  orange: '橙色',
  yellow: '黄色',
  green: '绿色',
  blue: '蓝色',
  purple: '紫色',
  pink: '粉色',
};
export function chineseColour(c: string): string {
  return COLOURS_ZH[c] ?? c;
}

/** Every word (English, lower case) or Chinese name a prompt may use for a class, longest first. */
export function classMentions(labels: readonly string[]): { word: string; cls: string; zh: boolean }[] {
  const out: { word: string; cls: string; zh: boolean }[] = [];
  for (const cls of labels) {
    const w = C[cls];
    const en = new Set([cls, englishName(cls, 2).toLowerCase(), `${cls}s`, `${cls}es`, ...(w?.synonyms ?? [])]);
    for (const word of en) out.push({ word: word.toLowerCase(), cls, zh: false });
    for (const word of new Set([w?.zh, ...(w?.zhSynonyms ?? [])])) if (word) out.push({ word, cls, zh: true });
  }
  return out.sort((a, b) => b.word.length - a.word.length);
}
