// CLIP's byte-level BPE tokenizer, read from an HF tokenizer.json (vocab + merges), behaving as HF's
// CLIPTokenizerFast: NFC, whitespace runs to one space, lower case; special tokens split out first; CLIP's
// regex splits words, contractions, single digits and punctuation runs; each piece's UTF-8 bytes map to
// printable characters (GPT-2's bytes_to_unicode), its last symbol gets the end-of-word suffix ("</w>"), and
// merges apply lowest rank first. encode() wraps in <|startoftext|> ... <|endoftext|> and pads or truncates
// to the context length. (OpenAI's simple_tokenizer also runs ftfy and HTML unescaping; HF's does not.)
import { readFile } from 'node:fs/promises';
import { z } from 'zod';

const SOT = '<|startoftext|>';
const EOT = '<|endoftext|>';
const SPECIALS = /(<\|startoftext\|>|<\|endoftext\|>)/;
const PIECES = /'s|'t|'re|'ve|'m|'ll|'d|\p{L}+|\p{N}|[^\s\p{L}\p{N}]+/gu;
/** Words seen often (captions repeat words); bounded so arbitrary input cannot grow it without limit. */
const CACHE_MAX = 20_000;

const TokenizerJson = z.object({
  model: z.object({
    type: z.literal('BPE', { error: (i) => `expected a BPE model but received ${JSON.stringify(i.input)}` }),
    vocab: z.record(z.string(), z.number().int().min(0)),
    merges: z.array(z.union([z.string(), z.tuple([z.string(), z.string()])])),
    end_of_word_suffix: z.string().nullish(),
    unk_token: z.string().nullish(),
  }),
  added_tokens: z.array(z.object({ id: z.number().int().min(0), content: z.string() })).default([]),
  padding: z.object({ pad_id: z.number().int().min(0) }).nullish(),
});

/** GPT-2 / CLIP bytes_to_unicode: printable bytes stand for themselves, the rest map to U+0100 upwards. */
function byteChars(): string[] {
  const out = new Array<string>(256);
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let n = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(printable(b) ? b : 256 + n++);
  return out;
}
const BYTE_CHARS = byteChars();
const utf8 = new TextEncoder();

export interface EncodedText {
  /** context-length token ids: start, tokens, end, padding. */
  ids: number[];
  /** 1 for start, tokens and end; 0 for padding. */
  mask: number[];
}

export class ClipTokenizer {
  private readonly ranks = new Map<string, number>();
  private readonly cache = new Map<string, number[]>();
  readonly sot: number;
  readonly eot: number;
  readonly pad: number;
  private readonly unk: number;
  private readonly suffix: string;

  private constructor(
    private readonly vocab: Map<string, number>,
    merges: [string, string][],
    opts: { sot: number; eot: number; pad: number; unk: number; suffix: string },
  ) {
    merges.forEach(([a, b], i) => {
      if (!this.ranks.has(`${a} ${b}`)) this.ranks.set(`${a} ${b}`, i);
    });
    ({ sot: this.sot, eot: this.eot, pad: this.pad, unk: this.unk, suffix: this.suffix } = opts);
  }

  /** `source` names the file in errors. */
  static fromJson(raw: unknown, source = 'tokenizer.json', padOverride?: number): ClipTokenizer {
    const parsed = TokenizerJson.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(`${source}: ${issue.path.join('.') || '(root)'}: ${issue.message}`);
    }
    const t = parsed.data;
    const vocab = new Map(Object.entries(t.model.vocab));
    for (const a of t.added_tokens) vocab.set(a.content, a.id);
    const special = (name: string) => {
      const id = vocab.get(name);
      if (id === undefined)
        throw new Error(`${source}: the vocabulary has no ${name} token (is this a CLIP tokenizer?)`);
      return id;
    };
    const merges = t.model.merges.map((m, i): [string, string] => {
      if (Array.isArray(m)) return m;
      const parts = m.split(' ');
      if (parts.length !== 2)
        throw new Error(
          `${source}: model.merges.${i}: expected two symbols separated by one space but received ${JSON.stringify(m)}`,
        );
      return parts as [string, string];
    });
    const sot = special(SOT);
    const eot = special(EOT);
    const unk = t.model.unk_token ? (vocab.get(t.model.unk_token) ?? eot) : eot;
    return new ClipTokenizer(vocab, merges, {
      sot,
      eot,
      unk,
      pad: padOverride ?? t.padding?.pad_id ?? eot,
      suffix: t.model.end_of_word_suffix ?? '</w>',
    });
  }

  static async fromFile(path: string, padOverride?: number): Promise<ClipTokenizer> {
    let raw: unknown;
    try {
      raw = JSON.parse(await readFile(path, 'utf8'));
    } catch (e) {
      throw new Error(`tokenizer ${path} could not be read as JSON: ${(e as Error).message}`);
    }
    return ClipTokenizer.fromJson(raw, path, padOverride);
  }

  /** Token ids of the text alone (no start/end tokens, no truncation). */
  tokenize(text: string): number[] {
    const out: number[] = [];
    const clean = text.normalize('NFC').replace(/\s+/g, ' ').toLowerCase();
    for (const part of clean.split(SPECIALS)) {
      if (part === SOT || part === EOT) {
        out.push(part === SOT ? this.sot : this.eot);
        continue;
      }
      for (const m of part.matchAll(PIECES)) out.push(...this.word(m[0]));
    }
    return out;
  }

  /** Start token, at most contextLength - 2 tokens, end token, then padding to contextLength. */
  encode(text: string, contextLength: number): EncodedText {
    const body = this.tokenize(text).slice(0, contextLength - 2);
    const ids = [this.sot, ...body, this.eot];
    const mask = ids.map(() => 1);
    while (ids.length < contextLength) {
      ids.push(this.pad);
      mask.push(0);
    }
    return { ids, mask };
  }

  private word(piece: string): number[] {
    const hit = this.cache.get(piece);
    if (hit) return hit;
    let mapped = '';
    for (const b of utf8.encode(piece)) mapped += BYTE_CHARS[b];
    const ids = this.bpe(mapped).map((s) => this.vocab.get(s) ?? this.unk);
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(piece, ids);
    return ids;
  }

  /** Merges the lowest-ranked adjacent pair, every occurrence left to right, until no pair is a merge. */
  private bpe(mapped: string): string[] {
    let word = [...mapped];
    word[word.length - 1] += this.suffix;
    while (word.length > 1) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i < word.length - 1; i++) {
        const r = this.ranks.get(`${word[i]} ${word[i + 1]}`);
        if (r !== undefined && r < bestRank) {
          bestRank = r;
          best = i;
        }
      }
      if (best < 0) break;
      const [a, b] = [word[best], word[best + 1]];
      const next: string[] = [];
      for (let i = 0; i < word.length; ) {
        if (i < word.length - 1 && word[i] === a && word[i + 1] === b) {
          next.push(a + b);
          i += 2;
        } else next.push(word[i++]);
      }
      word = next;
    }
    return word;
  }
}
