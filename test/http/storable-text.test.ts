// The text rule of requests (src/http/storable-text.ts): what it refuses, where it says the refusal is, and
// what it lets through untouched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findUnstorable, MAX_DEPTH, printable, unstorable } from '../../src/http/storable-text.js';
import { validate } from '../../src/http/validation.js';
import { z } from 'zod';

test('U+0000 and lone surrogates are refused; well-formed text of any script is not', () => {
  for (const s of ['', 'plain', 'é', '日本語', '😀', '\ud83d\ude00', '\uffff', '\u0001\u001f', 'a\tb\n'])
    assert.equal(unstorable(s), null, JSON.stringify(s));
  for (const s of ['\u0000', 'a\u0000', '\ud800', 'x\udc00', '\ude00\ud83d', '😀\ud800'])
    assert.notEqual(unstorable(s), null, JSON.stringify(s));
});

test('the path of the first refusal, in values and keys at any depth', () => {
  assert.equal(findUnstorable({ a: [1, { b: 'ok' }], c: null, d: true }), null);
  assert.deepEqual(findUnstorable({ a: [1, { b: 'x\u0000' }] })?.path, ['a', 1, 'b']);
  const key = findUnstorable({ m: { 'k\ud800': 1 } });
  assert.deepEqual(key?.path, ['m', 'k\ud800']);
  assert.equal(key?.inKey, true);
  // Buffers (an uploaded image) are bytes, not text.
  assert.equal(findUnstorable({ image_base64: Buffer.from([0, 0xd8]) }), null);
});

test('nesting: MAX_DEPTH levels pass, one more is refused', () => {
  const nest = (n: number) => {
    let v: unknown = 'leaf';
    for (let i = 0; i < n; i++) v = i % 2 ? [v] : { a: v };
    return v;
  };
  assert.equal(findUnstorable(nest(MAX_DEPTH)), null);
  assert.match(findUnstorable(nest(MAX_DEPTH + 1))!.why, /nested more than 64 levels deep/);
});

test('validate: a 400 invalid_request naming the field, before the schema', () => {
  const schema = z.strictObject({ items: z.array(z.strictObject({ metadata: z.record(z.string(), z.unknown()) })) });
  assert.throws(
    () => validate(schema, { items: [{ metadata: { 'a\u0000b': 1 } }] }, 'body'),
    (e: any) =>
      e.status === 400 &&
      e.code === 'invalid_request' &&
      e.param === 'items[0].metadata.a\\u0000b' &&
      e.message ===
        'Invalid body field items[0].metadata.a\\u0000b: its name contains U+0000 (NUL), which cannot be stored',
  );
  assert.throws(
    () => validate(schema, { items: [{ metadata: { a: 'x\ud800' } }] }, 'body'),
    (e: any) => e.param === 'items[0].metadata.a' && /lone UTF-16 surrogate/.test(e.message),
  );
  assert.equal(printable('😀\u0000'), '😀\\u0000');
});
