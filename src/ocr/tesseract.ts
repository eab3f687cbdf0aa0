// Debian's Tesseract CLI as a second OCR engine: the peer in `eval ocr` / `bench ocr`, and the engine for
// languages PP-OCRv4 does not read. One process per image, PNG on stdin, TSV (word boxes) on stdout.
import { execFile, spawn } from 'node:child_process';
import sharp from 'sharp';
import { type BBox, type OcrBlock, pageText, readingOrder } from './layout.js';
import type { RgbImage } from '../media/rgb-image.js';

export interface TesseractInfo {
  /** e.g. "tesseract-5" */
  model: string;
  /** Installed traineddata names (eng, deu, ...), without osd. */
  languages: string[];
}

let probing: Promise<TesseractInfo | null> | null = null;

function run(args: string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('tesseract', args, { timeout: 10_000 }, (err, stdout, stderr) =>
      resolve(err ? null : `${stdout}\n${stderr}`),
    );
  });
}

/** Whether the CLI is installed, its major version and languages; null when absent. Probed once. */
export function tesseractInfo(): Promise<TesseractInfo | null> {
  probing ??= (async () => {
    const version = await run(['--version']);
    const m = version?.match(/tesseract\s+v?(\d+)/i);
    if (!m) return null;
    const list = (await run(['--list-langs'])) ?? '';
    const languages = list
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => /^[a-z_]+$/i.test(l) && l !== 'osd');
    return { model: `tesseract-${m[1]}`, languages };
  })();
  return probing;
}

export interface TesseractWord extends OcrBlock {
  line: string;
}

/** Word boxes from `tesseract stdin stdout -l <lang> tsv` (the image goes in as PNG). */
export async function tesseractWords(image: RgbImage, lang: string): Promise<TesseractWord[]> {
  const png = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .png({ compressionLevel: 1 })
    .toBuffer();
  return parseTsv(await runTsv('stdin', lang, png));
}

/** The same for an image file the CLI decodes itself (how the eval and bench run the peer). */
export async function tesseractFileWords(path: string, lang: string): Promise<TesseractWord[]> {
  return parseTsv(await runTsv(path, lang, null));
}

function runTsv(input: string, lang: string, stdin: Buffer | null): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const child = spawn('tesseract', [input, 'stdout', '-l', lang, 'tsv'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else reject(new Error(`tesseract exited with ${code}: ${Buffer.concat(err).toString('utf8').slice(0, 300)}`));
    });
    child.stdin.on('error', () => {
      /* the close handler reports the failure */
    });
    child.stdin.end(stdin ?? undefined);
  });
}

function parseTsv(tsv: string): TesseractWord[] {
  const words: TesseractWord[] = [];
  for (const row of tsv.split('\n').slice(1)) {
    const f = row.split('\t');
    if (f.length < 12 || f[0] !== '5') continue;
    const text = f.slice(11).join('\t').trim();
    const conf = Number(f[10]);
    if (text === '' || conf < 0) continue;
    const [left, top, w, h] = [Number(f[6]), Number(f[7]), Number(f[8]), Number(f[9])];
    const bbox: BBox = [left, top, left + w, top + h];
    words.push({ text, bbox, confidence: Math.min(1, conf / 100), line: `${f[2]}.${f[3]}.${f[4]}` });
  }
  return words;
}

/** Tesseract's own lines as blocks; page text in reading order like the PP-OCR path. */
export async function tesseractOcr(
  image: RgbImage,
  lang: string,
  granularity: 'line' | 'word',
): Promise<{ text: string; blocks: OcrBlock[] }> {
  return tesseractLayout(await tesseractWords(image, lang), granularity);
}

export function tesseractLayout(
  words: TesseractWord[],
  granularity: 'line' | 'word',
): { text: string; blocks: OcrBlock[] } {
  const lines = new Map<string, TesseractWord[]>();
  for (const w of words) {
    const l = lines.get(w.line);
    if (l) l.push(w);
    else lines.set(w.line, [w]);
  }
  const lineBlocks: OcrBlock[] = [...lines.values()].map((ws) => ({
    text: ws.map((w) => w.text).join(' '),
    bbox: [
      Math.min(...ws.map((w) => w.bbox[0])),
      Math.min(...ws.map((w) => w.bbox[1])),
      Math.max(...ws.map((w) => w.bbox[2])),
      Math.max(...ws.map((w) => w.bbox[3])),
    ],
    confidence: ws.reduce((a, w) => a + w.confidence, 0) / ws.length,
  }));
  const rows = readingOrder(lineBlocks);
  const blocks =
    granularity === 'word'
      ? readingOrder(words)
          .flat()
          .map(({ text, bbox, confidence }) => ({ text, bbox, confidence }))
      : rows.flat();
  return { text: pageText(rows), blocks };
}
