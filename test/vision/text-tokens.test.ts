// The bill's text tokens (src/usage/text-token-count.ts): the shortcut that counts digit runs without the
// tokenizer gives the tokenizer's own count on every text, checked here against gpt-tokenizer itself on texts
// made to hit the pattern's edges (digits after whitespace, line ends, contractions, punctuation runs) and on
// detect answers as the service writes them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { fastTokenCounter } from '../../src/usage/text-token-count.js';
import { textTokens } from '../../src/usage/tokens.js';

const ordinary = { disallowedSpecial: new Set<string>() };
const tokenizer = (text: string) => countTokens(text, ordinary);

/** A small deterministic generator, so a failure names a text that fails again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

test('text tokens: the shortcut counts what the tokenizer counts on texts made to hit its pattern edges', () => {
  const fast = fastTokenCounter(tokenizer);
  const rnd = random(46);
  const parts = [
    '0',
    '7',
    '42',
    '123',
    '4567',
    '00012',
    '9999999',
    ' ',
    '  ',
    '\t',
    '\n',
    '\r\n',
    '\n\n',
    ' \n ',
    '\v',
    '\f',
    'a',
    'Hello',
    'WORLD',
    'x',
    "'s",
    "'ll",
    "'T",
    'don',
    '.',
    ',',
    '"',
    '":',
    '{"',
    '"}',
    '},{',
    '[',
    ']',
    '/',
    '//',
    '-',
    '_id',
    ':',
    '+',
    '%',
    '$',
    '#',
    '<|endoftext|>',
    '<|im_start|>',
    'e-5',
    '1e',
    'px',
    '\\n',
    '😀',
  ];
  let checked = 0;
  for (let i = 0; i < 20_000; i++) {
    const n = 1 + Math.floor(rnd() * 12);
    let text = '';
    for (let k = 0; k < n; k++) text += parts[Math.floor(rnd() * parts.length)];
    assert.equal(fast(text), tokenizer(text), JSON.stringify(text));
    checked++;
  }
  // And texts of single characters anywhere in ASCII, digits and whitespace most often.
  for (let i = 0; i < 5_000; i++) {
    const n = 1 + Math.floor(rnd() * 40);
    let text = '';
    for (let k = 0; k < n; k++) {
      const r = rnd();
      text +=
        r < 0.35
          ? String.fromCharCode(48 + Math.floor(rnd() * 10))
          : r < 0.55
            ? ' \t\n\r\v\f'[Math.floor(rnd() * 6)]
            : String.fromCharCode(Math.floor(rnd() * 128));
    }
    assert.equal(fast(text), tokenizer(text), JSON.stringify(text));
    checked++;
  }
  assert.equal(checked, 25_000);
});

test('text tokens: detect answers, descriptions and page text count as the tokenizer counts them', async () => {
  const rnd = random(7);
  const labels = ['person', 'car', 'traffic light', 'dog', 'cell phone', 'Bäckerei', '人'];
  for (let i = 0; i < 2_000; i++) {
    const objects = Array.from({ length: Math.floor(rnd() * 6) }, () => ({
      label: labels[Math.floor(rnd() * labels.length)],
      confidence: Math.round(rnd() * 1e4) / 1e4,
      box: {
        x: Math.round(rnd() * 64000) / 100,
        y: Math.round(rnd() * 48000) / 100,
        width: Math.round(rnd() * 64000) / 100,
        height: Math.round(rnd() * 48000) / 100,
      },
      color: ['red', 'white', 'dark blue'][Math.floor(rnd() * 3)],
    }));
    const text = JSON.stringify(objects);
    assert.equal(await textTokens(text), tokenizer(text), text);
  }
  for (const text of [
    'The picture shows 2 giraffes and 13 people near a 1998 bus.',
    'Total: 1,234.56 EUR\nVAT 19%  \n  42\t\t7',
    '图中有两只长颈鹿。3 4',
    'The text in the picture reads "Bakery".',
  ])
    assert.equal(await textTokens(text), tokenizer(text), text);
});

test('text tokens: a tokenizer whose digit groups are not one token each is used whole', () => {
  let calls = 0;
  // One token a character: "12" is two here, so no shortcut may assume one.
  const byCharacter = (text: string) => {
    calls++;
    return text.length;
  };
  const counter = fastTokenCounter(byCharacter);
  calls = 0;
  assert.equal(counter('ab 123,45'), 9);
  assert.equal(calls, 1, 'the whole text went to the tokenizer');
});
