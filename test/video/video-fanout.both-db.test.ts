// Live stream fan-out (src/video/stream/stream-fanout.ts), real readers over HTTP: many readers of a live task get
// the archive's exact bytes while the process reads the archive a handful of times (not per reader); a
// reader that stops reading neither holds the task back nor memory, and is cut off after the stall limit
// with a clean end on an event boundary (no [DONE]); a slow reader falls behind the in-memory tail, catches
// up from the archive and gets every byte; readers on a second API node (PostgreSQL) get the same bytes with
// one archive read per append on that node.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { api, backend, type TestApp } from '../helpers/app.js';
import {
  createTask,
  readStream,
  startVideoApp,
  startWorker,
  SyntheticProvider,
  waitFor,
  waitStatus,
  warmKey,
} from '../helpers/video-tasks.js';
import { fanoutFor, type StreamFanout } from '../../src/video/stream/stream-fanout.js';
import type { VideoWorker } from '../../src/video/worker/worker.js';

const BUFFER = 65_536;
const STALL_MS = 1500;
let t: TestApp;
let worker: VideoWorker;
let fanout: StreamFanout;

before(async () => {
  t = await startVideoApp({
    SIGHTFLOW_VIDEO_STREAM_BUFFER_BYTES: String(BUFFER),
    SIGHTFLOW_VIDEO_STREAM_STALL_MS: String(STALL_MS),
  });
  worker = startWorker(t, () => [new SyntheticProvider()]);
  fanout = fanoutFor(t.app.services, { bufferBytes: BUFFER, stallMs: STALL_MS, pollMs: 2000 });
});
after(async () => {
  await worker?.stop();
  await t?.close();
});

const task = (q: string) => ({
  input: [{ type: 'video_url', url: `http://127.0.0.1:9/fanout.mp4?${q}` }],
  steps: [{ model: 'detect' }],
});

/**
 * A reader on a raw socket that can stop reading (the kernel's buffers fill, then the server's socket is
 * full) and resume. `done` resolves when the connection closes: the de-chunked bytes and whether the
 * response ended properly (its last chunk arrived).
 */
function rawReader(
  app: TestApp,
  id: string,
  opts: { stallAfterFirst?: boolean; pauseEvery?: number; pauseMs?: number } = {},
) {
  const sock = connect(app.app.port, '127.0.0.1');
  let raw = Buffer.alloc(0);
  let sinceRest = 0;
  sock.on('connect', () =>
    sock.write(
      `GET /v1/video/tasks/${id}/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${app.key}\r\n\r\n`,
    ),
  );
  sock.on('data', (d: Buffer) => {
    raw = Buffer.concat([raw, d]);
    sinceRest += d.length;
    // The response's last chunk: this reader hangs up (the connection itself would stay open).
    if (raw.subarray(-7).toString() === '\r\n0\r\n\r\n') sock.end();
    if (opts.stallAfterFirst && raw.indexOf('\r\n\r\n') > 0 && raw.length > raw.indexOf('\r\n\r\n') + 4) {
      sock.pause();
      opts.stallAfterFirst = false;
    }
    if (opts.pauseEvery && sinceRest >= opts.pauseEvery) {
      sinceRest = 0;
      sock.pause();
      setTimeout(() => sock.resume(), opts.pauseMs ?? 100);
    }
  });
  sock.on('error', () => {});
  const done = new Promise<{ bytes: Buffer; complete: boolean; status: number }>((resolve) =>
    sock.on('close', () => resolve(dechunk(raw))),
  );
  return { resume: () => sock.resume(), done, received: () => raw.length };
}

function dechunk(raw: Buffer): { bytes: Buffer; complete: boolean; status: number } {
  const h = raw.indexOf('\r\n\r\n');
  const status = Number(raw.subarray(9, 12).toString());
  const parts: Buffer[] = [];
  let i = h + 4,
    complete = false;
  while (i < raw.length) {
    const eol = raw.indexOf('\r\n', i);
    if (eol < 0) break;
    const n = parseInt(raw.subarray(i, eol).toString(), 16);
    if (n === 0) {
      complete = true;
      break;
    }
    if (eol + 2 + n > raw.length) break;
    parts.push(raw.subarray(eol + 2, eol + 2 + n));
    i = eol + 2 + n + 2;
  }
  return { bytes: Buffer.concat(parts), complete, status };
}

test('50 live readers get the archive byte for byte; the process reads the archive a few times, not per reader', {
  timeout: 60_000,
}, async () => {
  const before = fanout.stats();
  const id = await createTask(t, task('frames=80&frame_ms=15'));
  await waitStatus(t, id, ['running', 'streaming']);
  const reads = await Promise.all(Array.from({ length: 50 }, () => readStream(t, id)));
  await waitStatus(t, id, ['succeeded']);
  const archive = (await readStream(t, id)).bytes;
  assert.ok(archive.toString().endsWith('data: [DONE]\n\n'));
  for (const r of reads) {
    assert.equal(r.status, 200);
    assert.ok(r.bytes.equals(archive), 'a reader got the archive exactly');
  }
  const after = fanout.stats();
  // 81 appends, 50 readers: per-reader reads would be 4000 and more. Here the appends reach the readers from
  // memory; a read is the tail's start, or (PostgreSQL) an append's notification that overtook it here.
  const reads_ = after.followReads + after.catchUpReads - before.followReads - before.catchUpReads;
  assert.ok(reads_ <= 81 + 3, `${reads_} archive reads`);
  if (backend === 'pglite') assert.ok(reads_ <= 3, `${reads_} archive reads`);
  await waitFor('the readers to be gone', async () => fanout.stats().readers === 0 && fanout.stats().tasks === 0);
});

test('a stalled reader does not hold the task back, holds bounded memory, and is cut off after the stall limit with a clean end', {
  timeout: 90_000,
}, async () => {
  const cutBefore = fanout.stats().cutOff;
  // About 24 KB a chunk, 10 MB in all: more than the kernel's socket buffers take for a reader that reads nothing.
  const id = await createTask(t, task('frames=420&frame_ms=2&targets=200'));
  const stalled = Array.from({ length: 4 }, () => rawReader(t, id, { stallAfterFirst: true }));
  const reader = readStream(t, id);
  let maxBuffered = 0;
  const sampler = setInterval(() => {
    maxBuffered = Math.max(maxBuffered, fanout.stats().bufferedBytes);
  }, 20);
  // The first one cut off reads again at once: it gets the end of its response.
  await waitFor('a stalled reader to be cut off', async () => fanout.stats().cutOff > cutBefore, 60_000);
  for (const s of stalled) s.resume();
  const rec = await waitStatus(t, id, ['succeeded', 'failed'], 60_000);
  assert.equal(rec.status, 'succeeded');
  const archive = (await readStream(t, id)).bytes;
  assert.ok((await reader).bytes.equals(archive), 'the reading reader got every byte');
  clearInterval(sampler);
  // The tail keeps at most the buffer plus its newest append.
  assert.ok(maxBuffered <= BUFFER + 30_000, `buffered ${maxBuffered} bytes`);
  let cut = 0;
  for (const s of stalled) {
    const got = await s.done;
    assert.equal(got.status, 200);
    assert.ok(got.complete, 'the response ended (its last chunk arrived)');
    assert.ok(
      archive.subarray(0, got.bytes.length).equals(got.bytes),
      'what a stalled reader got is the start of the archive',
    );
    const text = got.bytes.toString();
    assert.ok(text.endsWith('\n\n'), 'it ends on an event boundary');
    // Cut off: short of the end and without [DONE]; a reader that was not cut off yet read to the end.
    if (got.bytes.length < archive.length) {
      cut++;
      assert.ok(!text.includes('[DONE]'));
    } else assert.ok(got.bytes.equals(archive));
  }
  assert.ok(cut >= 1 && cut === fanout.stats().cutOff - cutBefore, `${cut} cut off`);
  assert.equal(fanout.stats().readers, 0);
});

test('a slow reader that starts behind the in-memory tail catches up from the archive and gets every byte', {
  timeout: 90_000,
}, async () => {
  const before = fanout.stats().catchUpReads;
  const id = await createTask(t, task('frames=300&frame_ms=5&targets=100'));
  // About 12 KB a chunk: by frame 40 the archive holds far more than the 64 KB the tail keeps.
  await waitFor(
    'the task to be well under way',
    async () => ((await api(t, `/v1/video/tasks/${id}`)).body.progress?.frame_index ?? -1) >= 40,
  );
  const slow = rawReader(t, id, { pauseEvery: 256 * 1024, pauseMs: 50 });
  const got = await slow.done;
  assert.equal((await waitStatus(t, id, ['succeeded'])).status, 'succeeded');
  const archive = (await readStream(t, id)).bytes;
  assert.ok(got.complete);
  assert.ok(got.bytes.equals(archive), `${got.bytes.length} of ${archive.length} bytes, identical`);
  assert.ok(fanout.stats().catchUpReads > before, 'it read the archive');
});

test('readers on a second API node get the same bytes, with one archive read per append there', {
  skip: backend !== 'postgres' ? 'PostgreSQL only (SIGHTFLOW_TEST_DB=postgres)' : false,
  timeout: 90_000,
}, async () => {
  const b = await startVideoApp({}, { dataDir: t.dataDir, databaseUrl: t.databaseUrl });
  try {
    await warmKey(b, t.key);
    const onB = { ...b, key: t.key };
    const fb = fanoutFor(b.app.services, { bufferBytes: BUFFER, stallMs: STALL_MS, pollMs: 2000 });
    const id = await createTask(t, task('frames=60&frame_ms=20'));
    await waitStatus(t, id, ['running', 'streaming']);
    const [fromB, fromA] = await Promise.all([
      Promise.all(Array.from({ length: 20 }, () => readStream(onB, id))),
      Promise.all(Array.from({ length: 5 }, () => readStream(t, id))),
    ]);
    const archive = (await readStream(t, id)).bytes;
    for (const r of [...fromB, ...fromA]) assert.ok(r.bytes.equals(archive), 'identical on both nodes');
    const st = fb.stats();
    // 61 appends: at most one read each on B (fewer when notifications arrive together), whatever its 20 readers.
    assert.ok(st.followReads <= 61 + 3, `node B read the archive ${st.followReads} times`);
    assert.ok(st.catchUpReads <= 2, `node B's readers read the archive ${st.catchUpReads} times themselves`);
  } finally {
    await b.close();
  }
});
