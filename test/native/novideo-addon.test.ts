// The addon built without FFmpeg (build/Release/sightflow_novideo.node, binding.gyp), each build in a child
// process of its own (a process loads one addon): its image operations give the same bytes as the full
// build's, and a real `sightflow serve` on it (SIGHTFLOW_ADDON_PATH) answers POST /v1/vision/detect on a
// photo while a video task, from an upload or a URL, ends failed with video_unavailable and the server goes
// on answering; with another node after local in SIGHTFLOW_PROVIDERS (a real server on the full build) the
// task goes there and succeeds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { projectRoot } from '../../src/base/paths.js';
import { serve } from '../helpers/cli.js';
import { carPhoto } from '../helpers/eval-data.js';
import { h264Clip } from '../helpers/media.js';
import { scriptArgs } from '../helpers/node-script.js';

const FULL = join(projectRoot, 'build', 'Release', 'sightflow.node');
const NOVIDEO = join(projectRoot, 'build', 'Release', 'sightflow_novideo.node');
const skip = existsSync(NOVIDEO)
  ? false
  : `${NOVIDEO} is not built (bash scripts/setup.d/20-native.sh builds it beside sightflow.node)`;
const photo = carPhoto();

/** The image digests of one addon build, computed in a child process (fixtures/image-digest.ts). */
async function digests(addon: string, jpeg: string): Promise<Record<string, unknown>> {
  const fixture = fileURLToPath(new URL('./fixtures/image-digest.ts', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [...scriptArgs(fixture), addon, jpeg], {
    cwd: projectRoot,
    timeout: 60_000,
  });
  return JSON.parse(stdout.trim());
}

test('the build without FFmpeg decodes, letterboxes and resizes a photo to the same bytes as the full build', {
  skip,
  timeout: 120_000,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-novideo-'));
  try {
    // A photo with detail everywhere (noise over a gradient), so every resampling path touches real values.
    const w = 531;
    const h = 347;
    const raw = Buffer.alloc(w * h * 3);
    let seed = 7;
    for (let i = 0; i < raw.length; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      raw[i] = ((i % (w * 3)) / 6 + (seed >>> 24) / 2) & 0xff;
    }
    const jpeg = join(dir, 'noise.jpg');
    await sharp(raw, { raw: { width: w, height: h, channels: 3 } })
      .jpeg({ quality: 90 })
      .toFile(jpeg);
    const [full, novideo] = await Promise.all([digests(FULL, jpeg), digests(NOVIDEO, jpeg)]);
    assert.deepEqual(full.features, { video: true });
    assert.deepEqual(novideo.features, { video: false });
    assert.deepEqual({ ...novideo, features: null }, { ...full, features: null });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('sightflow serve on the build without FFmpeg: detect answers 200, a video task fails with video_unavailable', {
  skip: skip || (photo ? false : 'the COCO photos (detection_coco128) are absent'),
  timeout: 180_000,
}, async () => {
  const clip = readFileSync(await h264Clip());
  const files = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': clip.length });
    res.end(clip);
  });
  await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
  const clipUrl = `http://127.0.0.1:${(files.address() as { port: number }).port}/clip.mp4`;
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-novideo-serve-'));
  const s = await serve(['--data-dir', dataDir], {
    SIGHTFLOW_ADDON_PATH: NOVIDEO,
    SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true',
    SIGHTFLOW_MODELS_DIR: process.env.SIGHTFLOW_MODELS_DIR ?? join(projectRoot, 'data', 'models'),
    SIGHTFLOW_PGLITE_TEMPLATE_DIR:
      process.env.SIGHTFLOW_PGLITE_TEMPLATE_DIR ?? join(projectRoot, '.tmp', 'pglite-templates'),
  });
  try {
    const key = /sk_sf_[A-Za-z0-9_-]{43}/.exec(s.lines.find((l) => /sk_sf_/.test(l)) ?? '')?.[0];
    assert.ok(key, 'bootstrap key printed');
    const url = `http://127.0.0.1:${s.port}`;
    const call = async (method: string, path: string, json?: unknown) => {
      const res = await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(json ? { 'content-type': 'application/json' } : {}) },
        body: json ? JSON.stringify(json) : undefined,
      });
      const text = await res.text();
      return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
    };

    const detect = async () => {
      const r = await call('POST', '/v1/vision/detect', {
        image_base64: `data:image/jpeg;base64,${readFileSync(photo!).toString('base64')}`,
      });
      assert.equal(r.status, 200, r.text);
      const classes = r.body.objects.map((o: { class: string }) => o.class);
      assert.ok(classes.includes('car') && classes.includes('train'), `car and train found: ${classes.join(', ')}`);
    };
    await detect();

    const inputs = [
      { type: 'video_base64', data: clip.toString('base64'), max_frames: 5 },
      { type: 'video_url', url: clipUrl, max_frames: 5 },
    ];
    for (const input of inputs) {
      const created = await call('POST', '/v1/video/process', { input: [input], steps: [{ model: 'detect' }] });
      assert.equal(created.status, 202, created.text);
      const until = Date.now() + 60_000;
      let task: { status: string; error?: { code: string; message: string } } | undefined;
      for (; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
        const r = await call('GET', `/v1/video/tasks/${created.body.id}`);
        assert.equal(r.status, 200, r.text);
        if (r.body.status === 'succeeded' || r.body.status === 'failed') {
          task = r.body;
          break;
        }
      }
      assert.ok(task, `${input.type}: the task ended within 60 s`);
      assert.equal(task.status, 'failed', `${input.type}: ${JSON.stringify(task)}`);
      assert.equal(task.error?.code, 'video_unavailable', `${input.type}: ${JSON.stringify(task.error)}`);
      assert.match(task.error!.message, /without FFmpeg/);
    }

    // The server is still whole: alive, and detecting.
    assert.equal((await call('GET', '/healthz')).status, 200);
    await detect();
    assert.equal(s.child.exitCode, null, 'the server did not exit');
  } finally {
    s.child.kill('SIGTERM');
    await s.exited;
    await new Promise((r) => files.close(r));
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('on the build without FFmpeg, SIGHTFLOW_PROVIDERS=local,<node> hands a video task to the node that decodes video', {
  skip,
  timeout: 180_000,
}, async () => {
  const clip = readFileSync(await h264Clip());
  const env = {
    SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true',
    SIGHTFLOW_MODELS_DIR: process.env.SIGHTFLOW_MODELS_DIR ?? join(projectRoot, 'data', 'models'),
    SIGHTFLOW_PGLITE_TEMPLATE_DIR:
      process.env.SIGHTFLOW_PGLITE_TEMPLATE_DIR ?? join(projectRoot, '.tmp', 'pglite-templates'),
  };
  const keyOf = (lines: string[]) => /sk_sf_[A-Za-z0-9_-]{43}/.exec(lines.find((l) => /sk_sf_/.test(l)) ?? '')![0];
  const fullDir = mkdtempSync(join(tmpdir(), 'sightflow-novideo-remote-'));
  const novideoDir = mkdtempSync(join(tmpdir(), 'sightflow-novideo-local-'));
  // The node that decodes video: the full build.
  const remote = await serve(['--data-dir', fullDir], env);
  const node = await serve(['--data-dir', novideoDir], {
    ...env,
    SIGHTFLOW_ADDON_PATH: NOVIDEO,
    SIGHTFLOW_PROVIDERS: `local,http://127.0.0.1:${remote.port}#${keyOf(remote.lines)}`,
  });
  try {
    const key = keyOf(node.lines);
    const call = async (method: string, path: string, json?: unknown) => {
      const res = await fetch(`http://127.0.0.1:${node.port}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(json ? { 'content-type': 'application/json' } : {}) },
        body: json ? JSON.stringify(json) : undefined,
      });
      const text = await res.text();
      return { status: res.status, text, body: text ? JSON.parse(text) : undefined };
    };
    const created = await call('POST', '/v1/video/process', {
      input: [{ type: 'video_base64', data: clip.toString('base64'), max_frames: 5 }],
      steps: [{ model: 'detect' }],
    });
    assert.equal(created.status, 202, created.text);
    const until = Date.now() + 90_000;
    let task: { status: string; error?: unknown; usage?: { processed_frames?: number } } | undefined;
    for (; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      const r = await call('GET', `/v1/video/tasks/${created.body.id}`);
      if (r.body.status === 'succeeded' || r.body.status === 'failed') {
        task = r.body;
        break;
      }
    }
    assert.ok(task, 'the task ended within 90 s');
    assert.equal(task.status, 'succeeded', JSON.stringify(task));
    const results = await call('GET', `/v1/video/tasks/${created.body.id}/results`);
    assert.equal(results.status, 200, results.text);
    assert.equal(results.body.usage?.processed_frames, 5, 'every frame processed by the other node');
    assert.ok(
      node.lines.some((l) => l.includes('failing over') && l.includes('"provider":"local"')),
      'the local provider said why it handed the task on',
    );
  } finally {
    for (const s of [node, remote]) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
    rmSync(fullDir, { recursive: true, force: true });
    rmSync(novideoDir, { recursive: true, force: true });
  }
});
