// clients/typescript is a package people install: `npm pack` builds it (prepack) into a tarball holding the
// compiled SDK, its declarations and the CLI, with no runtime dependency; installed into an empty project
// (offline: nothing to fetch), it imports and its `sightflow-client` bin runs. The SDK itself imports no
// Node module statically (browsers load it; only reading a file path imports node:fs/promises, and only then):
// bundled for browsers it runs in a context that has a browser's globals and none of Node's.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createHmac, randomBytes } from 'node:crypto';
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import { projectRoot } from '../../src/base/paths.js';

const run = promisify(execFile);
const pkgDir = join(projectRoot, 'clients', 'typescript');
const dir = mkdtempSync(join(tmpdir(), 'sightflow-client-pack-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('npm pack builds an installable package with no runtime dependency, usable from Node and its CLI', {
  timeout: 180_000,
}, async () => {
  const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')) as Record<string, unknown>;
  assert.equal(pkg.dependencies, undefined, 'no runtime dependency');
  const packed = await run('npm', ['pack', '--pack-destination', dir, '--json'], { cwd: pkgDir, maxBuffer: 16 << 20 });
  const info = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  const files = info[0]!.files.map((f) => f.path);
  for (const f of [
    'dist/index.js',
    'dist/index.d.ts',
    'dist/cli.js',
    'dist/generated/api.js',
    'README.md',
    'package.json',
  ])
    assert.ok(files.includes(f), `${f} is packed`);
  assert.ok(!files.some((f) => f.startsWith('src/')), 'sources stay out');

  const app = join(dir, 'app');
  await run('mkdir', ['-p', app]);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }),
  );
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(dir, info[0]!.filename)], { cwd: app });
  const probe = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "const m = await import('sightflow-client'); const c = new m.Sightflow({ apiKey: 'k', baseURL: 'http://127.0.0.1:1' }); console.log(JSON.stringify({ ops: Object.keys(m.OPERATIONS).length, tasks: typeof c.tasks.stream, err: new m.BadRequestError(400, {}, new Headers()) instanceof m.APIError }))",
    ],
    { cwd: app },
  );
  const got = JSON.parse(probe.stdout) as { ops: number; tasks: string; err: boolean };
  assert.ok(got.ops > 40 && got.tasks === 'function' && got.err, probe.stdout);
  const help = await run(join(app, 'node_modules', '.bin', 'sightflow-client'), ['--help'], { cwd: app });
  assert.match(help.stdout, /^usage: sightflow-client <command>/);

  const dist = join(app, 'node_modules', 'sightflow-client', 'dist');
  const sdkFiles = readdirSync(dist, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.js') && f !== 'cli.js');
  for (const f of sdkFiles) {
    assert.doesNotMatch(
      readFileSync(join(dist, f), 'utf8'),
      /^\s*import[^(]*from\s+['"]node:/m,
      `${f} imports a Node module statically`,
    );
  }
});

test('the SDK bundles for browsers and runs with only what a browser has (fetch, Web Crypto)', async () => {
  const out = await build({
    entryPoints: [join(pkgDir, 'src', 'index.ts')],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'sightflowClient',
    write: false,
    logLevel: 'silent',
  });
  const code = out.outputFiles[0]!.text;
  assert.doesNotMatch(code, /\brequire\(/, 'no CommonJS require in the browser bundle');
  // A context with a browser's globals and none of Node's (no process, Buffer, require).
  const secret = `whsec_${randomBytes(24).toString('base64')}`;
  const body = JSON.stringify({
    type: 'video.task.succeeded',
    timestamp: 'now',
    data: { id: 'vt_x', status: 'succeeded' },
  });
  const ts = String(Math.floor(Date.now() / 1000));
  const sig = createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
    .update(`msg_1.${ts}.${body}`)
    .digest('base64');
  const context = {
    fetch,
    Headers,
    Request,
    Response,
    FormData,
    Blob,
    URL,
    URLSearchParams,
    AbortController,
    AbortSignal,
    TextEncoder,
    TextDecoder,
    crypto: globalThis.crypto,
    atob,
    btoa,
    setTimeout,
    clearTimeout,
    console,
    result: null as unknown,
    input: {
      secret,
      body,
      headers: { 'webhook-id': 'msg_1', 'webhook-timestamp': ts, 'webhook-signature': `v1,${sig}` },
    },
  };
  await runInNewContext(
    `${code}
    result = (async () => {
      const c = new sightflowClient.Sightflow({ apiKey: 'k', baseURL: 'http://127.0.0.1:1', maxRetries: 0 });
      const event = await c.webhooks.verify(input.headers, input.body, input.secret);
      const err = await c.project().then(() => null, (e) => e.name);
      return { id: event.data.id, err, hasProcess: typeof process !== 'undefined', hasBuffer: typeof Buffer !== 'undefined' };
    })();`,
    context,
  );
  // (a plain object again: the context's objects have its own prototypes)
  assert.deepEqual(JSON.parse(JSON.stringify(await context.result)), {
    id: 'vt_x',
    err: 'APIConnectionError',
    hasProcess: false,
    hasBuffer: false,
  });
});
