// From recognised strips to what a reader sees: words (split on the recogniser's space class and on wide
// gaps between characters), blocks in reading order (rows by vertical overlap, then left to right), and the
// page text with one row per line.
import type { Point } from './geometry.js';
import { boundsOf } from './geometry.js';
import { REC_HEIGHT, type RecognizedLine } from './recognize-text.js';

export type BBox = [number, number, number, number];

export interface OcrBlock {
  text: string;
  /** [x1, y1, x2, y2] in source pixels. */
  bbox: BBox;
  /** 0-1: mean probability of the block's characters. */
  confidence: number;
}

export interface OcrWord extends OcrBlock {
  /** tl, tr, br, bl in source pixels (rotated text keeps its slant). */
  corners: Point[];
}

export interface LineText {
  words: OcrWord[];
  block: OcrBlock;
}

/**
 * When a blank run of columns between two letters is a word space: wide against the text's height and
 * against the line's usual letter gap (so letter-spaced headings stay whole), or very wide outright.
 */
function isWordGap(gap: number, inkHeight: number, usualGap: number): boolean {
  return (gap >= 0.25 * inkHeight && gap >= 2.5 * usualGap) || (gap >= 0.42 * inkHeight && gap >= 1.5 * usualGap);
}

/** Decimal points (0.76, 1,200) and the inside of brackets have wide blanks that are not spaces. */
function staysJoined(before: string | undefined, prev: string, next: string): boolean {
  if ((prev === '.' || prev === ',') && /\d/.test(next) && before !== undefined && /\d/.test(before)) return true;
  return /[([{]/.test(prev) || /[)\]}]/.test(next);
}

function median(v: number[]): number {
  const s = v.slice().sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.floor(s.length / 2)];
}

const CJK = /[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;

const lerp = (a: Point, b: Point, t: number): Point => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t];

function clampBox(points: Point[], width: number, height: number): BBox {
  const [x1, y1, x2, y2] = boundsOf(points);
  const cx = (v: number) => Math.round(Math.min(Math.max(v, 0), width));
  const cy = (v: number) => Math.round(Math.min(Math.max(v, 0), height));
  return [cx(x1), cy(y1), cx(x2), cy(y2)];
}

/** Full-width forms (common in the Chinese-trained model's output) read as ASCII in non-CJK text. */
function normaliseLatin(text: string): string {
  return CJK.test(text) ? text : text.normalize('NFKC');
}

/** Splits one recognised strip into words with their own sub-quads. */
export function lineWords(line: RecognizedLine, width: number, height: number): LineText | null {
  const chars = line.chars;
  if (chars.length === 0) return null;
  const stripW = line.aspect * REC_HEIGHT;
  // The widest blank column run strictly between two character positions, if any.
  const blankBetween = (a: number, b: number): [number, number] | null => {
    let best: [number, number] | null = null;
    for (const r of line.ink.blanks) {
      if (r[0] >= a && r[1] <= b && (best === null || r[1] - r[0] > best[1] - best[0])) best = r;
    }
    return best;
  };
  // Blank width between each pair of neighbouring letters (0 where they touch), in strip pixels.
  const gapAfter = chars.map((c, i) => {
    const next = chars[i + 1];
    if (!next || c.text.trim() === '' || next.text.trim() === '') return 0;
    const r = blankBetween(c.at, next.at);
    return r === null ? 0 : (r[1] - r[0]) * stripW;
  });
  // Touching letters (no blank at all) say nothing about the font's spacing, so they are left out.
  const letterGaps = gapAfter.filter((g) => g > 0);
  const usualGap = letterGaps.length >= 3 ? median(letterGaps) : 0.15 * line.ink.inkHeight;
  const groups: (typeof chars)[] = [];
  let cur: typeof chars = [];
  for (const [i, c] of chars.entries()) {
    if (c.text.trim() === '') {
      if (cur.length > 0) groups.push(cur);
      cur = [];
      continue;
    }
    const prev = cur[cur.length - 1];
    if (
      prev !== undefined &&
      line.ink.inkHeight > 0 &&
      !CJK.test(c.text) &&
      !CJK.test(prev.text) &&
      !staysJoined(chars[i - 2]?.text, prev.text, c.text) &&
      isWordGap(gapAfter[i - 1], line.ink.inkHeight, usualGap)
    ) {
      groups.push(cur);
      cur = [];
    }
    cur.push(c);
  }
  if (cur.length > 0) groups.push(cur);
  if (groups.length === 0) return null;

  // Word edges: the blank run between two words where there is one, else halfway between their letters.
  const cuts: [number, number][] = [];
  for (let k = 1; k < groups.length; k++) {
    const a = groups[k - 1][groups[k - 1].length - 1].at;
    const b = groups[k][0].at;
    cuts.push(blankBetween(a, b) ?? [(a + b) / 2, (a + b) / 2]);
  }
  const [tl, tr, br, bl] = line.corners;
  const words: OcrWord[] = groups.map((g, k) => {
    const u0 = k === 0 ? 0 : cuts[k - 1][1];
    const u1 = k === groups.length - 1 ? 1 : cuts[k][0];
    const corners = [lerp(tl, tr, u0), lerp(tl, tr, u1), lerp(bl, br, u1), lerp(bl, br, u0)];
    const text = normaliseLatin(g.map((c) => c.text).join(''));
    return {
      text,
      corners,
      bbox: clampBox(corners, width, height),
      confidence: g.reduce((a, c) => a + c.prob, 0) / g.length,
    };
  });
  const text = words.map((w) => w.text).join(' ');
  return { words, block: { text, bbox: clampBox(line.corners, width, height), confidence: line.confidence } };
}

/** Rows of blocks top to bottom, each row left to right. A block joins the row it overlaps most vertically. */
export function readingOrder<T extends { bbox: BBox }>(items: T[]): T[][] {
  const sorted = items.slice().sort((a, b) => a.bbox[1] + a.bbox[3] - (b.bbox[1] + b.bbox[3]));
  const rows: { y1: number; y2: number; items: T[] }[] = [];
  for (const it of sorted) {
    const [, y1, , y2] = it.bbox;
    const h = Math.max(1, y2 - y1);
    let best: (typeof rows)[number] | null = null;
    let bestOverlap = 0;
    for (const row of rows) {
      const rowY1 = row.y1 / row.items.length;
      const rowY2 = row.y2 / row.items.length;
      const overlap = Math.min(y2, rowY2) - Math.max(y1, rowY1);
      const rel = overlap / Math.min(h, Math.max(1, rowY2 - rowY1));
      if (rel >= 0.5 && rel > bestOverlap) {
        best = row;
        bestOverlap = rel;
      }
    }
    if (best) {
      best.items.push(it);
      best.y1 += y1;
      best.y2 += y2;
    } else {
      rows.push({ y1, y2, items: [it] });
    }
  }
  rows.sort((a, b) => a.y1 / a.items.length + a.y2 / a.items.length - (b.y1 / b.items.length + b.y2 / b.items.length));
  return rows.map((r) => r.items.sort((a, b) => a.bbox[0] - b.bbox[0]));
}

/** Page text: one line per row, blocks of a row separated by a space. */
export function pageText(rows: { text: string }[][]): string {
  return rows.map((r) => r.map((b) => b.text).join(' ')).join('\n');
}
