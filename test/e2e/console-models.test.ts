// The console's Models tab end to end (real server, built console, Debian Chromium): the list with built-in
// models, adding a model by URL (served by a loopback hub; the server downloads it and runs it on the sample
// image, the page shows what it found), the new row, and removal through the confirmation dialog.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, admin, type TestApp } from '../helpers/app.js';
import { chromiumMissing, launchBrowser, screenshot } from '../helpers/browser.js';
import { ensureConsoleBuilt } from '../helpers/console-build.js';
import { modelsDirWithBuiltins, tinyYoloOnnx } from '../helpers/inference.js';
import { startModelHub, type ModelHub } from '../helpers/model-hub.js';

const skip = chromiumMissing();
let t: TestApp;
let hub: ModelHub;
let browser: Browser;
let page: Page;
const cleanups: Array<() => Promise<void>> = [];
const pageProblems: string[] = [];

before(async () => {
  if (skip) return;
  ensureConsoleBuilt();
  hub = await startModelHub([
    {
      owner: 'acme',
      repo: 'tiny',
      path: 'tiny.onnx',
      bytes: Buffer.from(tinyYoloOnnx('yolov8', [{ cx: 200, cy: 300, w: 150, h: 400, cls: 0, score: 0.9 }], 80, 320)),
    },
  ]);
  const modelsDir = await modelsDirWithBuiltins({
    after: (fn) => {
      cleanups.push(fn);
    },
  });
  t = await startTestApp({ SIGHTFLOW_MODELS_DIR: modelsDir });
  browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, baseURL: t.url });
  context.setDefaultTimeout(30_000);
  page = await context.newPage();
  page.on('pageerror', (e) => pageProblems.push(`pageerror: ${e.message}`));
});
after(async () => {
  await browser?.close();
  await t?.close();
  await hub?.close();
  for (const fn of cleanups) await fn();
});

test('Models tab: list, add by URL (checked on the sample image), remove', { skip, timeout: 120_000 }, async () => {
  await page.goto('/console/');
  await page.getByLabel('Admin token').fill(t.adminToken);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'Models' }).click();
  await page.getByRole('heading', { name: 'Models' }).waitFor();
  const table = page.getByRole('table', { name: 'Models' });
  await table.getByRole('cell', { name: 'centernet-coco', exact: true }).waitFor();
  assert.equal(
    await table.getByRole('button', { name: 'Remove centernet-coco' }).count(),
    0,
    'built-in models cannot be removed',
  );

  await page.getByLabel('Model URL').fill(`${hub.url}/acme/tiny/resolve/main/tiny.onnx`);
  await page.getByLabel('Id').fill('tiny-console');
  await page.getByRole('button', { name: 'Add model' }).click();
  const notice = page.getByText(/tiny-console: detected on astronaut\.jpg: 1 person/);
  await notice.waitFor();
  await table.getByRole('cell', { name: 'tiny-console', exact: true }).waitFor();
  await screenshot(page, 'models-added');
  const listed = await admin(t, '/admin/v1/models');
  assert.ok(listed.body.data.some((m: { id: string }) => m.id === 'tiny-console'));

  await table.getByRole('button', { name: 'Remove tiny-console' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Remove model' }).click();
  await table.getByRole('cell', { name: 'tiny-console', exact: true }).waitFor({ state: 'detached' });
  const after = await admin(t, '/admin/v1/models');
  assert.ok(!after.body.data.some((m: { id: string }) => m.id === 'tiny-console'));

  // A URL that does not answer shows the server's one-line reason.
  await page.getByLabel('Model URL').fill('http://127.0.0.1:9/none.onnx');
  await page.getByRole('button', { name: 'Add model' }).click();
  await page.getByText(/could not be fetched: connection refused/).waitFor();
  assert.deepEqual(pageProblems, []);
});
