// An uploaded video is linked from its task record: input_url is a presigned /v1/files link to the staged
// file that answers byte ranges (a browser's <video> seeks with them), so the console draws on the real video.
// A task that read a URL has none.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { SyntheticProvider } from '../helpers/synthetic-provider.js';
import { h264Clip } from '../helpers/videos.js';

let t: TestApp;
before(async () => {
  t = await startTestApp({}, { videoProviders: () => [new SyntheticProvider()] });
});
after(async () => {
  await t?.close();
});

test('a video_base64 task links its staged video (byte ranges, no key needed); a video_url task does not', async () => {
  const bytes = readFileSync(await h264Clip());
  const up = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_base64', data: bytes.toString('base64') }],
      steps: [{ model: 'detect' }],
    },
  });
  assert.equal(up.status, 202, up.text);
  const rec = await api(t, `/v1/video/tasks/${up.body.id}`);
  assert.equal(rec.status, 200);
  const link = rec.body.input_url as string;
  assert.match(link, /^\/v1\/files\/video-inputs\/.+\?expires=\d+&sig=[0-9a-f]{64}$/);
  const whole = await fetch(`${t.url}${link}`);
  assert.equal(whole.status, 200);
  assert.deepEqual(Buffer.from(await whole.arrayBuffer()), bytes);
  const part = await fetch(`${t.url}${link}`, { headers: { range: 'bytes=100-199' } });
  assert.equal(part.status, 206);
  assert.deepEqual(Buffer.from(await part.arrayBuffer()), bytes.subarray(100, 200));
  // include=request keeps the link beside the echoed body.
  assert.equal(typeof (await api(t, `/v1/video/tasks/${up.body.id}?include=request`)).body.input_url, 'string');

  const byUrl = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_url', url: 'http://127.0.0.1:9/clip.mp4?frames=3' }],
      steps: [{ model: 'detect' }],
    },
  });
  assert.equal(byUrl.status, 202, byUrl.text);
  assert.equal((await api(t, `/v1/video/tasks/${byUrl.body.id}`)).body.input_url, undefined);
});
