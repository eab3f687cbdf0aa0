// The web console end to end: the real server on port 0 serves the built console, headless Debian
// Chromium drives it. Sign-in, projects, keys (shown once, working, gone after reload, disabled -> 401),
// usage rising, a finished video task with its boxes drawn over the video, a text search, and the pages'
// fallbacks when an API is missing. Screenshots of each page go to test-artifacts/console/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestApp, api, type TestApp } from '../helpers/app.js';
import { vp9Clip } from '../helpers/media.js';
import { chromiumMissing, eventually, launchBrowser, recordPageProblems, screenshot } from '../helpers/browser.js';
import { ensureConsoleBuilt } from '../helpers/console-build.js';
import { serveFile } from '../helpers/media-server.js';
import { SyntheticProvider } from '../helpers/synthetic-provider.js';

const skip = chromiumMissing();
const ADMIN_TOKEN = 'test-admin-token';
let t: TestApp;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let media: { url: string; close(): Promise<void> };
const pageProblems: string[] = [];

before(async () => {
  if (skip) return;
  ensureConsoleBuilt();
  media = await serveFile(await vp9Clip(), 'video/webm');
  // Video tasks here run on the synthetic provider: known boxes at known frames, without a model.
  const synthetic = new SyntheticProvider();
  t = await startTestApp({}, { videoProviders: () => [synthetic] });
  browser = await launchBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: t.url });
  context.setDefaultTimeout(30_000);
  page = await context.newPage();
  recordPageProblems(page, pageProblems);
});
after(async () => {
  await browser?.close();
  await t?.close();
  await media?.close();
});

async function signIn(p: Page, token = ADMIN_TOKEN): Promise<void> {
  await p.goto('/console/');
  await p.getByLabel('Admin token').fill(token);
  await p.getByRole('button', { name: 'Sign in' }).click();
}

test('the server serves the console: index, SPA fallback, assets with content types, 404 for missing assets', {
  skip,
}, async () => {
  const root = await fetch(`${t.url}/console`);
  assert.equal(root.status, 200);
  assert.match(root.headers.get('content-type') ?? '', /^text\/html/);
  const html = await root.text();
  assert.match(html, /<div id="app">/);
  assert.match(root.headers.get('content-security-policy') ?? '', /script-src 'self'/);
  const deep = await fetch(`${t.url}/console/projects/proj_x/usage`);
  assert.equal(deep.status, 200);
  assert.equal(await deep.text(), html);
  const js = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1]!;
  const asset = await fetch(t.url + js);
  assert.equal(asset.status, 200);
  assert.match(asset.headers.get('content-type') ?? '', /^text\/javascript/);
  assert.match(asset.headers.get('cache-control') ?? '', /immutable/);
  const missing = await fetch(`${t.url}/console/assets/nope.js`);
  assert.equal(missing.status, 404);
  assert.equal(((await missing.json()) as { error: { type: string } }).error.type, 'not_found_error');
  const escape = await fetch(`${t.url}/console/..%2F..%2Fpackage.json`);
  assert.notEqual(escape.status, 200);
});

test('a wrong admin token is refused at sign-in and no data is shown', { skip }, async () => {
  await signIn(page, 'not-the-token');
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.innerText(), /Sign-in failed[\s\S]*not accepted/);
  assert.equal(await page.getByRole('table').count(), 0);
  assert.equal(await page.getByText('default').count(), 0);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('sightflow.adminToken')), null);
  await screenshot(page, '01-sign-in-error');
});

test('sign in, create a project, create a key shown once that works, gone after reload, disable it -> 401', {
  skip,
  timeout: 120_000,
}, async () => {
  await signIn(page);
  await page.getByRole('heading', { name: 'Projects' }).waitFor();
  await page.getByRole('table', { name: 'Projects' }).getByRole('link', { name: 'default' }).waitFor();
  await screenshot(page, '02-projects');

  await page.getByRole('textbox', { name: 'New project' }).fill('acme');
  await page.getByRole('button', { name: 'Create project' }).click();
  await page.getByRole('heading', { name: 'acme', level: 1 }).waitFor();
  const projectId = decodeURIComponent(/\/projects\/([^/]+)\/keys/.exec(new URL(page.url()).pathname)![1]!);

  await page.getByLabel('New key name').fill('ci');
  await page.getByRole('button', { name: 'Create key' }).click();
  const keyBox = page.locator('#new-key-value');
  await keyBox.waitFor();
  const key = await keyBox.inputValue();
  assert.match(key, /^sk_sf_[A-Za-z0-9_-]{43}$/);
  assert.match(await page.getByRole('region', { name: /created/ }).innerText(), /you will not see this key again/i);
  await page.getByRole('button', { name: 'Copy' }).waitFor();
  await screenshot(page, '03-key-created-once');

  const me = await api(t, '/v1/project', { key });
  assert.equal(me.status, 200);
  assert.equal(me.body.id, projectId);
  assert.equal(me.body.name, 'acme');

  await page.reload();
  const row = page.getByRole('row', { name: /ci/ });
  await row.waitFor();
  assert.equal(await page.locator('#new-key-value').count(), 0);
  assert.ok(!(await page.content()).includes(key), 'the full key must not be on the page after a reload');
  // Used once above, so "last used" is a time, not "never".
  const cells = (await row.innerText()).split('\t').map((c) => c.trim());
  assert.equal(cells[0], 'ci');
  assert.equal(cells[1], `sk_sf_...${key.slice(-4)}`);
  assert.notEqual(cells[3], 'never');
  assert.equal(cells[4], 'active');
  await screenshot(page, '04-keys');

  await row.getByRole('button', { name: /Disable key ci/ }).click();
  const dialog = page.getByRole('dialog', { name: 'Disable this key?' });
  await dialog.waitFor();
  await screenshot(page, '05-key-disable-confirm');
  await dialog.getByRole('button', { name: 'Disable key' }).click();
  await eventually(
    () => row.innerText(),
    (s) => /disabled/.test(s),
    'the key row to say disabled',
  );
  // Disabled keys stop working within 5 s on every node (key cache).
  await eventually(
    async () => (await api(t, '/v1/project', { key })).status,
    (s) => s === 401,
    'a 401 for the disabled key',
    15_000,
  );
});

test('usage per day rises after a vision call (chart and table)', { skip }, async () => {
  await page.goto(`/console/projects/${encodeURIComponent(t.projectId)}/usage`);
  const total = page.locator('[data-total="requests"]');
  await total.waitFor();
  const before = Number((await total.innerText()).replace(/\D/g, ''));
  // A real vision call (billed by the server itself), and a video-sized event recorded through the ledger.
  const image = (
    await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 40, g: 120, b: 200 } } })
      .png()
      .toBuffer()
  ).toString('base64');
  const detect = await api(t, '/v1/vision/detect', {
    method: 'POST',
    json: { image_base64: `data:image/png;base64,${image}` },
  });
  assert.equal(detect.status, 200, detect.text);
  await t.app.services.usage.record({
    projectId: t.projectId,
    endpoint: '/v1/video/process',
    model: 'test',
    inputTokens: 340,
    outputTokens: 13,
    frames: 40,
    ms: 900,
  });
  await page.getByRole('button', { name: 'Refresh' }).click();
  await eventually(
    async () => Number((await total.innerText()).replace(/\D/g, '')),
    (n) => n === before + 2,
    'the request total to rise by 2',
  );
  const today = new Date().toISOString().slice(0, 10);
  const cells = (await page.getByRole('row', { name: new RegExp(today) }).innerText())
    .split('\t')
    .map((c) => Number(c.replace(/[^\d.]/g, '')));
  assert.ok(
    cells[2]! >= 340 + detect.body.usage.input_tokens && cells[3]! >= 13 && cells[4]! >= 40,
    `today's row: ${cells.join(' | ')}`,
  );
  const bar = page.locator(`svg.chart rect[data-day="${today}"]`);
  assert.ok(Number(await bar.getAttribute('data-value')) >= 2);
  assert.ok(Number(await bar.getAttribute('height')) > 0);
  await screenshot(page, '06-usage');
});

test("a finished video task plays its video with each frame's boxes drawn in sync, and its track table", {
  skip,
  timeout: 120_000,
}, async () => {
  // Synthetic frames: 10 at 10 fps; frame i has one box at (i, 2i) sized 10x20, track 1 on even frames, 2 on odd.
  const created = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_url', url: `${media.url}/clip.webm?frames=10&frame_ms=20` }],
      steps: [{ model: 'detect' }],
    },
  });
  assert.equal(created.status, 202, created.text);
  const id = created.body.id as string;
  await eventually(
    async () => (await api(t, `/v1/video/tasks/${id}`)).body.status,
    (s) => s === 'succeeded' || s === 'failed',
    'the task to finish',
    60_000,
  );

  await page.goto(`/console/projects/${encodeURIComponent(t.projectId)}/tasks`);
  await page.getByRole('heading', { name: 'A project key is needed' }).waitFor();
  await screenshot(page, '07-project-key-needed');
  await page.getByRole('button', { name: 'Create a key for the console' }).click();
  const link = page.getByRole('link', { name: id });
  await link.waitFor();
  // Status filters go to the server: failed hides the task, succeeded shows it again.
  await page.getByRole('checkbox', { name: 'failed' }).check();
  await page.getByText('No video tasks with this status yet').waitFor();
  await page.getByRole('checkbox', { name: 'failed' }).uncheck();
  await page.getByRole('checkbox', { name: 'succeeded' }).check();
  await link.waitFor();
  await screenshot(page, '07-video-tasks');
  await link.click();

  await page.getByTestId('task-status').filter({ hasText: 'succeeded' }).waitFor();
  await eventually(
    () => page.getByTestId('frame-info').innerText(),
    (s) => /^frame \d+/.test(s),
    'frames from the stream',
  );
  const video = page.locator('.stage video');
  await eventually(
    () => video.evaluate((v: HTMLVideoElement) => v.videoWidth),
    (w) => w === 160,
    'the source video to load',
  );

  await page.locator('#frame-slider').fill('5');
  await eventually(
    () => page.getByTestId('frame-info').innerText(),
    (s) => s.startsWith('frame 5 '),
    'frame 5 to show',
  );
  const box = page.locator('.overlay .box[data-track-id="2"]');
  await box.waitFor();
  assert.equal(await page.locator('.overlay .box').count(), 1);
  const stage = (await video.boundingBox())!;
  const b = (await box.boundingBox())!;
  const sx = stage.width / 160;
  const sy = stage.height / 120;
  // roi {left: 5, top: 10, width: 10, height: 20} in source pixels, scaled to the player (border included).
  assert.ok(Math.abs(b.x - stage.x - 5 * sx) < 3, `box x ${b.x - stage.x} vs ${5 * sx}`);
  assert.ok(Math.abs(b.y - stage.y - 10 * sy) < 3, `box y ${b.y - stage.y} vs ${10 * sy}`);
  assert.ok(Math.abs(b.width - 10 * sx) < 3 && Math.abs(b.height - 20 * sy) < 3, `box size ${b.width}x${b.height}`);
  assert.match(await box.innerText(), /car #2/);
  // The video's clock drives the boxes too: frame 4 (0.4 s) is track 1.
  await video.evaluate((v: HTMLVideoElement) => {
    v.pause();
    v.currentTime = 0.45;
  });
  await page.locator('.overlay .box[data-track-id="1"]').waitFor();
  assert.match(await page.getByTestId('frame-info').innerText(), /^frame 4 /);

  const tracks = page.getByRole('table', { name: 'Tracks' });
  await tracks.waitFor();
  assert.equal(await tracks.locator('tbody tr').count(), 2);
  assert.match(await tracks.locator('tr[data-track-id="2"]').innerText(), /car/);
  await page.locator('#frame-slider').fill('5');
  await screenshot(page, '09-video-task');
});

test("a running task's page fills in live from the stream and ends complete", { skip, timeout: 120_000 }, async () => {
  const created = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_url', url: `${media.url}/clip.webm?frames=40&frame_ms=250` }],
      steps: [{ model: 'detect' }],
    },
  });
  assert.equal(created.status, 202, created.text);
  await page.goto(`/console/projects/${encodeURIComponent(t.projectId)}/tasks/${created.body.id}`);
  const frameCount = async () =>
    Number(/(\d+) frame\(s\)/.exec(await page.locator('.facts dd[aria-live]').innerText())?.[1] ?? -1);
  const early = await eventually(frameCount, (n) => n > 0, 'the first live frames');
  // The boxes follow the newest frames while the task still runs (the video sits at 0 s: frame 0's box).
  assert.ok(early < 40, `saw ${early} frames before the stream ended: not live`);
  await page.locator('.overlay .box').first().waitFor();
  await screenshot(page, '08-video-task-live');
  await eventually(frameCount, (n) => n === 40, 'all 40 frames', 60_000);
  await page.getByTestId('task-status').filter({ hasText: 'succeeded' }).waitFor({ timeout: 30_000 });
  assert.match(await page.locator('.facts dd[aria-live]').innerText(), /^complete/);
});

test('collections: create and delete in the console, text search shows a grid with thumbnails, scores, metadata', {
  skip,
  timeout: 180_000,
}, async () => {
  const col = await api(t, '/v1/vectors/collections', {
    method: 'POST',
    json: { name: 'photos', description: 'things seen' },
  });
  assert.equal(col.status, 201, col.text);
  const png = async (r: number, g: number, b: number) =>
    'data:image/png;base64,' +
    (
      await sharp({ create: { width: 96, height: 64, channels: 3, background: { r, g, b } } })
        .png()
        .toBuffer()
    ).toString('base64');
  const items = [
    { text: 'a dog playing with a ball in the park', metadata: { caption: 'dog' } },
    { text: 'a plate of pasta with tomato sauce', metadata: { caption: 'pasta' } },
    { text: 'snow covered mountains at sunrise', metadata: { caption: 'mountains' } },
    { image_base64: await png(220, 30, 30), metadata: { caption: 'red square' } },
    { image_base64: await png(30, 60, 220), metadata: { caption: 'blue square' } },
  ];
  const indexed = await api(t, `/v1/vectors/collections/${col.body.id}/index`, { method: 'POST', json: { items } });
  assert.equal(indexed.status, 200, indexed.text);

  await page.goto(`/console/projects/${encodeURIComponent(t.projectId)}/collections`);
  await page.getByRole('table', { name: 'Collections' }).getByRole('link', { name: 'photos' }).waitFor();

  // Create and delete one through the console.
  await page.getByLabel('New collection').fill('scratch');
  await page.getByRole('button', { name: 'Create collection' }).click();
  await page.getByRole('heading', { name: 'scratch', level: 2 }).waitFor();
  await page.getByRole('link', { name: 'Collections', exact: true }).first().click();
  await page.getByRole('button', { name: 'Delete collection scratch' }).click();
  await screenshot(page, '10-collections-delete-confirm');
  await page.getByRole('dialog').getByRole('button', { name: 'Delete collection' }).click();
  await eventually(
    () => page.getByRole('button', { name: 'Delete collection scratch' }).count(),
    (n) => n === 0,
    'the deleted collection to leave the list',
  );
  assert.equal(
    (await api(t, '/v1/vectors/collections')).body.data.some((c: { name: string }) => c.name === 'scratch'),
    false,
  );
  await screenshot(page, '11-collections');

  await page.getByRole('link', { name: 'photos' }).click();
  await page.getByTestId('item-count').filter({ hasText: '5' }).waitFor();
  await page.getByLabel('Search text').fill('a puppy chasing a ball on the grass');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  const grid = page.getByRole('list', { name: 'Search results' });
  await grid.waitFor({ timeout: 60_000 });
  const cards = grid.getByRole('listitem');
  assert.ok((await cards.count()) >= 3);
  assert.match(await cards.first().innerText(), /^[\s\S]*\d\.\d{3}[\s\S]*caption[\s\S]*dog/);
  const thumbs = grid.locator('img');
  assert.ok((await thumbs.count()) >= 1, 'image items show thumbnails');
  await eventually(
    () => thumbs.first().evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth),
    (w) => w === 96,
    'a thumbnail to load from its presigned link',
  );
  await screenshot(page, '12-collection-search');

  // An image given to the drop zone searches by image: the indexed red square itself comes first.
  const red = Buffer.from(items[3]!.image_base64!.split(',')[1]!, 'base64');
  await page
    .locator('.dropzone input[type="file"]')
    .setInputFiles({ name: 'red.png', mimeType: 'image/png', buffer: red });
  await page.getByText(/result\(s\) for red\.png/).waitFor({ timeout: 60_000 });
  assert.match(await grid.getByRole('listitem').first().innerText(), /caption\s*red square/);
  await screenshot(page, '12-collection-image-search');
});

test('video and vector pages say so clearly when their API answers 404', { skip }, async () => {
  const missing = {
    status: 404,
    contentType: 'application/json',
    body: JSON.stringify({
      error: { type: 'not_found_error', code: 'route_not_found', message: 'No route', param: null },
    }),
  };
  await page.route('**/v1/video/tasks**', (r) => r.fulfill(missing));
  await page.route('**/v1/vectors/**', (r) => r.fulfill(missing));
  try {
    await page.goto(`/console/projects/${encodeURIComponent(t.projectId)}/tasks`);
    await page.getByText('Video tasks are not available on this server').waitFor();
    await screenshot(page, '13-video-unavailable');
    await page.goto(`/console/projects/${encodeURIComponent(t.projectId)}/collections`);
    await page.getByText('Vector collections are not available on this server').waitFor();
  } finally {
    await page.unrouteAll();
  }
});

test('a stored project key that gets disabled sends the page back to the key choice', { skip }, async () => {
  const stored = await page.evaluate((id) => sessionStorage.getItem(`sightflow.projectKey.${id}`), t.projectId);
  assert.ok(stored);
  const keys = await t.app.services.projects.listKeys(t.projectId);
  const consoleKey = keys.find((k) => stored.endsWith(k.hint.slice(-4)) && k.name === 'console')!;
  await t.app.services.projects.disableKey(t.projectId, consoleKey.id);
  await eventually(
    async () => (await api(t, '/v1/project', { key: stored })).status,
    (s) => s === 401,
    'the console key to stop working',
    15_000,
  );
  await page.goto(`/console/projects/${encodeURIComponent(t.projectId)}/collections`);
  await page.getByText(/stored project key stopped working/).waitFor();
  assert.equal(await page.evaluate((id) => sessionStorage.getItem(`sightflow.projectKey.${id}`), t.projectId), null);
  // A pasted key of another project is refused; the project's own key is taken.
  const other = (await t.app.services.projects.list()).find((p) => p.name === 'acme')!;
  const otherKey = (await t.app.services.projects.createKey(other.id, 'other')).key;
  await page.getByLabel('Or paste a key').fill(otherKey);
  await page.getByRole('button', { name: 'Use this key' }).click();
  await page.getByText('That key belongs to project "acme", not this one.').waitFor();
  await page.getByLabel('Or paste a key').fill(t.key);
  await page.getByRole('button', { name: 'Use this key' }).click();
  await page.getByRole('table', { name: 'Collections' }).getByRole('link', { name: 'photos' }).waitFor();
  assert.equal(await page.evaluate((id) => sessionStorage.getItem(`sightflow.projectKey.${id}`), t.projectId), t.key);
});

test('no page errors or Content-Security-Policy violations on any page', { skip }, () => {
  assert.deepEqual(pageProblems, []);
});
