// Audio in: any WAV, MP3, FLAC or OGG is turned into 16 kHz mono WAV by the ffmpeg CLI, then Debian's
// pocketsphinx (US English) decodes it twice: words (language model) and phones (phone loop). Both run as
// child processes, so the event loop never waits on them; a semaphore keeps at most two decodes at once
// on a small machine.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errors } from '../../base/errors.js';

const MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';
const DECODE_TIMEOUT_MS = 120_000;
export const AUDIO_MAX_BYTES = 20 * 1024 * 1024;

export interface Transcript {
  words: string[];
  phones: string[];
  seconds: number;
}

/** The container from magic bytes, or null. */
export function sniffAudio(b: Buffer): 'wav' | 'mp3' | 'flac' | 'ogg' | null {
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WAVE') return 'wav';
  if (b.length >= 4 && b.toString('latin1', 0, 4) === 'fLaC') return 'flac';
  if (b.length >= 4 && b.toString('latin1', 0, 4) === 'OggS') return 'ogg';
  if (b.length >= 3 && b.toString('latin1', 0, 3) === 'ID3') return 'mp3';
  if (b.length >= 2 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0) return 'mp3';
  return null;
}

function run(cmd: string, args: string[], signal?: AbortSignal): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: DECODE_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, signal }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(err, { stderr }));
      else resolve({ stdout, stderr });
    });
  });
}

let active = 0;
const waiting: Array<() => void> = [];
async function withSlot<T>(fn: () => Promise<T>): Promise<T> {
  if (active >= 2) await new Promise<void>((r) => waiting.push(r));
  active++;
  try {
    return await fn();
  } finally {
    active--;
    waiting.shift()?.();
  }
}

// Same bytes, same transcript: a clip indexed and then used as a query is decoded once.
const cache = new Map<string, Transcript>();
const CACHE_MAX = 256;

export async function transcribe(bytes: Buffer, param: string, signal?: AbortSignal): Promise<Transcript> {
  const format = sniffAudio(bytes);
  if (!format) throw errors.undecodableAudio(param, 'the data is not in a supported audio format');
  const key = createHash('sha256').update(bytes).digest('hex');
  const hit = cache.get(key);
  if (hit) return hit;
  const dir = await mkdtemp(join(tmpdir(), 'sightflow-audio-'));
  try {
    const input = join(dir, `in.${format}`);
    const wav = join(dir, 'speech.wav');
    await writeFile(input, bytes);
    try {
      await run(
        'ffmpeg',
        [
          '-hide_banner',
          '-nostdin',
          '-loglevel',
          'error',
          '-i',
          input,
          '-vn',
          '-ac',
          '1',
          '-ar',
          '16000',
          '-sample_fmt',
          's16',
          '-f',
          'wav',
          wav,
        ],
        signal,
      );
    } catch (e) {
      signal?.throwIfAborted();
      const detail =
        String((e as { stderr?: string }).stderr ?? '')
          .trim()
          .split('\n')
          .pop() || 'ffmpeg could not read it';
      throw errors.undecodableAudio(param, detail.slice(0, 200));
    }
    const seconds = Math.max(0, ((await stat(wav)).size - 44) / 32_000);
    if (seconds < 0.05) throw errors.undecodableAudio(param, 'it holds no audio samples');
    const t = await withSlot(async () => {
      const common = ['-infile', wav, '-logfn', '/dev/null'];
      const [words, phones] = await Promise.all([
        run(
          'pocketsphinx_continuous',
          [
            ...common,
            '-hmm',
            join(MODEL_DIR, 'en-us'),
            '-lm',
            join(MODEL_DIR, 'en-us.lm.bin'),
            '-dict',
            join(MODEL_DIR, 'cmudict-en-us.dict'),
          ],
          signal,
        ),
        run(
          'pocketsphinx_continuous',
          [
            ...common,
            '-hmm',
            join(MODEL_DIR, 'en-us'),
            '-allphone',
            join(MODEL_DIR, 'en-us-phone.lm.bin'),
            '-backtrace',
            'yes',
            // The phone loop's beams set its cost: 1e-10 decodes several times faster than 1e-20 with the same
            // best match for every clip of the evaluation set, and 1e-5 loses most phones (docs/vectors.md,
            // "Audio").
            '-beam',
            '1e-10',
            '-pbeam',
            '1e-10',
            '-lw',
            '2.0',
          ],
          signal,
        ),
      ]);
      return {
        words: words.stdout
          .toLowerCase()
          .split(/\s+/)
          .filter((w) => w && !w.startsWith('<') && !w.startsWith('[')),
        phones: phones.stdout
          .trim()
          .split(/\s+/)
          .filter((p) => p && p !== 'SIL'),
        seconds,
      };
    });
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
    cache.set(key, t);
    return t;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
