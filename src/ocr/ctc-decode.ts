// Greedy CTC decoding of the PP-OCRv4 recogniser: best class per time step, repeats collapsed, blanks
// (class 0) dropped. Each emitted character keeps the time steps it came from so words can be located.

export interface DecodedChar {
  text: string;
  /** First and last time step of the run that produced it. */
  first: number;
  last: number;
  prob: number;
}

/**
 * `probs` is one item's [steps, classes] softmax. `allowed` (1 = may be emitted) restricts the choice, e.g.
 * to Latin script for `en`, so a CJK look-alike gives way to the best Latin reading instead of vanishing.
 */
export function ctcGreedy(
  probs: Float32Array,
  offset: number,
  steps: number,
  classes: number,
  charset: string[],
  allowed: Uint8Array | null,
): DecodedChar[] {
  const out: DecodedChar[] = [];
  let prev = -1;
  for (let t = 0; t < steps; t++) {
    const row = offset + t * classes;
    let best = 0;
    let bestP = probs[row];
    for (let c = 1; c < classes; c++) {
      const p = probs[row + c];
      if (p > bestP && (allowed === null || allowed[c] === 1)) {
        best = c;
        bestP = p;
      }
    }
    if (best !== 0 && best === prev) {
      const last = out[out.length - 1];
      last.last = t;
      if (bestP > last.prob) last.prob = bestP;
    } else if (best !== 0) {
      out.push({ text: charset[best] ?? '', first: t, last: t, prob: bestP });
    }
    prev = best;
  }
  return out;
}

/** Classes a language hint permits; null = all. `en` keeps Latin, digits, punctuation and common symbols. */
export function allowedClasses(charset: string[], language: 'auto' | 'en' | 'zh'): Uint8Array | null {
  if (language !== 'en') return null;
  const mask = new Uint8Array(charset.length);
  for (let i = 1; i < charset.length; i++) {
    const cp = charset[i].codePointAt(0) ?? 0;
    // Basic Latin, Latin-1 and Extended-A letters (names keep their accents), general punctuation and
    // currency signs; not x-like signs (U+00D7, U+00F7) the model reads for a blurred x or X.
    if ((cp < 0x180 && cp !== 0xd7 && cp !== 0xf7) || (cp >= 0x2010 && cp <= 0x20cf)) mask[i] = 1;
  }
  return mask;
}
