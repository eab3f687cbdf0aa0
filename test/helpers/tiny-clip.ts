// A tiny CLIP-shaped model for the bring-your-own CLIP tests, generated here (nothing downloads): an HF-style
// folder with onnx/vision_model.onnx, onnx/text_model.onnx and tokenizer.json, plus its manifest.
// Vision: pixel_values [N,3,224,224] -> AveragePool 56x56 -> [N,48] -> MatMul -> image_embeds [N,8]. Dims
// 0-2 are the channel means (in CLIP-normalised units), dims 3-7 zero-sum spatial patterns, so a solid image
// has only colour. Text: input_ids [N,L] int64 -> Gather -> masked mean (attention_mask) -> MatMul ->
// text_embeds [N,8]; "red", "green", "blue" embed as exactly the colour part of a solid image of that colour,
// and the start/end tokens as zero, so the text "red" and a solid red image are the same direction.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DataType, OnnxGraphBuilder } from '../../src/inference/tfjs-import/onnx-builder.js';
import { CLIP_MEAN, CLIP_STD } from '../../src/inference/clip-manifest.js';

export const DIMS = 8;
export const SIZE = 224;
const CELL = 56;
const CELLS = SIZE / CELL; // 4 x 4 cells per channel

/** CLIP's byte order: printable bytes first (their own characters), then the rest mapped to U+0100 on. */
function clipByteOrder(): string[] {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++)
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  return cs.map((c) => String.fromCharCode(c));
}

export const MERGES = [
  'g r',
  'r e',
  're d</w>',
  'e e',
  'gr ee',
  'gree n</w>',
  'b l',
  'bl u',
  'blu e</w>',
  'c a',
  'ca t</w>',
  'o f</w>',
  'p h',
  'o t',
  'ph ot',
  'phot o</w>',
  'e r</w>',
];

/** Vocabulary as CLIP builds it: 256 byte characters, the same with "</w>", one token per merge, specials. */
export function tinyVocab(): Record<string, number> {
  const chars = clipByteOrder();
  const list = [
    ...chars,
    ...chars.map((c) => `${c}</w>`),
    ...MERGES.map((m) => m.replace(' ', '')),
    '<|startoftext|>',
    '<|endoftext|>',
  ];
  return Object.fromEntries(list.map((t, i) => [t, i]));
}

export function tinyTokenizerJson(): object {
  const vocab = tinyVocab();
  const special = (content: string) => ({
    id: vocab[content],
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: true,
    special: true,
  });
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [special('<|startoftext|>'), special('<|endoftext|>')],
    normalizer: {
      type: 'Sequence',
      normalizers: [
        { type: 'NFC' },
        { type: 'Replace', pattern: { Regex: '\\s+' }, content: ' ' },
        { type: 'Lowercase' },
      ],
    },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        {
          type: 'Split',
          pattern: { Regex: "'s|'t|'re|'ve|'m|'ll|'d|[\\p{L}]+|[\\p{N}]|[^\\s\\p{L}\\p{N}]+" },
          behavior: 'Removed',
          invert: true,
        },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    post_processor: {
      type: 'RobertaProcessing',
      sep: ['<|endoftext|>', vocab['<|endoftext|>']],
      cls: ['<|startoftext|>', vocab['<|startoftext|>']],
      trim_offsets: false,
      add_prefix_space: false,
    },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: '<|endoftext|>',
      continuing_subword_prefix: '',
      end_of_word_suffix: '</w>',
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges: MERGES,
    },
  };
}

/** A solid colour's pixels in CLIP-normalised units: the colour part of its image embedding. */
export function colourVector(rgb: [number, number, number]): number[] {
  return rgb.map((v, c) => (v / 255 - CLIP_MEAN[c]) / CLIP_STD[c]);
}

/** Vision projection [48, DIMS]; row c*16 + y*4 + x is channel c's cell (x, y). */
export function visionWeights(): Float32Array {
  const w = new Float32Array(3 * CELLS * CELLS * DIMS);
  const set = (c: number, x: number, y: number, d: number, v: number) => {
    w[(c * CELLS * CELLS + y * CELLS + x) * DIMS + d] = v;
  };
  const k = 1 / (CELLS * CELLS);
  for (let c = 0; c < 3; c++) {
    for (let y = 0; y < CELLS; y++) {
      for (let x = 0; x < CELLS; x++) {
        set(c, x, y, c, k); // channel mean
        set(c, x, y, 3, x < 2 ? k : -k); // left minus right
        set(c, x, y, 4, y < 2 ? k : -k); // top minus bottom
        set(c, x, y, 5, (x + y) % 2 ? k : -k); // checker
        if (c === 0) set(c, x, y, 6, x < 2 ? 2 * k : -2 * k); // red left minus right
        if (c === 2) set(c, x, y, 7, y < 2 ? 2 * k : -2 * k); // blue top minus bottom
      }
    }
  }
  return w;
}

/** Token embeddings [V, DIMS]: colours for the colour words, zero for specials, small fixed noise otherwise. */
export function textWeights(): Float32Array {
  const vocab = tinyVocab();
  const V = Object.keys(vocab).length;
  const e = new Float32Array(V * DIMS);
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648 - 0.5;
  };
  for (let i = 0; i < V * DIMS; i++) e[i] = rand();
  const row = (tok: string, v: number[]) => {
    for (let d = 0; d < DIMS; d++) e[vocab[tok]! * DIMS + d] = v[d] ?? 0;
  };
  row('<|startoftext|>', []);
  row('<|endoftext|>', []);
  row('red</w>', colourVector([255, 0, 0]));
  row('green</w>', colourVector([0, 255, 0]));
  row('blue</w>', colourVector([0, 0, 255]));
  return e;
}

export function visionOnnx(): Uint8Array {
  const b = new OnnxGraphBuilder();
  b.node('AveragePool', ['pixel_values'], ['last_hidden_state'], { kernel_shape: [CELL, CELL], strides: [CELL, CELL] });
  const flat = b.op('Reshape', ['last_hidden_state', b.int64Init('shape', [2], [-1, 3 * CELLS * CELLS])]);
  b.node(
    'MatMul',
    [flat, b.floatInit('visual_projection', [3 * CELLS * CELLS, DIMS], visionWeights())],
    ['image_embeds'],
  );
  return b.encode({
    name: 'tiny_clip_vision',
    inputs: [{ name: 'pixel_values', elemType: DataType.FLOAT, shape: ['batch_size', 3, SIZE, SIZE] }],
    outputs: [
      { name: 'image_embeds', elemType: DataType.FLOAT, shape: ['batch_size', DIMS] },
      { name: 'last_hidden_state', elemType: DataType.FLOAT, shape: ['batch_size', 3, CELLS, CELLS] },
    ],
  });
}

export function textOnnx(): Uint8Array {
  const b = new OnnxGraphBuilder();
  const V = Object.keys(tinyVocab()).length;
  b.node('Gather', [b.floatInit('token_embedding', [V, DIMS], textWeights()), 'input_ids'], ['last_hidden_state'], {
    axis: 0,
  });
  const mask = b.op('Cast', ['attention_mask'], { to: DataType.FLOAT });
  const mask3 = b.op('Unsqueeze', [mask, b.int64Init('axes2', [1], [2])]);
  const summed = b.op('ReduceSum', [b.op('Mul', ['last_hidden_state', mask3]), b.int64Init('axes1', [1], [1])], {
    keepdims: 0,
  });
  const count = b.op('ReduceSum', [mask, b.int64Init('axes1b', [1], [1])], { keepdims: 1 });
  const eye = new Float32Array(DIMS * DIMS);
  for (let i = 0; i < DIMS; i++) eye[i * DIMS + i] = 1;
  b.node('MatMul', [b.op('Div', [summed, count]), b.floatInit('text_projection', [DIMS, DIMS], eye)], ['text_embeds']);
  return b.encode({
    name: 'tiny_clip_text',
    inputs: [
      { name: 'input_ids', elemType: DataType.INT64, shape: ['batch_size', 'sequence_length'] },
      { name: 'attention_mask', elemType: DataType.INT64, shape: ['batch_size', 'sequence_length'] },
    ],
    outputs: [
      { name: 'text_embeds', elemType: DataType.FLOAT, shape: ['batch_size', DIMS] },
      { name: 'last_hidden_state', elemType: DataType.FLOAT, shape: ['batch_size', 'sequence_length', DIMS] },
    ],
  });
}

/**
 * Writes <dataDir>/manifests/<id>/{onnx/vision_model.onnx, onnx/text_model.onnx, tokenizer.json} and the
 * manifest <dataDir>/manifests/<id>.json (defaults for everything else, as for a real HF export).
 */
export async function writeTinyClip(dataDir: string, id: string, extra: Record<string, unknown> = {}): Promise<string> {
  const dir = join(dataDir, 'manifests', id);
  await mkdir(join(dir, 'onnx'), { recursive: true });
  await writeFile(join(dir, 'onnx', 'vision_model.onnx'), visionOnnx());
  await writeFile(join(dir, 'onnx', 'text_model.onnx'), textOnnx());
  await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(tinyTokenizerJson()));
  const manifest = join(dataDir, 'manifests', `${id}.json`);
  await writeFile(
    manifest,
    JSON.stringify(
      {
        id,
        family: 'clip',
        name: 'Tiny CLIP (test)',
        vision: { file: `${id}/onnx/vision_model.onnx` },
        text: { file: `${id}/onnx/text_model.onnx` },
        tokenizer: `${id}/tokenizer.json`,
        ...extra,
      },
      null,
      2,
    ),
  );
  return manifest;
}

/** What the tiny vision encoder computes from preprocessed pixels [3, 224, 224] (JS reference). */
export function referenceImageEmbedding(px: Float32Array): Float32Array {
  const cells = new Float64Array(3 * CELLS * CELLS);
  for (let c = 0; c < 3; c++) {
    for (let y = 0; y < SIZE; y++) {
      for (let x = 0; x < SIZE; x++)
        cells[c * CELLS * CELLS + Math.floor(y / CELL) * CELLS + Math.floor(x / CELL)] +=
          px[c * SIZE * SIZE + y * SIZE + x]!;
    }
  }
  const w = visionWeights();
  const out = new Float32Array(DIMS);
  for (let d = 0; d < DIMS; d++) {
    let s = 0;
    for (let r = 0; r < cells.length; r++) s += (cells[r]! / (CELL * CELL)) * w[r * DIMS + d]!;
    out[d] = s;
  }
  return out;
}
