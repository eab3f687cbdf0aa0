// Counting in the console (headless Debian Chromium, the real server): on a finished task's page a line is
// placed with two clicks and a zone with four and a close, Recount sends them (POST .../analytics/recount)
// and the counts come back into the table; the heatmap image shows over the frame. The synthetic provider's
// three walkers cross x = 400 right to left: a line drawn downwards there counts them `in`. A task that counted
// lists its crossings with their times (a click shows that frame); an uploaded video plays from the record's
// presigned link.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, api, type TestApp } from '../helpers/app.js';
import { chromiumMissing, launchBrowser, screenshot } from '../helpers/browser.js';
import { ensureConsoleBuilt } from '../helpers/console-build.js';
import { SyntheticProvider } from '../helpers/synthetic-provider.js';
import { waitStatus } from '../helpers/video-tasks.js';
import { vp9Clip } from '../helpers/media.js';

const skip = chromiumMissing();
let t: TestApp;
let browser: Browser;
let page: Page;
const pageProblems: string[] = [];

before(async () => {
  if (skip) return;
  ensureConsoleBuilt();
  const synthetic = new SyntheticProvider();
  t = await startTestApp({}, { videoProviders: () => [synthetic] });
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, baseURL: t.url });
  context.setDefaultTimeout(20_000);
  // Signed in with a project key already (the sign-in and key pages have their own tests).
  await context.addInitScript(
    ({ token, projectId, key }) => {
      sessionStorage.setItem('sightflow.adminToken', token);
      sessionStorage.setItem(`sightflow.projectKey.${projectId}`, key);
    },
    { token: t.adminToken, projectId: t.projectId, key: t.key },
  );
  page = await context.newPage();
  page.on('pageerror', (e) => pageProblems.push(`pageerror: ${e.message}`));
});
after(async () => {
  await browser?.close();
  await t?.close();
});

test('a line and a zone placed by clicking on a finished task, recounted: the counts come back; the heatmap shows', {
  skip,
  timeout: 60_000,
}, async () => {
  const created = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_url', url: 'http://127.0.0.1:9/clip.mp4?frames=40&frame_ms=1&walkers=3' }],
      steps: [{ model: 'detect', parameters: { classes: ['person'] } }],
    },
  });
  assert.equal(created.status, 202, created.text);
  const id = created.body.id as string;
  await waitStatus(t, id, ['succeeded']);

  await page.goto(`/console/projects/${encodeURIComponent(t.projectId)}/tasks/${id}`);
  await page.getByTestId('task-status').filter({ hasText: 'succeeded' }).waitFor();
  await page.getByText('This task has no analytics step').waitFor();
  // No playable video here: the frame is the space that holds every box (boxes up to x 610, y 200; 5% more).
  const layer = page.getByTestId('rules-layer');
  await layer.waitFor();
  const space = { width: Math.ceil(610 * 1.05), height: Math.ceil(200 * 1.05) };
  const at = async (x: number, y: number) => {
    const r = (await layer.boundingBox())!;
    await page.mouse.click(r.x + (x / space.width) * r.width, r.y + (y / space.height) * r.height);
  };
  await page.getByRole('button', { name: 'Line', exact: true }).click();
  await at(400, 2);
  await at(400, 208);
  await page.getByRole('button', { name: 'Zone', exact: true }).click();
  for (const [x, y] of [
    [20, 20],
    [300, 20],
    [300, 205],
    [20, 205],
  ] as const)
    await at(x, y);
  await page.getByRole('button', { name: 'Close zone' }).click();
  assert.equal(await layer.locator('[data-rule]').count(), 2);

  await page.getByRole('button', { name: 'Recount' }).click();
  const counts = page.getByRole('table', { name: 'Counts' });
  await counts.waitFor();
  assert.equal(await counts.getAttribute('data-source'), 'recount');
  assert.equal(await counts.locator('tr[data-rule="line1"] [data-count="in"]').innerText(), '3');
  assert.equal(await counts.locator('tr[data-rule="line1"] [data-count="out"]').innerText(), '0');
  assert.equal(await counts.locator('tr[data-rule="zone1"] [data-count="entered"]').innerText(), '3');
  assert.match(
    await page.getByRole('status').filter({ hasText: 'Recounted' }).innerText(),
    /Recounted 40 stored frames/,
  );

  await page.getByLabel('Show heatmap').check();
  const img = page.getByTestId('heatmap');
  await img.waitFor();
  const natural = await img.evaluate(async (el: HTMLImageElement) => {
    await el.decode();
    return el.naturalWidth;
  });
  assert.ok(natural > 0);
  await screenshot(page, '20-task-counting');
  assert.deepEqual(pageProblems, []);
});

test('a task that counted: each crossing is listed with its time, and a click shows the frame at that time', {
  skip,
  timeout: 60_000,
}, async () => {
  const created = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_url', url: 'http://127.0.0.1:9/clip.mp4?frames=40&frame_ms=1&walkers=3' }],
      steps: [
        { model: 'detect', parameters: { classes: ['person'] } },
        {
          model: 'analytics',
          parameters: {
            lines: [
              {
                id: 'door',
                points: [
                  [400, 0],
                  [400, 480],
                ],
              },
            ],
          },
        },
      ],
    },
  });
  assert.equal(created.status, 202, created.text);
  const id = created.body.id as string;
  await waitStatus(t, id, ['succeeded']);

  await page.goto(`/console/projects/${encodeURIComponent(t.projectId)}/tasks/${id}`);
  await page.getByTestId('task-status').filter({ hasText: 'succeeded' }).waitFor();
  // The walkers' feet (x = 600 - 20 i at 100 ms a frame) pass x = 400 at frame 10; two frames past the 4 px
  // band, at frame 12 (1.2 s), each crossing counts.
  const list = page.getByRole('list', { name: /Events \(3\)/ });
  await list.waitFor();
  const items = list.locator('li[data-event="line.crossed"]');
  assert.equal(await items.count(), 3);
  assert.match(await items.first().innerText(), /^0:01\.2 line door in, track \d+$/);
  const info = page.getByTestId('frame-info');
  assert.match(await info.innerText(), /^frame 39 /);
  await items.nth(1).getByRole('button').click();
  await page.waitForFunction(() =>
    document.querySelector('[data-testid="frame-info"]')?.textContent?.startsWith('frame 12 · 1.20 s'),
  );
  assert.deepEqual(pageProblems, []);
});

test("an uploaded video plays on the task page from the record's presigned link (no blank frame)", {
  skip,
  timeout: 60_000,
}, async () => {
  const created = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_base64', data: readFileSync(await vp9Clip()).toString('base64') }],
      steps: [{ model: 'detect', parameters: { classes: ['person'] } }],
    },
  });
  assert.equal(created.status, 202, created.text);
  const id = created.body.id as string;
  await waitStatus(t, id, ['succeeded']);
  await page.goto(`/console/projects/${encodeURIComponent(t.projectId)}/tasks/${id}`);
  await page.getByTestId('task-status').filter({ hasText: 'succeeded' }).waitFor();
  const video = page.locator('.player video');
  await video.waitFor();
  assert.match((await video.getAttribute('src'))!, /^\/v1\/files\/video-inputs\//);
  await page.waitForFunction(() => {
    const v = document.querySelector('.player video') as HTMLVideoElement | null;
    return v !== null && v.readyState >= 1 && v.videoWidth === 160;
  });
  assert.equal(await page.getByText('the server offers no link to it').count(), 0);
  assert.deepEqual(pageProblems, []);
});
