// What a `prompt` asks of the built-in describer, in English or Chinese. It understands a few kinds of
// request (describe, focus on named classes, count, is-there, read the text); anything else is
// "unsupported", and the describer says so plainly instead of pretending.
import { classMentions } from './vocabulary.js';

export type PromptIntent =
  | { kind: 'describe' }
  | { kind: 'focus'; classes: string[] }
  /** classes empty: count every object. */
  | { kind: 'count'; classes: string[] }
  /** A count of something the detector has no class for ("how many clouds?"). */
  | { kind: 'count-unknown'; noun: string }
  | { kind: 'presence'; classes: string[] }
  | { kind: 'text' }
  /** A question about something no built-in model sees (thoughts, reasons, names, ages, prices). */
  | { kind: 'unsupported'; classes: string[] };

const COUNT_EN = /\bhow many\b|\bcount\b|\bnumber of\b/;
const COUNT_ZH = /多少|几[个只辆位人头匹张把台本架艘]?|数一数|数量/;
const PRESENCE_EN = /^\s*(is|are) there\b|\b(any|do you see|can you see|is there|are there)\b/;
const PRESENCE_ZH = /有没有|是否有|有.*吗/;
const TEXT_EN = /\b(text|read|written|writing|says?|sign|signs|words?|letters?|label)\b/;
const TEXT_ZH = /文字|写|字|标志|招牌/;
const DESCRIBE_EN =
  /\b(describe|description|caption|summari[sz]e|summary|what('s| is| are)?\b.*\b(in|on|shown|happening|there)|what do you see|tell me about|overview|scene)\b/;
const DESCRIBE_ZH = /描述|描写|介绍|说明|什么|内容|场景|画面|图片|图中|照片/;
const BEYOND_EN =
  /\b(think|thinks|thinking|feel|feels|feeling|why|mood|emotions?|name|named|who|age|how old|brand|price|cost|weather|breed|species|model of)\b/;
const BEYOND_ZH = /想什么|在想|为什么|感觉|心情|情绪|名字|是谁|谁|年龄|多大|品牌|价格|多少钱|天气|品种/;
const ALL_OBJECTS_EN = /^(objects?|things?|items?)$/;

export function parsePrompt(prompt: string | undefined, labels: readonly string[]): PromptIntent {
  const p = (prompt ?? '').trim().toLowerCase();
  if (!p) return { kind: 'describe' };
  const classes = mentionedClasses(p, labels);
  if (BEYOND_EN.test(p) || BEYOND_ZH.test(p)) return { kind: 'unsupported', classes };
  const counting = COUNT_EN.test(p) || COUNT_ZH.test(p);
  if (counting) {
    if (classes.length) return { kind: 'count', classes };
    const enNoun = /how many ([\p{L} -]+?)(?:\s+(?:are|is|do|does|can|could|in|on|at|there|you)\b|[?.!,]|$)/u
      .exec(p)?.[1]
      ?.trim();
    const noun = enNoun && !/^(are|is|there|do|does|of them)$/.test(enNoun) ? enNoun : undefined;
    const zhHit =
      /(?:多少|几)[个只辆位头匹张把台本架艘朵棵条块]?([\p{Script=Han}]{1,4}?)(?:[？?。，,]|在|呢|吗|$)/u.exec(p)?.[1];
    const zhNoun = zhHit && !/^[个只辆位头匹张把台本架艘朵棵条块]$/u.test(zhHit) ? zhHit : undefined;
    if (/物体|东西/.test(p) || (noun && ALL_OBJECTS_EN.test(noun)) || (!noun && !zhNoun))
      return { kind: 'count', classes: [] };
    if (!noun) return { kind: 'count-unknown', noun: zhNoun! };
    return { kind: 'count-unknown', noun };
  }
  if (classes.length && (PRESENCE_EN.test(p) || PRESENCE_ZH.test(p))) return { kind: 'presence', classes };
  if (classes.length) return { kind: 'focus', classes };
  if (TEXT_EN.test(p) || TEXT_ZH.test(p)) return { kind: 'text' };
  if (DESCRIBE_EN.test(p) || DESCRIBE_ZH.test(p)) return { kind: 'describe' };
  return { kind: 'unsupported', classes: [] };
}

/** Classes the prompt names, in the order first named; a longer name wins over the one inside it (hot dog, dog). */
export function mentionedClasses(prompt: string, labels: readonly string[]): string[] {
  let rest = prompt.toLowerCase();
  const found: { cls: string; at: number }[] = [];
  for (const m of mentionsFor(labels)) {
    const re = m.zh
      ? new RegExp(escape(m.word), 'u')
      : new RegExp(`(?<![\\p{L}\\p{N}])${escape(m.word)}(?![\\p{L}\\p{N}])`, 'u');
    const hit = re.exec(rest);
    if (!hit) continue;
    if (!found.some((f) => f.cls === m.cls)) found.push({ cls: m.cls, at: hit.index });
    rest = rest.slice(0, hit.index) + ' '.repeat(hit[0].length) + rest.slice(hit.index + hit[0].length);
  }
  return found.sort((a, b) => a.at - b.at).map((f) => f.cls);
}

const cache = new Map<string, ReturnType<typeof classMentions>>();
function mentionsFor(labels: readonly string[]) {
  const key = labels.join('\n');
  let m = cache.get(key);
  if (!m) cache.set(key, (m = classMentions(labels)));
  return m;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
