// Audio items fetched by URL or sent as base64 share the image fetcher and decoder; their errors must say
// "audio", not "image" (codes stay the image ones), and the fetch asks for audio types.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApiError, type ErrorBody } from '../../src/base/errors.js';
import { loadContent, parseContent } from '../../src/vectors/item-input.js';
import { AUDIO_MAX_BYTES } from '../../src/vectors/embedders/speech.js';

/** Just the magic bytes sniffAudio looks for; loadContent does not decode. */
const WAV = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE'), Buffer.alloc(32)]);

let server: http.Server;
let base = '';
let lastAccept: string | undefined;

before(async () => {
  server = http.createServer((req, res) => {
    lastAccept = req.headers.accept;
    if (req.url === '/a.wav') {
      res.writeHead(200, { 'content-type': 'audio/wav' }).end(WAV);
    } else if (req.url === '/big-declared') {
      res.writeHead(200, { 'content-length': String(AUDIO_MAX_BYTES + 1) });
      res.write(WAV);
    } else if (req.url === '/cut-short') {
      res.writeHead(200, { 'content-length': '1000' });
      res.write(WAV, () => res.destroy());
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => {
  server.closeAllConnections();
  server.close();
});

async function rejectsWith(p: Promise<unknown>, status: number, body: ErrorBody['error']): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof ApiError, `expected an ApiError, got ${String(e)}`);
    assert.equal(e.status, status);
    assert.deepEqual(e.toBody(), { error: body });
    return true;
  });
}

const load = (url: string) => loadContent(parseContent({ audio: url }, 'items[0].'), { allowPrivate: true });

test('an audio URL is fetched asking for audio types', async () => {
  const loaded = await load(`${base}/a.wav`);
  assert.equal(loaded.content_type, 'audio');
  assert.deepEqual(loaded.blob?.bytes, WAV);
  assert.match(lastAccept ?? '', /^audio\/wav, /);
});

test('an audio URL that fails is image_fetch_failed worded for audio', async () => {
  await rejectsWith(load(`${base}/missing.wav`), 400, {
    type: 'invalid_request_error',
    code: 'image_fetch_failed',
    message: 'The audio URL could not be fetched: upstream answered 404',
    param: 'items[0].audio',
  });
  const port = (server.address() as AddressInfo).port;
  await rejectsWith(load(`${base}/cut-short`), 400, {
    type: 'invalid_request_error',
    code: 'image_fetch_failed',
    message: `The audio URL could not be fetched: 127.0.0.1:${port} closed the connection before the body was complete`,
    param: 'items[0].audio',
  });
});

test('too large audio is 413 worded for audio, by URL or base64', async () => {
  const expected = {
    type: 'invalid_request_error',
    code: 'payload_too_large',
    message: `The audio is larger than the limit of ${AUDIO_MAX_BYTES} bytes`,
    param: null,
  } as const;
  await rejectsWith(load(`${base}/big-declared`), 413, expected);
  const big = Buffer.alloc(AUDIO_MAX_BYTES + 3).toString('base64');
  await rejectsWith((async () => parseContent({ audio: big }, 'items[0].'))(), 413, expected);
});

test('undecodable base64 audio is invalid_audio', async () => {
  await rejectsWith((async () => parseContent({ audio: Buffer.from('not a sound').toString('base64') }, ''))(), 400, {
    type: 'invalid_request_error',
    code: 'invalid_audio',
    message:
      'Expected audio to be WAV, MP3, FLAC or OGG audio but it could not be decoded: the data is not in a supported audio format',
    param: 'audio',
  });
});
