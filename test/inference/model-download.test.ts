// downloadModel and parseModelSource on their own (the CLI path is in test/models/models-add.both-db.test.ts):
// how sources are read, a cut connection resumed more than once, a silent server given up on, and a Range
// the server cannot honour (416) starting over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { downloadModel, parseModelSource } from '../../src/models/model-download.js';
import { ApiError } from '../../src/base/errors.js';
import { startModelHub } from '../helpers/model-hub.js';
import { tempDataDir } from '../helpers/inference.js';

const policy = { allowPrivate: true };

test('sources: https URLs, hub references (rev default main), local files, and a clear 400 otherwise', () => {
  const hub = 'https://hub.example/';
  const none = () => false;
  assert.deepEqual(parseModelSource('https://x.example/a/b%20c.onnx', hub, none), {
    kind: 'url',
    url: new URL('https://x.example/a/b%20c.onnx'),
    fileName: 'b c.onnx',
  });
  // Not valid percent-encoding (a URL may carry it): the name as written, not an internal error.
  assert.equal(
    (parseModelSource('http://127.0.0.1:9/x.onnx%zz', hub, none) as { fileName: string }).fileName,
    'x.onnx%zz',
  );
  const ref = parseModelSource('acme/yolo:onnx/model.onnx', hub, none);
  assert.ok(
    ref.kind === 'url' &&
      ref.url.href === 'https://hub.example/acme/yolo/resolve/main/onnx/model.onnx' &&
      ref.fileName === 'model.onnx' &&
      ref.ref === 'acme/yolo:onnx/model.onnx',
  );
  const pinned = parseModelSource('acme/yolo@0123abc:model.onnx', hub, none);
  assert.ok(pinned.kind === 'url' && pinned.url.href === 'https://hub.example/acme/yolo/resolve/0123abc/model.onnx');
  assert.deepEqual(
    parseModelSource('acme/yolo:model.onnx', hub, () => true),
    { kind: 'file', path: 'acme/yolo:model.onnx' },
  );
  assert.throws(
    () => parseModelSource('no-such-file.onnx', hub, none),
    (e: unknown) => e instanceof ApiError && e.status === 400 && /owner\/repo\[@rev\]:path/.test(e.message),
  );
});

test("a download resumes from an earlier run's part file, and again after a cut", async (t) => {
  const bytes = randomBytes(300_000);
  const hub = await startModelHub([{ owner: 'o', repo: 'r', path: 'm.onnx', bytes }], { cutFirst: 100_000 });
  t.after(() => hub.close());
  const dir = await tempDataDir(t);
  const dest = join(dir, 'm.onnx');
  // A part file from an earlier, interrupted run: the download continues from it.
  writeFileSync(`${dest}.part`, bytes.subarray(0, 50_000));
  const r = await downloadModel(new URL(`${hub.url}/o/r/resolve/main/m.onnx`), dest, policy);
  assert.equal(r.sha256, createHash('sha256').update(bytes).digest('hex'));
  assert.equal(r.expected, 'hub');
  assert.equal(r.resumes, 2);
  // (How much of the cut body arrived before the reset depends on the kernel: at most the 100 kB sent.)
  const ranges = hub.requests
    .filter((q) => q.path.startsWith('/cdn/'))
    .map((q) => Number(/^bytes=(\d+)-$/.exec(q.range ?? '')?.[1]));
  assert.equal(ranges.length, 2);
  assert.equal(ranges[0], 50_000);
  assert.ok(ranges[1]! > 50_000 && ranges[1]! <= 150_000, String(ranges[1]));
  assert.ok(readFileSync(dest).equals(bytes));
  assert.ok(!existsSync(`${dest}.part`));
});

test('a part file longer than the file (416) starts over', async (t) => {
  const bytes = randomBytes(10_000);
  const hub = await startModelHub([{ owner: 'o', repo: 'r', path: 'm.onnx', bytes }]);
  t.after(() => hub.close());
  const dir = await tempDataDir(t);
  const dest = join(dir, 'm.onnx');
  writeFileSync(`${dest}.part`, randomBytes(20_000));
  const r = await downloadModel(new URL(`${hub.url}/o/r/resolve/main/m.onnx`), dest, policy);
  assert.ok(readFileSync(dest).equals(bytes));
  assert.deepEqual(
    hub.requests.filter((q) => q.path.startsWith('/cdn/')).map((q) => q.status),
    [416, 200],
  );
  assert.equal(r.resumes, 0);
});

test('a server that accepts and says nothing is given up on after the stall time', async (t) => {
  const sockets: import('node:net').Socket[] = [];
  const silent = createServer((s) => {
    sockets.push(s); /* never answers */
  });
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.after(async () => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const dir = await tempDataDir(t);
  const port = (silent.address() as { port: number }).port;
  const started = Date.now();
  await assert.rejects(
    downloadModel(new URL(`http://127.0.0.1:${port}/m.onnx`), join(dir, 'm.onnx'), { ...policy, stallMs: 300 }),
    (e: unknown) =>
      e instanceof ApiError && e.message === 'The model URL could not be fetched: no answer within 300 ms',
  );
  assert.ok(Date.now() - started < 3000);
});
