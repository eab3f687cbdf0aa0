// Facts + prompt intent -> Chinese prose (简体中文): the same content as english.ts, with Chinese word
// order (place before the thing: "左边有两只长颈鹿"), measure words and Chinese punctuation.
import type { ClassGroup, Facts, ObjectFact, Position } from './facts.js';
import type { PromptIntent } from './prompt.js';
import { chineseColour, chineseCount, chineseName, measureWord } from './vocabulary.js';

const MAIN_GROUPS = 4;
const MORE_GROUPS = 4;
const CAPABILITIES = '它只能识别、计数和定位常见物体（人、动物、车辆、家具、食物和日用品），并读取文字';

export function writeChinese(facts: Facts, intent: PromptIntent): string {
  switch (intent.kind) {
    case 'describe':
      return describe(facts);
    case 'focus':
      return focus(facts, intent.classes);
    case 'count':
      return count(facts, intent.classes);
    case 'count-unknown':
      return `内置模型无法数“${intent.noun}”：${CAPABILITIES}。${describe(facts)}`;
    case 'presence':
      return presence(facts, intent.classes);
    case 'text':
      return text(facts);
    case 'unsupported':
      return `内置模型无法回答这个问题：${CAPABILITIES}。它看到的是：${intent.classes.length ? focus(facts, intent.classes) : describe(facts)}`;
  }
}

function describe(f: Facts): string {
  let out = '';
  if (f.scene) out += `这看起来是${f.scene.zh}。`;
  if (f.groups.length === 0) {
    out += '内置模型在这张图片中没有识别出它认识的物体。';
  } else if (f.detailed) {
    out += `画面中，${f.groups.slice(0, MAIN_GROUPS).map(groupClause).join('；')}。`;
  } else {
    out += `画面中有${list(f.groups.slice(0, MAIN_GROUPS).map((g) => chineseCount(g.cls, g.objects.length)))}。`;
  }
  const more = f.groups.slice(MAIN_GROUPS, MAIN_GROUPS + MORE_GROUPS).map((g) => chineseCount(g.cls, g.objects.length));
  const rest = f.groups.slice(MAIN_GROUPS + MORE_GROUPS).reduce((s, g) => s + g.objects.length, 0);
  if (rest) more.push(`另外${rest}个物体`);
  if (more.length) out += `还有${list(more)}。`;
  if (f.text.length) out += textSentence(f.text);
  if (f.detailed && f.palette.length) out += `主要颜色是${list(f.palette.map(chineseColour))}。`;
  return out;
}

function focus(f: Facts, classes: string[]): string {
  const found = classes.map((c) => f.groups.find((g) => g.cls === c)).filter((g): g is ClassGroup => !!g);
  const missing = classes.filter((c) => !found.some((g) => g.cls === c));
  let out = '';
  if (found.length) {
    out += f.detailed
      ? `画面中，${found.map(groupClause).join('；')}。`
      : `画面中有${list(found.map((g) => chineseCount(g.cls, g.objects.length)))}。`;
  }
  if (missing.length) out += `图中没有看到${orList(missing.map(chineseName))}。`;
  if (!found.length && f.groups.length) {
    out += `图中有${list(f.groups.slice(0, MAIN_GROUPS).map((g) => chineseCount(g.cls, g.objects.length)))}。`;
  }
  return out;
}

function count(f: Facts, classes: string[]): string {
  if (classes.length === 0) {
    const total = f.groups.reduce((s, g) => s + g.objects.length, 0);
    if (total === 0) return '图中没有看到内置模型认识的物体。';
    return `图中共有${total}个物体：${list(f.groups.map((g) => digits(g.cls, g.objects.length)))}。`;
  }
  return classes
    .map((c) => {
      const g = f.groups.find((x) => x.cls === c);
      if (!g) return `图中没有看到${chineseName(c)}。`;
      const where = f.detailed ? spread(g.objects, c) : '';
      return `图中有${digits(c, g.objects.length)}${where ? `，${where}` : ''}。`;
    })
    .join('');
}

function presence(f: Facts, classes: string[]): string {
  return classes
    .map((c) => {
      const g = f.groups.find((x) => x.cls === c);
      if (!g) return `没有，图中没有看到${chineseName(c)}。`;
      return f.detailed ? `有，${groupClause(g)}。` : `有，图中有${chineseCount(g.cls, g.objects.length)}。`;
    })
    .join('');
}

function text(f: Facts): string {
  if (!f.detailed) return '只有在高细节（detail 为 "high"）下才会读取文字，请用 detail "high" 再试一次。';
  return f.text.length ? textSentence(f.text) : '图中没有找到可以读出的文字。';
}

function textSentence(lines: string[]): string {
  return `图中可以读到的文字：${lines.map((l) => `“${l}”`).join('、')}。`;
}

const PLACE: Record<Position, string> = { left: '左边', centre: '中间', right: '右边' };
const FRONT: Record<Position, string> = { left: '左前方', centre: '正前方', right: '右前方' };

/** "中间有一只棕色的长颈鹿", "有三只长颈鹿，左边一只，右边两只". */
function groupClause(g: ClassGroup): string {
  const n = g.objects.length;
  const colours = new Set(g.objects.map((o) => o.colour));
  const colour = colours.size === 1 && g.objects[0]!.colour ? `${chineseColour(g.objects[0]!.colour)}的` : undefined;
  const thing = chineseCount(g.cls, n, colour);
  if (n === 1) return `${place(g.objects[0]!)}有${thing}`;
  const positions = new Set(g.objects.map((o) => o.position));
  if (positions.size === 1) return `${PLACE[g.objects[0]!.position]}有${thing}`;
  return `有${thing}，${spread(g.objects, g.cls)}`;
}

function place(o: ObjectFact): string {
  return o.foreground ? FRONT[o.position] : PLACE[o.position];
}

/** "左边一只，右边两只", "分布在整个画面". */
function spread(objects: ObjectFact[], cls: string): string {
  if (objects.length === 1) return `在${place(objects[0]!)}`;
  const byPos = new Map<Position, number>();
  for (const o of objects) byPos.set(o.position, (byPos.get(o.position) ?? 0) + 1);
  if (byPos.size === 1) return `都在${PLACE[objects[0]!.position]}`;
  if (byPos.size === 3 && objects.length > 4) return '分布在整个画面';
  return [...byPos]
    .map(([p, k]) => `${PLACE[p]}${k === 2 ? '两' : k <= 10 ? '零一二三四五六七八九十'[k] : k}${measureWord(cls)}`)
    .join('，');
}

/** Counts in answers are digits, as in "图中有2只长颈鹿". */
function digits(cls: string, n: number): string {
  return `${n}${measureWord(cls)}${chineseName(cls)}`;
}

function list(items: string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join('、')}和${items[items.length - 1]}`;
}

function orList(items: string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join('、')}或${items[items.length - 1]}`;
}
