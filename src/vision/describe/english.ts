// Facts + prompt intent -> English prose. Counts in answers to count questions are digits ("There are 2
// giraffes"), counts inside descriptions are words ("two giraffes"), as a person would write them.
import type { ClassGroup, Facts, ObjectFact, Position } from './facts.js';
import type { PromptIntent } from './prompt.js';
import { englishCount, englishName, numberWord } from './vocabulary.js';

const MAIN_GROUPS = 4;
const MORE_GROUPS = 4;
const CAPABILITIES =
  'it can name, count and locate common objects (people, animals, vehicles, furniture, food and household items) and read text';

export function writeEnglish(facts: Facts, intent: PromptIntent): string {
  switch (intent.kind) {
    case 'describe':
      return describe(facts);
    case 'focus':
      return focus(facts, intent.classes);
    case 'count':
      return count(facts, intent.classes);
    case 'count-unknown':
      return `The built-in model cannot count ${intent.noun}: ${CAPABILITIES}. ${describe(facts)}`;
    case 'presence':
      return presence(facts, intent.classes);
    case 'text':
      return text(facts);
    case 'unsupported':
      return `The built-in describer cannot answer that question; ${CAPABILITIES}. Here is what it sees: ${intent.classes.length ? focus(facts, intent.classes) : describe(facts)}`;
  }
}

function describe(f: Facts): string {
  const out: string[] = [];
  if (f.scene) out.push(`This looks like ${f.scene.en}.`);
  if (f.groups.length === 0) {
    out.push('The built-in model does not recognise any of the objects it knows in this picture.');
  } else {
    const main = f.groups.slice(0, MAIN_GROUPS).map((g) => groupPhrase(g, f.detailed));
    out.push(`The picture shows ${list(main)}.`);
    const more = f.groups
      .slice(MAIN_GROUPS, MAIN_GROUPS + MORE_GROUPS)
      .map((g) => englishCount(g.cls, g.objects.length));
    const rest = f.groups.slice(MAIN_GROUPS + MORE_GROUPS).reduce((s, g) => s + g.objects.length, 0);
    if (rest) more.push(`${numberWord(rest)} other object${rest === 1 ? '' : 's'}`);
    if (more.length) out.push(`There ${isAre(f.groups[MAIN_GROUPS]!)} also ${list(more)}.`);
  }
  if (f.text.length) out.push(textSentence(f.text));
  if (f.detailed && f.palette.length)
    out.push(`The main colour${f.palette.length > 1 ? 's are' : ' is'} ${list(f.palette)}.`);
  return out.join(' ');
}

function focus(f: Facts, classes: string[]): string {
  const found = classes.map((c) => f.groups.find((g) => g.cls === c)).filter((g): g is ClassGroup => !!g);
  const missing = classes.filter((c) => !found.some((g) => g.cls === c));
  const out: string[] = [];
  if (found.length) out.push(`The picture shows ${list(found.map((g) => groupPhrase(g, f.detailed)))}.`);
  if (missing.length) out.push(`I cannot see any ${orList(missing.map((c) => englishName(c, 2)))} in this picture.`);
  if (!found.length && f.groups.length) {
    out.push(`It shows ${list(f.groups.slice(0, MAIN_GROUPS).map((g) => englishCount(g.cls, g.objects.length)))}.`);
  }
  return out.join(' ');
}

function count(f: Facts, classes: string[]): string {
  if (classes.length === 0) {
    const total = f.groups.reduce((s, g) => s + g.objects.length, 0);
    if (total === 0) return 'I cannot see any of the objects the built-in model knows in this picture.';
    const parts = f.groups.map((g) => `${g.objects.length} ${englishName(g.cls, g.objects.length)}`);
    return `I count ${total} object${total === 1 ? '' : 's'}: ${list(parts)}.`;
  }
  const sentences = classes.map((c) => {
    const g = f.groups.find((x) => x.cls === c);
    const n = g?.objects.length ?? 0;
    if (n === 0) return `I cannot see any ${englishName(c, 2)} in this picture.`;
    const where = f.detailed ? spread(g!.objects) : '';
    return `There ${n === 1 ? 'is' : 'are'} ${n} ${englishName(c, n)} in the picture${where ? `, ${where}` : ''}.`;
  });
  return sentences.join(' ');
}

function presence(f: Facts, classes: string[]): string {
  return classes
    .map((c) => {
      const g = f.groups.find((x) => x.cls === c);
      if (!g) return `No, I cannot see any ${englishName(c, 2)} in this picture.`;
      return `Yes, there ${isAre(g)} ${groupPhrase(g, f.detailed)}.`;
    })
    .join(' ');
}

function text(f: Facts): string {
  if (!f.detailed) return 'Text is only read at high detail; ask again with detail "high".';
  return f.text.length ? textSentence(f.text) : 'I cannot find any readable text in this picture.';
}

function textSentence(lines: string[]): string {
  return `The text in the picture reads ${list(lines.map((l) => `"${l}"`))}.`;
}

/** "a brown giraffe in the centre foreground", "two people, one on the left and one on the right". */
function groupPhrase(g: ClassGroup, detailed: boolean): string {
  const n = g.objects.length;
  if (!detailed) return englishCount(g.cls, n);
  const colours = new Set(g.objects.map((o) => o.colour));
  const colour = colours.size === 1 ? g.objects[0]!.colour : undefined;
  const noun = englishCount(g.cls, n, colour);
  const where = n === 1 ? place(g.objects[0]!) : spread(g.objects);
  // "two giraffes on the left" but "three giraffes, one on the left and two on the right"
  return `${noun}${/^(one|two|three|four|five|six|seven|eight|nine|ten|\d)/.test(where) ? ', ' : ' '}${where}`;
}

const PLACE: Record<Position, string> = { left: 'on the left', centre: 'in the centre', right: 'on the right' };

function place(o: ObjectFact): string {
  return o.foreground ? `in the ${o.position === 'centre' ? 'centre' : o.position} foreground` : PLACE[o.position];
}

/** Where several objects are: "on the left", "one on the left and two on the right", "across the picture". */
function spread(objects: ObjectFact[]): string {
  const byPos = new Map<Position, number>();
  for (const o of objects) byPos.set(o.position, (byPos.get(o.position) ?? 0) + 1);
  if (objects.length === 1) return place(objects[0]!);
  if (byPos.size === 1) return PLACE[objects[0]!.position];
  if (byPos.size === 3 && objects.length > 4) return 'across the picture';
  return list([...byPos].map(([p, k]) => `${numberWord(k)} ${PLACE[p]}`));
}

const isAre = (g: ClassGroup) => (g.objects.length === 1 ? 'is' : 'are');

function list(items: string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function orList(items: string[]): string {
  if (items.length <= 1) return items[0] ?? '';
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;
}
