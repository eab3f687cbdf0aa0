// The console's moment search end to end (docs/moments.md): a real video task (detect + index steps, the
// local provider) indexes a 5 s clip, red for 2 s then a photo of a person, into a collection; the
// collection page searches it by text, shows the hit as a moment of the video (start-end, score, thumbnail)
// and, clicked, seeks the video to the moment's start and draws the boxes read from the task's result stream
// at the moment's stream_offset.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { makeMedia } from '../helpers/media.js';
import { chromiumMissing, eventually, launchBrowser, recordPageProblems, screenshot } from '../helpers/browser.js';
import { ensureConsoleBuilt } from '../helpers/console-build.js';
import { serveFile } from '../helpers/media-server.js';
import { chunksOf, readStream, waitStatus } from '../helpers/video-tasks.js';
import { projectRoot } from '../../src/base/paths.js';

const skip = chromiumMissing();
let t: TestApp;
let browser: Browser;
let page: Page;
let media: { url: string; close(): Promise<void> };
const pageProblems: string[] = [];

/** 2 s of red, then 3 s of the shipped photo of a person: 10 fps, 320x320 VP9 (Chromium plays it). */
const personClip = () =>
  makeMedia('moments_person.webm', [
    '-f',
    'lavfi',
    '-i',
    'color=c=red:s=320x320:r=10:d=2',
    '-loop',
    '1',
    '-framerate',
    '10',
    '-t',
    '3',
    '-i',
    join(projectRoot, 'assets', 'astronaut.jpg'),
    '-filter_complex',
    '[0:v]format=yuv420p,setsar=1[r];[1:v]scale=320:320,format=yuv420p,setsar=1[p];[r][p]concat=n=2:v=1[v]',
    '-map',
    '[v]',
    '-c:v',
    'libvpx-vp9',
    '-deadline',
    'realtime',
    '-cpu-used',
    '8',
    '-g',
    '10',
  ]);

before(async () => {
  if (skip) return;
  ensureConsoleBuilt();
  media = await serveFile(await personClip(), 'video/webm');
  t = await startTestApp();
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: t.url });
  context.setDefaultTimeout(30_000);
  // Signed in with the project's key already chosen (console.test.ts covers those pages).
  await context.addInitScript(
    ([token, projectId, key]) => {
      sessionStorage.setItem('sightflow.adminToken', token!);
      sessionStorage.setItem(`sightflow.projectKey.${projectId}`, key!);
    },
    [t.adminToken, t.projectId, t.key],
  );
  page = await context.newPage();
  recordPageProblems(page, pageProblems);
});
after(async () => {
  await browser?.close();
  await t?.close();
  await media?.close();
});

test('a moment hit plays its part of the video with the boxes read from the stream at its offset', {
  skip,
  timeout: 180_000,
}, async () => {
  const col = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'footage' } });
  assert.equal(col.status, 201, col.text);
  const created = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_url', url: `${media.url}/clip.webm`, sampling: { mode: 'fps', value: 2 } }],
      steps: [
        { model: 'detect', parameters: { classes: ['person'] } },
        { model: 'index', parameters: { collection: col.body.id, segment_ms: 2000, video_id: 'gate-cam' } },
      ],
    },
  });
  assert.equal(created.status, 202, created.text);
  const task = created.body.id as string;
  const done = await waitStatus(t, task, ['succeeded', 'failed'], 120_000);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));

  await page.goto(`/console/projects/${encodeURIComponent(t.projectId)}/collections/${col.body.id}`);
  // Video items found: the search goes by video.
  const byVideo = page.getByRole('checkbox', { name: 'Moments by video' });
  await eventually(
    () => byVideo.isChecked(),
    (c) => c,
    'the search to switch to moments by video',
  );
  await page.getByLabel('Search text').fill('a person');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  const list = page.getByRole('list', { name: 'Moments' });
  await list.waitFor({ timeout: 60_000 });
  const group = list.locator('.video-group[data-video="gate-cam"]');
  await group.waitFor();
  const hit = group.locator('.result.moment').first();
  // The person's shot (2-5 s, two segments merged) is the best moment; the red one comes after it.
  assert.deepEqual(
    [
      await hit.getAttribute('data-start-ms'),
      await hit.getAttribute('data-end-ms'),
      await hit.getAttribute('data-task-id'),
    ],
    ['2000', '5000', task],
  );
  assert.match(await hit.innerText(), /\d\.\d{3}[\s\S]*0:02\.0–0:05\.0/);
  await eventually(
    () => hit.locator('img').evaluate((i: HTMLImageElement) => (i.complete ? i.naturalWidth : 0)),
    (w) => w > 0,
    "the moment's thumbnail to load",
  );
  const offset = Number(await hit.getAttribute('data-stream-offset'));

  const streamUrls: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes(`/v1/video/tasks/${task}/stream`)) streamUrls.push(r.url());
  });
  await hit.getByRole('button', { name: /^Play gate-cam from 0:02\.0 to 0:05\.0/ }).click();
  const player = page.getByRole('region', { name: 'Moment' });
  await player.waitFor();
  const video = player.locator('video');
  // Seeks to the moment's start and plays it (at most to its end).
  await eventually(
    () => video.evaluate((v: HTMLVideoElement) => (v.readyState >= 1 ? v.currentTime : -1)),
    (s) => s >= 2 && s <= 5.05,
    'the video at the moment',
  );
  assert.equal(streamUrls.length >= 1 && new URL(streamUrls[0]!).searchParams.get('offset'), String(offset));

  // The boxes are the stream's from that offset: its first chunk is the moment's first frame, and the person
  // the moment's chunks track (from the second frame: a track is confirmed by two detections) is drawn.
  const chunks = chunksOf((await readStream(t, task, { offset, via: 'query' })).bytes);
  assert.equal(chunks[0].stream_info.stream_time_ms, 2000);
  const person = chunks
    .flatMap((c) => c.delta.results.flatMap((r: any) => r.targets ?? []))
    .find((x: any) => x.class === 'person');
  assert.ok(person, `a person in the moment's chunks: ${JSON.stringify(chunks.map((c) => c.delta))}`);
  const box = player.locator(`.overlay .box[data-class="person"][data-track-id="${person.track_id}"]`).first();
  await box.waitFor();
  assert.match(await box.innerText(), new RegExp(`person #${person.track_id} `));
  // Only the moment's frames were read: none before 2 s.
  const info = await eventually(
    () => player.getByTestId('frame-info').innerText(),
    (s) => /^frame \d+ · [2-5]\.\d\d s · [1-9]\d* object/.test(s),
    'a frame of the moment with its boxes',
  );
  assert.ok(Number(/ · (\d\.\d\d) s/.exec(info)![1]) >= 2, info);
  await screenshot(page, '14-collection-moment');
  assert.deepEqual(pageProblems, []);
});
