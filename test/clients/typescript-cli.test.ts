// The client CLI (clients/typescript/src/cli.ts) as a child process against a real server through the
// conformance proxy: watch prints every chunk once, in order, as NDJSON across five mid-event cuts; detect
// takes a file; an API error exits 1 with its code and request id on stderr; lists are NDJSON.
import { test, before, after, beforeEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startConformance, SAMPLE_IMAGE, type Conformance } from '../../clients/conformance/server.js';
import { Sightflow } from '../../clients/typescript/src/index.js';
import { scriptArgs } from '../helpers/node-script.js';

const CLI = fileURLToPath(new URL('../../clients/typescript/src/cli.ts', import.meta.url));
let c: Conformance;
let client: Sightflow;

before(async () => {
  c = await startConformance();
  client = new Sightflow({ baseURL: c.upstream, apiKey: c.key });
});
after(async () => {
  await c?.close();
});
beforeEach(() => {
  c.proxy.reset();
});

function cli(args: string[], timeoutMs = 60_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...scriptArgs(CLI), ...args], {
      env: { ...process.env, SIGHTFLOW_API_KEY: c.key, SIGHTFLOW_BASE_URL: c.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      stderr += '(killed: timeout)';
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const lines = (s: string) =>
  s
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);

test('watch prints every chunk once, in order, as NDJSON across five mid-event cuts', { timeout: 90_000 }, async () => {
  const task = await client.tasks.create({
    input: [{ type: 'video_url', url: 'http://127.0.0.1:9/clip.mp4?frames=30&frame_ms=1&targets=3' }],
    steps: [{ model: 'detect' }],
  });
  await client.tasks.wait(task.id, { pollInterval: 50, timeout: 30_000 });
  const ids: string[] = [];
  for await (const chunk of client.tasks.stream(task.id)) ids.push(chunk.id);
  c.proxy.arm({
    kind: 'cut_stream',
    method: 'GET',
    path: `/v1/video/tasks/${task.id}/stream`,
    cuts: ['second', 'first', 'second', 'second', 'second'],
  });
  const r = await cli(['watch', task.id]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(
    lines(r.stdout).map((x) => x.id),
    ids,
  );
  assert.equal(c.proxy.cuts.length, 5);
  assert.equal((r.stderr.match(/resuming at byte/g) ?? []).length, 5);
});

test('process --wait creates a task, shows progress on stderr and prints the final record', {
  timeout: 90_000,
}, async () => {
  const r = await cli(['process', 'http://127.0.0.1:9/clip.mp4?frames=5&frame_ms=5', '--wait']);
  assert.equal(r.code, 0, r.stderr);
  const [record] = lines(r.stdout);
  assert.equal(record!.status, 'succeeded');
  assert.match(r.stderr, new RegExp(`${record!.id} (pending|running|streaming|succeeded): frame`));
});

test('detect takes a file path; an API error exits 1 with its code and request id', { timeout: 90_000 }, async () => {
  const ok = await cli(['detect', SAMPLE_IMAGE]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.ok(lines(ok.stdout)[0]!.objects.length > 0);
  const bad = await cli(['detect', SAMPLE_IMAGE, '--confidence', '7']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /400 \S+: .*\(param confidence_threshold\) \[request \S+\]/);
  assert.equal(c.proxy.count('POST', '/v1/vision/detect'), 2);
  const usage = await cli(['frobnicate']);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /unknown command frobnicate/);
});

test('tasks lists NDJSON; add and search a collection; call reaches any operation', { timeout: 90_000 }, async () => {
  const tasks = await cli(['tasks', '--limit', '1']);
  assert.equal(tasks.code, 0, tasks.stderr);
  assert.ok(lines(tasks.stdout).length >= 2, 'both tasks of the earlier cases, one page at a time');
  const col = await client.collections.create({ name: 'cli-case' } as never);
  const add = await cli(['add', col.id, '--text', 'a red car at the gate', '--text', 'a person walking a dog']);
  assert.equal(add.code, 0, add.stderr);
  assert.equal(lines(add.stdout)[0]!.indexed, 2);
  const search = await cli(['search', col.id, '--text', 'car', '--top-k', '1']);
  assert.equal(search.code, 0, search.stderr);
  assert.equal(lines(search.stdout)[0]!.results.length, 1);
  const call = await cli(['call', 'vectors.collections.get', '--path', `id=${col.id}`]);
  assert.equal(call.code, 0, call.stderr);
  assert.equal(lines(call.stdout)[0]!.id, col.id);
});
