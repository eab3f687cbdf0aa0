// `sightflow models add` through the real CLI against a loopback server laid out like the Hugging Face hub:
// a hub reference downloads (interrupted once, resumed with Range, checksum verified against the hub's
// X-Linked-Etag), the model runs on the sample image and its manifest is written; a wrong checksum is
// refused with nothing half-written left; an unreachable source is one clear line and exit status 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { runCli } from '../helpers/cli.js';
import { tinyYoloOnnx } from '../helpers/inference.js';
import { startModelHub } from '../helpers/model-hub.js';

// A detector whose boxes scale with the image's brightness: on the sample photo it finds a person.
const model = Buffer.from(
  tinyYoloOnnx(
    'yolov8',
    [
      { cx: 200, cy: 300, w: 150, h: 400, cls: 0, score: 0.9 },
      { cx: 500, cy: 300, w: 80, h: 60, cls: 2, score: 0.05 },
    ],
    80,
    640,
  ),
);
const sha = createHash('sha256').update(model).digest('hex');

async function dataDir(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sightflow-add-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const filesUnder = (dir: string): string[] =>
  existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String) : [];

test('a hub reference downloads, resumes after a cut, is checked on the sample image and added', async (t) => {
  const hub = await startModelHub(
    [{ owner: 'acme', repo: 'detectors', rev: 'v1', path: 'onnx/tiny.onnx', bytes: model }],
    { cutFirst: 700 },
  );
  t.after(() => hub.close());
  const dir = await dataDir(t);
  const r = await runCli(['models', 'add', 'acme/detectors@v1:onnx/tiny.onnx', '--id', 'tiny-hub', '--data-dir', dir], {
    SIGHTFLOW_MODEL_HUB_URL: hub.url,
    SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true',
  });
  assert.equal(r.code, 0, r.stderr);
  // Two body requests: the first cut after 700 bytes (fewer may arrive before the reset), the second a Range from there.
  const bodies = hub.requests.filter((q) => q.path.startsWith('/cdn/'));
  assert.deepEqual(
    bodies.map((q) => q.status),
    [200, 206],
  );
  const from = Number(/^bytes=(\d+)-$/.exec(bodies[1]!.range ?? '')?.[1]);
  assert.ok(from > 0 && from <= 700, `resumed from ${bodies[1]!.range}`);
  assert.match(r.stderr, /tiny-hub: download resumed at/);
  assert.match(r.stdout, /tiny-hub: detected on astronaut\.jpg: 1 person/);
  const manifest = JSON.parse(readFileSync(join(dir, 'manifests', 'tiny-hub.json'), 'utf8'));
  assert.equal(manifest.source.sha256, sha);
  assert.equal(manifest.origin.url, 'acme/detectors@v1:onnx/tiny.onnx');
  assert.ok(existsSync(join(dir, 'models', 'tiny-hub', `${sha}.onnx`)));
  assert.deepEqual(filesUnder(join(dir, 'downloads')), [], 'the download was moved into place');

  // The same id again is refused.
  const again = await runCli(
    ['models', 'add', 'acme/detectors@v1:onnx/tiny.onnx', '--id', 'tiny-hub', '--data-dir', dir],
    { SIGHTFLOW_MODEL_HUB_URL: hub.url, SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true' },
  );
  assert.equal(again.code, 1);
  assert.match(again.stderr, /already registered/);

  // `models list` shows it; remove takes it away.
  const list = await runCli(['models', 'list', '--json', '--data-dir', dir]);
  assert.ok((JSON.parse(list.stdout) as { id: string }[]).some((m) => m.id === 'tiny-hub'));
  const rm1 = await runCli(['models', 'remove', 'tiny-hub', '--data-dir', dir]);
  assert.equal(rm1.code, 0, rm1.stderr);
  assert.ok(!existsSync(join(dir, 'manifests', 'tiny-hub.json')));
  assert.ok(!existsSync(join(dir, 'models', 'tiny-hub')));
});

test('a wrong checksum is refused and leaves nothing behind', async (t) => {
  const hub = await startModelHub(
    [
      { owner: 'acme', repo: 'detectors', path: 'tiny.onnx', bytes: model },
      // A mirror that announces another file's checksum.
      { owner: 'acme', repo: 'corrupt', path: 'tiny.onnx', bytes: model, etag: 'f'.repeat(64) },
    ],
    { cutFirst: 500 },
  );
  t.after(() => hub.close());
  const dir = await dataDir(t);
  const env = { SIGHTFLOW_MODEL_HUB_URL: hub.url, SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true' };
  const given = await runCli(
    ['models', 'add', 'acme/detectors:tiny.onnx', '--sha256', '0'.repeat(64), '--data-dir', dir],
    env,
  );
  assert.equal(given.code, 1);
  assert.equal(
    given.stderr.trim().split('\n').at(-1),
    `sightflow: The downloaded model has sha256 ${sha} but ${'0'.repeat(64)} was expected; nothing was kept`,
  );
  const hubSays = await runCli(['models', 'add', 'acme/corrupt:tiny.onnx', '--data-dir', dir], env);
  assert.equal(hubSays.code, 1);
  assert.match(hubSays.stderr, /sightflow: The downloaded model has sha256 [0-9a-f]{64} but f{64} was expected/);
  assert.deepEqual(filesUnder(join(dir, 'downloads')), []);
  assert.deepEqual(filesUnder(join(dir, 'manifests')), []);
  assert.deepEqual(filesUnder(join(dir, 'models')), []);
});

test('offline: an unreachable source is one clear line and exit status 1', async (t) => {
  const dir = await dataDir(t);
  const refused = await runCli(['models', 'add', 'acme/detectors:tiny.onnx', '--data-dir', dir], {
    SIGHTFLOW_MODEL_HUB_URL: 'http://127.0.0.1:9',
    SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true',
  });
  assert.equal(refused.code, 1);
  assert.equal(
    refused.stderr.trim(),
    'sightflow: The model URL could not be fetched: connection refused by 127.0.0.1:9',
  );
  const unresolved = await runCli(['models', 'add', 'https://models.example.invalid/m.onnx', '--data-dir', dir]);
  assert.equal(unresolved.code, 1);
  assert.equal(
    unresolved.stderr.trim(),
    'sightflow: The model URL could not be fetched: could not resolve host models.example.invalid',
  );
  // Without SIGHTFLOW_ALLOW_PRIVATE_URLS a loopback source is refused by the URL policy.
  const privateUrl = await runCli(['models', 'add', 'http://127.0.0.1:9/m.onnx', '--data-dir', dir], {
    SIGHTFLOW_ALLOW_PRIVATE_URLS: 'false',
  });
  assert.equal(privateUrl.code, 1);
  assert.match(privateUrl.stderr, /^sightflow: The URL points to a private, loopback or link-local address/);
  assert.deepEqual(filesUnder(join(dir, 'manifests')), []);
});
