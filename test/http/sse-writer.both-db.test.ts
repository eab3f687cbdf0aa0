// SSE writer backpressure: a slow reader receives every byte in order, and the server's memory does not
// grow with what the reader has not read yet (the writer waits for onWritable instead of buffering). The
// events (16 KB) are larger than uWS's cork buffer: the writer hands them over in pieces that fit it, since
// this uWS release drops a write that does not fit when flushing what was corked before it fails; the stream
// was then corrupt (a chunk header without its bytes), about once in 50 runs under load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { EVENTS, event } from '../helpers/sse-slow-server.js';
import { MAX_PIECE } from '../../src/http/sse.js';
import { scriptArgs } from '../helpers/node-script.js';

test('a slow SSE reader gets every byte in order; server RSS stays bounded', { timeout: 240_000 }, async (t) => {
  const expected = createHash('sha256');
  let expectedBytes = 0;
  for (let i = 0; i < EVENTS; i++) {
    const e = event(i);
    expected.update(e);
    expectedBytes += Buffer.byteLength(e);
  }

  const child = spawn(
    process.execPath,
    [...scriptArgs(new URL('../helpers/sse-slow-server.ts', import.meta.url).pathname)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  // Killed however the test ends: a server left running would hold this file's process open.
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const port = Number(String((await lines.next()).value).replace('port ', ''));

  // Chunked transfer decoding into a running hash; the reader stalls 20 ms after every 256 KB.
  const received = createHash('sha256');
  let bodyBytes = 0;
  let buf = Buffer.alloc(0);
  let headerDone = false;
  let largestChunk = 0;
  const decode = () => {
    for (;;) {
      const nl = buf.indexOf('\r\n');
      if (nl < 0) return;
      const line = buf.subarray(0, nl).toString();
      // A malformed stream fails here, by name, rather than looping on a size that is not a number.
      if (!/^[0-9a-f]+$/i.test(line)) {
        throw new Error(
          `malformed chunk size line after ${bodyBytes} body bytes: ${JSON.stringify(line.slice(0, 40))}`,
        );
      }
      const size = parseInt(line, 16);
      largestChunk = Math.max(largestChunk, size);
      if (size === 0) {
        buf = Buffer.alloc(0);
        return;
      }
      if (buf.length < nl + 2 + size + 2) return;
      const data = buf.subarray(nl + 2, nl + 2 + size);
      received.update(data);
      bodyBytes += data.length;
      buf = buf.subarray(nl + 4 + size);
    }
  };
  await new Promise<void>((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    sock.write('GET /stream HTTP/1.1\r\nHost: x\r\n\r\n');
    let sincePause = 0;
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!headerDone) {
        const idx = buf.indexOf('\r\n\r\n');
        if (idx < 0) return;
        assert.match(buf.subarray(0, idx).toString(), /content-type: text\/event-stream/i);
        headerDone = true;
        buf = buf.subarray(idx + 4);
      }
      try {
        decode();
      } catch (err) {
        sock.destroy();
        reject(err);
        return;
      }
      if (bodyBytes >= expectedBytes) {
        sock.end();
      }
      sincePause += d.length;
      if (sincePause > 256 * 1024) {
        sincePause = 0;
        sock.pause();
        setTimeout(() => sock.resume(), 20);
      }
    });
    sock.on('close', () => resolve());
    sock.on('error', reject);
  });
  const stats = JSON.parse(String((await lines.next()).value)) as { base: number; peak: number };
  child.kill();
  assert.equal(bodyBytes, expectedBytes, 'every byte arrived');
  assert.equal(received.digest('hex'), expected.digest('hex'), 'bytes arrived in order');
  assert.ok(
    largestChunk <= MAX_PIECE,
    `a chunk of ${largestChunk} bytes, over the ${MAX_PIECE} a corked write may take`,
  );
  const growthMb = (stats.peak - stats.base) / 1e6;
  // ~64 MB passed through a reader that kept stalling; a writer that ignored backpressure would buffer most of it.
  assert.ok(growthMb < 32, `server RSS grew by ${growthMb.toFixed(1)} MB while streaming 64 MB`);
});
