// One run reads one resource: every later response for a video URL (the decoder's ranged re-requests after a
// seek) must say what the first one said (length, ETag, Last-Modified), else the task fails source_changed
// instead of decoding a mix of two files' bytes (docs/video.md, "When a worker dies"). An MP4 whose index is
// at its end makes the decoder seek there and back while it opens; the file is replaced between two of those
// requests (same length, other bytes, as a re-upload would be). The continued-task side (a checkpoint's
// identity) is in test/video/video-resume-file.both-db.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { openVideo } from '../../src/video/source/video-source.js';
import { ProviderError } from '../../src/video/task-contract.js';
import { makeMedia } from '../helpers/media.js';
import { serveFile, type ServedFile } from '../helpers/media-server.js';

// 8 s of a test pattern, H.264 in MP4 with the index (moov) after the frames, as ffmpeg writes it by default,
// large enough (a few MB) that the decoder's seek to the index is a new request rather than a read-through.
const clip = () =>
  makeMedia('moov_at_end_8s.mp4', [
    '-f',
    'lavfi',
    '-i',
    'testsrc=s=640x480:r=25:d=8',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    '8',
    '-pix_fmt',
    'yuv420p',
  ]);

async function decodeAll(url: string): Promise<number> {
  const d = await openVideo({ url }, true, {});
  try {
    let frames = 0;
    for await (const _f of d.frames(4)) frames++;
    return frames;
  } finally {
    await d.close();
  }
}

test('a URL read in several ranged requests decodes whole while it stays the same resource', async () => {
  const file = await serveFile(await clip(), 'video/mp4');
  try {
    // Sampled at 1 frame a second (the default).
    assert.equal(await decodeAll(`${file.url}/clip.mp4`), 8);
    assert.ok(file.requests >= 2, `${file.requests} requests: the decoder seeks to the index and back`);
  } finally {
    await file.close();
  }
});

test("a URL whose file is replaced between two of one run's requests fails source_changed", async () => {
  const path = await clip();
  const original = readFileSync(path);
  const changed = Buffer.from(original).fill(0, original.length >> 1, (original.length >> 1) + 64);
  let file: ServedFile | undefined;
  file = await serveFile(path, 'video/mp4', {
    onRequest: (n) => {
      if (n === 2) file!.replace(changed);
    },
  });
  try {
    await assert.rejects(
      decodeAll(`${file.url}/clip.mp4`),
      (e) =>
        e instanceof ProviderError &&
        e.code === 'source_changed' &&
        /changed while it was read/.test(e.message) &&
        /"length":\d+/.test(e.message),
    );
  } finally {
    await file.close();
  }
});
