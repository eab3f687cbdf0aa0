// Image searches take turns with the built-in embedder: two query images a session are decoded and embedded
// at once, the rest wait their turn before anything is decoded (a waiting request holds no pixels), and a
// query image given by URL is fetched before it waits, so a slow image server holds no turn.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sharp from 'sharp';
import { startTestApp, api, type TestApp } from '../helpers/app.js';
import { waitedTogether } from '../helpers/metrics-text.js';

let t: TestApp;
let searchPath: string;
before(async () => {
  // One session a model: two query images at a time.
  t = await startTestApp({ SIGHTFLOW_METRICS_PORT: '0', SIGHTFLOW_INFERENCE_SESSIONS: '1' });
  const created = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'turns' } });
  assert.equal(created.status, 201, created.text);
  searchPath = `/v1/vectors/collections/${created.body.id as string}/search`;
  assert.equal(
    (
      await api(t, `${searchPath.replace(/search$/, 'index')}`, {
        method: 'POST',
        json: { items: [{ text: 'a red square' }] },
      })
    ).status,
    200,
  );
});
after(async () => {
  await t?.close();
});

const photo = async (r: number, g: number, b: number) =>
  sharp({ create: { width: 320, height: 240, channels: 3, background: { r, g, b } } })
    .jpeg()
    .toBuffer();

const search = async (json: Record<string, unknown>) => {
  const started = performance.now();
  const r = await api(t, searchPath, { method: 'POST', json: { top_k: 1, ...json } });
  assert.equal(r.status, 200, r.text);
  return performance.now() - started;
};

test('with one session, three image searches sent together: two go at once, the third waits its turn', async () => {
  const image_base64 = (await photo(200, 30, 30)).toString('base64');
  await search({ image_base64 }); // the models load
  // waitedTogether sends two; a third beside them makes one wait behind the two turns.
  let third: Promise<number> | undefined;
  const { items, waitedMs } = await waitedTogether(t.app.metricsPort!, 'embedding image', () => {
    third ??= search({ image_base64 });
    return search({ image_base64 });
  });
  await third;
  assert.equal(items, 3, "the three searches went through the embedder's image turns");
  assert.ok(waitedMs > 0, 'one of them waited for a turn');
});

test('a query image fetched from a slow server holds no turn: a search sent after three of them answers first', async () => {
  const jpeg = await photo(30, 30, 200);
  const image_base64 = jpeg.toString('base64');
  await search({ image_base64 });
  const held: Array<() => void> = [];
  const slow: Server = createServer((_req, res) => {
    held.push(() => {
      if (!res.headersSent) res.writeHead(200, { 'content-type': 'image/jpeg' }).end(jpeg);
    });
  });
  await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/photo.jpg`;
    // Three searches whose images the server holds back: more than the two turns a session has.
    const fetching = [0, 1, 2].map(() => search({ image: url }));
    while (held.length < 3) await new Promise((r) => setTimeout(r, 10));
    const ms = await search({ image_base64 });
    assert.ok(ms < 5000, `the search waited ${ms.toFixed(0)} ms`);
    assert.equal(held.length, 3, 'the slow images were still being fetched when it answered');
    for (const send of held) send();
    await Promise.all(fetching);
  } finally {
    for (const send of held) send();
    slow.closeAllConnections();
    await new Promise((r) => slow.close(r));
  }
});
