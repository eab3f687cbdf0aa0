// What the models saw, before any wording: objects grouped by class with counts, colours and rough
// positions, the readable text, the main colours of the picture and a scene guess. The English and Chinese
// writers both render this one structure, so both languages always say the same things.
import type { DetectedObject } from '../../detection/detect.js';
import { colorName } from '../../media/colour.js';
import type { OcrBlock } from '../../ocr/engine.js';
import { guessScene, type Scene } from './scene.js';

export type Position = 'left' | 'centre' | 'right';

export interface ObjectFact {
  confidence: number;
  colour?: string;
  position: Position;
  /** Large, or reaching the bottom of the frame: close to the camera. */
  foreground: boolean;
  /** Share of the image area (0..1). */
  area: number;
}

export interface ClassGroup {
  cls: string;
  objects: ObjectFact[];
  /** Sort key: how much the group matters in the picture. */
  weight: number;
}

export interface Facts {
  width: number;
  height: number;
  /** Most prominent first. */
  groups: ClassGroup[];
  /** Readable lines, in reading order. */
  text: string[];
  /** Named colours covering a good part of the picture, most common first. */
  palette: string[];
  scene?: Scene;
  /** Positions, colours, text and palette were looked at (high detail). */
  detailed: boolean;
}

/** Lines read with less confidence, or with fewer letters/digits, are more often texture than text. */
const MIN_TEXT_CONFIDENCE = 0.85;
const MIN_TEXT_CHARS = 3;
const MAX_TEXT_LINES = 5;
const MAX_TEXT_LINE = 80;

export function buildFacts(
  image: { width: number; height: number },
  objects: readonly DetectedObject[],
  opts: { ocr?: { text: string; blocks: readonly OcrBlock[] }; palette?: string[]; detailed: boolean },
): Facts {
  const byClass = new Map<string, ObjectFact[]>();
  const imageArea = image.width * image.height;
  for (const o of objects) {
    const [x1, y1, x2, y2] = o.bbox;
    const cx = (x1 + x2) / 2 / image.width;
    const area = Math.max(0, (x2 - x1) * (y2 - y1)) / imageArea;
    const fact: ObjectFact = {
      confidence: o.confidence,
      colour: o.attributes.color,
      position: cx < 1 / 3 ? 'left' : cx > 2 / 3 ? 'right' : 'centre',
      foreground: area >= 0.25 || (y2 >= image.height * 0.95 && y2 - y1 >= image.height * 0.5),
      area,
    };
    byClass.set(o.class, [...(byClass.get(o.class) ?? []), fact]);
  }
  const groups = [...byClass]
    .map(([cls, objs]) => ({
      cls,
      objects: objs.sort((a, b) => order(a.position) - order(b.position)),
      weight: objs.reduce((s, f) => s + Math.sqrt(f.area) * f.confidence, 0),
    }))
    .sort((a, b) => b.weight - a.weight);
  const counts = new Map(groups.map((g) => [g.cls, g.objects.length]));
  return {
    width: image.width,
    height: image.height,
    groups,
    text: opts.ocr ? readableLines(opts.ocr.text, opts.ocr.blocks) : [],
    palette: opts.palette ?? [],
    scene: guessScene(counts),
    detailed: opts.detailed,
  };
}

const order = (p: Position) => (p === 'left' ? 0 : p === 'centre' ? 1 : 2);

/** The page's lines (blocks may be single words) whose every block was read confidently. */
function readableLines(page: string, blocks: readonly OcrBlock[]): string[] {
  const out: string[] = [];
  for (const line of page.split('\n')) {
    const text = line.replace(/\s+/g, ' ').trim();
    const chars = (text.match(/[\p{L}\p{N}]/gu) ?? []).length;
    const parts = blocks.filter((b) => b.text.trim() && text.includes(b.text.trim()));
    const confidence = parts.length ? Math.min(...parts.map((b) => b.confidence)) : 0;
    if (confidence < MIN_TEXT_CONFIDENCE || chars < MIN_TEXT_CHARS) continue;
    out.push(text.length > MAX_TEXT_LINE ? `${text.slice(0, MAX_TEXT_LINE - 1)}…` : text);
    if (out.length === MAX_TEXT_LINES) break;
  }
  return out;
}

/** Named colours covering at least `minShare` of a ~2000-pixel grid over the whole image, most common first. */
export function imagePalette(
  image: { data: Uint8Array | Buffer; width: number; height: number },
  minShare = 0.2,
  max = 2,
): string[] {
  const step = Math.max(1, Math.floor(Math.sqrt((image.width * image.height) / 2000)));
  const votes = new Map<string, number>();
  let total = 0;
  for (let y = Math.floor(step / 2); y < image.height; y += step) {
    for (let x = Math.floor(step / 2); x < image.width; x += step) {
      const o = (y * image.width + x) * 3;
      const name = colorName(image.data[o], image.data[o + 1], image.data[o + 2]);
      votes.set(name, (votes.get(name) ?? 0) + 1);
      total++;
    }
  }
  return [...votes]
    .filter(([, n]) => n / total >= minShare)
    .sort((a, b) => b[1] - a[1])
    .slice(0, max)
    .map(([c]) => c);
}
