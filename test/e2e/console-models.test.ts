// The console's Models tab end to end (real server, built console, Debian Chromium): the list with built-in
// models, adding a model by URL (served by a loopback hub; the server downloads it and runs it on the sample
// image, the page shows what it found), the new row, and removal through the confirmation dialog; a model's
// serving settings changed from its row (the server's PATCH), its own checks and the server's refusals shown;
// above the table the node's GPUs (a stand-in for the driver's library, test/helpers/nvml-stub.c, read again
// every few seconds).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { startTestApp, admin, type TestApp } from '../helpers/app.js';
import { chromiumMissing, launchBrowser, screenshot } from '../helpers/browser.js';
import { ensureConsoleBuilt } from '../helpers/console-build.js';
import { modelsDirWithBuiltins, tinyYoloOnnx } from '../helpers/inference.js';
import { startModelHub, type ModelHub } from '../helpers/model-hub.js';
import { buildNvmlStub } from '../helpers/nvml-stub.js';

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
  const nvml = buildNvmlStub();
  cleanups.push(async () => nvml.remove());
  // On the native engine (the console says so beside a loaded model); everything else here reads the same on either.
  t = await startTestApp({
    SIGHTFLOW_MODELS_DIR: modelsDir,
    SIGHTFLOW_NVML_LIBRARY: nvml.library,
    SIGHTFLOW_INFERENCE_ENGINE: 'native',
  });
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
  // The node's cards: every reading a card gives, none it does not.
  const gpus = page.getByRole('region', { name: 'GPUs on this node' });
  await gpus.getByText('Driver 580.95.05').waitFor();
  assert.deepEqual(await gpus.getByRole('listitem').allInnerTexts(), [
    'GPU 0 Stub GPU 0: 37% busy, 1.0 of 80.0 GB, NVDEC 12%, 41 °C, 123 W',
    'GPU 1 Stub GPU 1: 90% busy, 2.0 of 80.0 GB, 42 °C',
  ]);
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

test("Models tab: a built-in model's serving settings changed, refused when wrong, and put back", {
  skip,
  timeout: 120_000,
}, async () => {
  const table = await modelsTab();
  await table.getByRole('button', { name: 'Settings of centernet-coco' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('heading', { name: 'Serving settings of centernet-coco' }).waitFor();
  assert.equal(await dialog.getByLabel('Sessions').inputValue(), '', "empty: the server's default");

  // The form's own check: nothing is sent.
  await dialog.getByLabel('Batch sizes').fill('eight');
  await dialog.getByRole('button', { name: 'Save settings' }).click();
  await dialog
    .getByRole('alert')
    .getByText(/batch sizes: auto, all, or whole numbers/)
    .waitFor();
  // The server's refusal, in its own words.
  await dialog.getByLabel('Batch sizes').fill('1,4');
  await dialog.getByLabel('Sessions').fill('100');
  await dialog.getByRole('button', { name: 'Save settings' }).click();
  await dialog
    .getByRole('alert')
    .getByText(/sessions/i)
    .waitFor();
  assert.equal(
    (await admin(t, '/admin/v1/models')).body.data.find((m: { id: string }) => m.id === 'centernet-coco').settings
      .sessions,
    null,
  );

  await dialog.getByLabel('Sessions').fill('2');
  await dialog.getByLabel('Most inputs a call').fill('4');
  await dialog.getByLabel('Warm-up at load').selectOption('on');
  await screenshot(page, 'models-settings-dialog');
  await dialog.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Settings of centernet-coco saved').waitFor();
  await dialog.waitFor({ state: 'hidden' });
  const set = (await admin(t, '/admin/v1/models')).body.data.find((m: { id: string }) => m.id === 'centernet-coco');
  assert.deepEqual(
    [set.settings.sessions, set.settings.max_batch_size, set.settings.batch_sizes, set.settings.warmup],
    [2, 4, [1, 4], 'on'],
  );
  await table
    .getByRole('row', { name: /centernet-coco/ })
    .getByText('set: 2 sessions, up to 4 a call, sizes 1, 4, warm-up on')
    .waitFor();
  await screenshot(page, 'models-settings');

  // Opened again it shows them; emptied, the server's defaults come back.
  await table.getByRole('button', { name: 'Settings of centernet-coco' }).click();
  assert.equal(await dialog.getByLabel('Sessions').inputValue(), '2');
  assert.equal(await dialog.getByLabel('Batch sizes').inputValue(), '1,4');
  for (const label of ['Sessions', 'Most inputs a call', 'Batch sizes']) await dialog.getByLabel(label).fill('');
  await dialog.getByLabel('Warm-up at load').selectOption('');
  await dialog.getByRole('button', { name: 'Save settings' }).click();
  await dialog.waitFor({ state: 'hidden' });
  const reset = (await admin(t, '/admin/v1/models')).body.data.find((m: { id: string }) => m.id === 'centernet-coco');
  assert.deepEqual(
    [reset.settings.sessions, reset.settings.max_batch_size, reset.settings.batch_sizes, reset.settings.warmup],
    [null, null, null, null],
  );
  assert.deepEqual(pageProblems, []);
});

test('Models tab: a model loaded and unloaded on request; a queue depth taken in place', {
  skip,
  timeout: 120_000,
}, async () => {
  const table = await modelsTab();
  const row = table.getByRole('row', { name: /centernet-coco/ });
  const state = async () =>
    (await admin(t, '/admin/v1/models')).body.data.find((m: { id: string }) => m.id === 'centernet-coco').serving;
  if ((await state()).state === 'loaded') {
    await table.getByRole('button', { name: 'Unload centernet-coco' }).click();
    await table.getByRole('button', { name: 'Load centernet-coco' }).waitFor();
  }
  await table.getByRole('button', { name: 'Load centernet-coco' }).click();
  await table.getByRole('button', { name: 'Unload centernet-coco' }).waitFor();
  await row.getByText(/^loaded/).waitFor();
  const loaded = await state();
  assert.equal(loaded.state, 'loaded');
  assert.deepEqual(loaded.engine, { kind: 'native', cuda_graphs: null, pinned_inputs: false });
  await row.getByText(/^native engine, 1\/\d+ sessions/).waitFor();

  // A queue depth: the running model takes it, and the notice says so.
  await table.getByRole('button', { name: 'Settings of centernet-coco' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Queue depth').fill('9');
  await dialog.getByRole('button', { name: 'Save settings' }).click();
  await page.getByText('Settings of centernet-coco saved; the running model took them in place.').waitFor();
  assert.equal((await state()).loaded_at, loaded.loaded_at);
  await screenshot(page, 'models-load-unload');
  await table.getByRole('button', { name: 'Settings of centernet-coco' }).click();
  await dialog.getByLabel('Queue depth').fill('');
  await dialog.getByRole('button', { name: 'Save settings' }).click();
  await dialog.waitFor({ state: 'hidden' });

  await table.getByRole('button', { name: 'Unload centernet-coco' }).click();
  await table.getByRole('button', { name: 'Load centernet-coco' }).waitFor();
  assert.equal((await state()).state, 'unloaded');
  assert.deepEqual(pageProblems, []);
});

/** The console opened on its Models tab (signed in with the admin token where it asks); the models' table. */
async function modelsTab() {
  await page.goto('/console/');
  if (await page.getByLabel('Admin token').count()) {
    await page.getByLabel('Admin token').fill(t.adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }
  await page.getByRole('link', { name: 'Models' }).click();
  return page.getByRole('table', { name: 'Models' });
}
