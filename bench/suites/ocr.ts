// `npm run bench -- ocr [--quick] [--json]`: milliseconds per image, PP-OCRv4 through our pipeline vs the
// Tesseract 5 CLI (Debian), on the same images in the same run, alternating so load drifts hit both alike.
// Each side pays for its own decode: ours decodes with sharp, Tesseract reads the file itself.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { evalDir, skipWithoutEvalData } from '../../eval/dir.js';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { OcrEngine } from '../../src/ocr/engine.js';
import { projectRoot } from '../../src/paths.js';
import { decodeRgb } from '../../src/ocr/resample.js';
import { tesseractFileWords } from '../../src/ocr/tesseract.js';

// OCR over the models setup prepared in data/ (the server hands the engine its own registry and runtime).
const { ocrImage } = OcrEngine.forDataDir(join(projectRoot, 'data'));

const p50 = (v: number[]) => { const s = v.slice().sort((a, b) => a - b); return s.length ? s[Math.floor((s.length - 1) / 2)] : 0; };

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

export async function run({ quick, json }: SuiteOptions): Promise<void> {
  if (skipWithoutEvalData({ json }, 'ocr/icdar2015_sample/images', 'ocr/sroie_receipts/images')) return;
  const pick = (sub: string, n: number) => {
    const dir = evalDir(sub);
    return readdirSync(dir).filter((f) => /\.(jpe?g|png)$/i.test(f)).sort().slice(0, n).map((f) => join(dir, f));
  };
  // Scene photos and receipt scans: the two kinds of page the service sees most.
  const images = quick
    ? [...pick('ocr/icdar2015_sample/images', 1), ...pick('ocr/sroie_receipts/images', 1)]
    : [...pick('ocr/icdar2015_sample/images', 5), ...pick('ocr/sroie_receipts/images', 5)];
  const ours = async (path: string) => ocrImage(await decodeRgb(path), { language: 'en' });
  const peer = async (path: string) => tesseractFileWords(path, 'eng');
  // Warm-up: model loading is a start-up cost, not a per-image one.
  await ours(images[0]);
  await peer(images[0]);
  const ourMs: number[] = [];
  const peerMs: number[] = [];
  // The longest the event loop waited while we read a page (a 1 ms timer's lateness): OCR's JavaScript stages
  // run on the main thread in slices, so other requests are served while a page is read.
  let maxStallMs = 0;
  let last = performance.now();
  const ticker = setInterval(() => { const now = performance.now(); maxStallMs = Math.max(maxStallMs, now - last - 1); last = now; }, 1);
  for (const path of images) {
    last = performance.now();
    const a = await time(() => ours(path));
    const stall = maxStallMs;
    const b = await time(() => peer(path));
    ourMs.push(a);
    peerMs.push(b);
    console.log(`${path.split('/').pop()}: pp-ocrv4 ${Math.round(a)} ms, tesseract ${Math.round(b)} ms`);
    maxStallMs = stall; // the peer's time (a child process) is not ours to count
  }
  clearInterval(ticker);
  console.log(`longest event-loop stall while reading a page: ${Math.round(maxStallMs)} ms`);
  const our50 = Math.round(p50(ourMs));
  const peer50 = Math.round(p50(peerMs));
  const ratio = Math.round((peer50 / Math.max(1, our50)) * 100) / 100;
  console.log(`${images.length} images: pp-ocrv4 p50 ${our50} ms, tesseract p50 ${peer50} ms, ratio (tesseract / ours) ${ratio}`);
  if (json) console.log(JSON.stringify({ suite: 'ocr', sightflow: { ms_p50: our50, max_loop_stall_ms: Math.round(maxStallMs) }, peer: { name: 'tesseract', ms_p50: peer50 }, ratio }));
}
