// The one published billing formula for images and text (docs/api.md, "Usage"), used by every endpoint that
// bills an image. Image tokens follow the tile formula OpenAI publishes for its vision models, so clients
// moving between the hosted API and sightflow see the same numbers:
//   low  detail: 85 tokens, whatever the size;
//   high detail: the image is scaled down (never up) to fit 2048x2048, then down so its shorter side is at
//                most 768; each 512x512 tile of the result costs 170, plus 85 base.
// Text is counted with gpt-tokenizer's o200k_base encoding (the GPT-4o tokenizer).

import { fastTokenCounter, type CountOrdinary } from './text-token-count.js';

export type Detail = 'low' | 'high';

export const IMAGE_BASE_TOKENS = 85;
export const IMAGE_TILE_TOKENS = 170;
export const IMAGE_TILE_SIZE = 512;
/** `detail` left out: images that fit one tile are billed (and described) at low detail. */
export const AUTO_LOW_MAX_SIDE = 512;
export const TEXT_ENCODING = 'o200k_base';

/** `detail` when the client did not choose: by image size. */
export function autoDetail(width: number, height: number): Detail {
  return Math.max(width, height) <= AUTO_LOW_MAX_SIDE ? 'low' : 'high';
}

/** The size the high-detail formula tiles: fit in 2048x2048, then shorter side at most 768 (downscale only). */
export function billedSize(width: number, height: number): { width: number; height: number } {
  let w = width;
  let h = height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const short = Math.min(1, 768 / Math.min(w, h));
  w *= short;
  h *= short;
  return { width: Math.round(w), height: Math.round(h) };
}

export function imageTokens(width: number, height: number, detail: Detail): number {
  if (detail === 'low') return IMAGE_BASE_TOKENS;
  const s = billedSize(width, height);
  const tiles = Math.ceil(s.width / IMAGE_TILE_SIZE) * Math.ceil(s.height / IMAGE_TILE_SIZE);
  return IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * tiles;
}

let countTokens: Promise<CountOrdinary> | undefined;
/**
 * The tokenizer, loaded on first use: its table is a module of megabytes whose loading is a good part of a
 * process's start (docs/benchmarks.md, "The test suite's compiled JavaScript"), and many processes that load
 * this file (video workers, CLI commands, most tests) never count a text. `sightflow serve` loads it before it
 * listens (warmTokenizer), so no request waits for it. A text is counted as ordinary text: one that spells a
 * special token (`<|endoftext|>` in a prompt, or read from an image) is billed as the characters it is, where
 * the tokenizer's default refuses it.
 */
function tokenizer(): Promise<CountOrdinary> {
  countTokens ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => {
    const ordinary = { disallowedSpecial: new Set<string>() };
    return fastTokenCounter((text) => m.countTokens(text, ordinary));
  });
  return countTokens;
}

/** Loads the tokenizer now rather than with the first text counted. */
export async function warmTokenizer(): Promise<void> {
  await tokenizer();
}

/** Tokens of a text (a prompt in, a description or page text out) in o200k_base. */
export async function textTokens(text: string): Promise<number> {
  return text ? (await tokenizer())(text) : 0;
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
}
