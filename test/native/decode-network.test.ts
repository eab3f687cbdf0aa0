// Network and piped inputs (http through the guarded network path): a loopback HTTP server (with and without Content-Length), a FIFO, abort()
// during a throttled download, and the open timeout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { spawn, execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import { VideoDecoder, DecodeError } from '../../src/video/source/decoder.js';
import { h264Clip, h264Ts, mediaDir } from '../helpers/media.js';
import type { DecoderOptions } from '../../src/video/source/decoder.js';

/** The test servers listen on loopback, which the default URL policy refuses. */
const openUrl = (input: string, options: DecoderOptions = {}) =>
  VideoDecoder.open(input, { network: { policy: { allowPrivate: true } }, ...options });

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; url: string; sockets: Set<Socket> }> {
  const server = createServer(handler);
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, sockets, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function stop(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Serves a file with Content-Length and byte ranges, as a static file server or object store does. */
function serveFile(bytes: Buffer) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const m = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
    if (m) {
      const start = Number(m[1]);
      const end = m[2] ? Math.min(Number(m[2]), bytes.length - 1) : bytes.length - 1;
      res.writeHead(206, {
        'Content-Type': 'video/mp4',
        'Accept-Ranges': 'bytes',
        'Content-Length': end - start + 1,
        'Content-Range': `bytes ${start}-${end}/${bytes.length}`,
      });
      res.end(bytes.subarray(start, end + 1));
    } else {
      res.writeHead(200, { 'Content-Type': 'video/mp4', 'Accept-Ranges': 'bytes', 'Content-Length': bytes.length });
      res.end(bytes);
    }
  };
}

async function indices(d: VideoDecoder): Promise<number[]> {
  const out: number[] = [];
  for await (const f of d.frames(4)) out.push(f.index);
  return out;
}

test('an http URL on loopback decodes like the file (with a length, so total_frames is known)', async () => {
  const { server, sockets, url } = await listen(serveFile(readFileSync(await h264Clip())));
  try {
    const d = await openUrl(`${url}/clip.mp4`, { threads: 2 });
    assert.equal(d.info.totalFrames, 250);
    assert.deepEqual(
      await indices(d),
      Array.from({ length: 10 }, (_, i) => i * 25),
    );
    // Range start seeks over HTTP (a new ranged request).
    await d.close();
    const r = await openUrl(`${url}/clip.mp4`, { range: { start: 6 } });
    assert.deepEqual(await indices(r), [150, 175, 200, 225]);
    await r.close();
  } finally {
    await stop(server, sockets);
  }
});

test('a streamed response without Content-Length decodes and has total_frames null', async () => {
  const ts = readFileSync(await h264Ts());
  const { server, sockets, url } = await listen((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'video/mp2t' }); // chunked: no length, no ranges
    let at = 0;
    const pump = () => {
      if (at >= ts.length) return void res.end();
      res.write(ts.subarray(at, at + 64 * 1024));
      at += 64 * 1024;
      setImmediate(pump);
    };
    pump();
  });
  try {
    const d = await openUrl(`${url}/live.ts`);
    assert.equal(d.info.totalFrames, null);
    assert.equal(d.info.seekable, false);
    assert.deepEqual(
      await indices(d),
      Array.from({ length: 10 }, (_, i) => i * 25),
    );
    await d.close();
  } finally {
    await stop(server, sockets);
  }
});

test('a FIFO (piped source) decodes and has total_frames null', async () => {
  const ts = await h264Ts();
  const fifo = join(mediaDir(), 'pipe.fifo');
  execFileSync('mkfifo', [fifo]);
  const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', ts, fifo], { stdio: 'ignore' });
  try {
    const d = await VideoDecoder.open(fifo);
    assert.equal(d.info.totalFrames, null);
    assert.deepEqual(
      await indices(d),
      Array.from({ length: 10 }, (_, i) => i * 25),
    );
    await d.close();
  } finally {
    writer.kill();
  }
});

test('abort() during a throttled download returns within 1 s and the server sees the connection close', async (t) => {
  const ts = readFileSync(await h264Ts());
  let closedAt = 0;
  let sentHead = false;
  const { server, sockets, url } = await listen((req, res) => {
    res.writeHead(200, { 'Content-Type': 'video/mp2t' });
    // A third of the file at once (enough to open and decode a few frames), then 188 bytes every 200 ms.
    res.write(ts.subarray(0, Math.floor(ts.length / 3)));
    sentHead = true;
    let at = Math.floor(ts.length / 3);
    const timer = setInterval(() => {
      res.write(ts.subarray(at, at + 188));
      at += 188;
    }, 200);
    req.socket.on('close', () => {
      clearInterval(timer);
      closedAt = Date.now();
    });
  });
  try {
    const d = await openUrl(`${url}/slow.ts`, { sampling: { mode: 'fps', value: 25 } });
    assert.ok(sentHead);
    // Decode what arrived, then block on the trickle.
    const reading = d.read(10_000);
    const outcome = reading.then(
      () => 'resolved',
      (e: unknown) => (e instanceof DecodeError ? e.code : String(e)),
    );
    await new Promise((r) => setTimeout(r, 1500));
    const t0 = Date.now();
    await d.abort();
    const took = Date.now() - t0;
    assert.ok(took < 1000, `abort took ${took} ms`);
    assert.equal(await outcome, 'aborted');
    for (let i = 0; i < 50 && closedAt === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(closedAt > 0, 'server saw the connection close');
    assert.ok(closedAt - t0 < 1000, `connection closed ${closedAt - t0} ms after abort`);
    t.diagnostic(`abort returned in ${took} ms; server saw the close ${closedAt - t0} ms after abort()`);
  } finally {
    await stop(server, sockets);
  }
});

test('a download that stalls mid-stream fails the read with code timeout after readTimeoutMs', async () => {
  const ts = readFileSync(await h264Ts());
  const { server, sockets, url } = await listen((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'video/mp2t' });
    res.write(ts.subarray(0, Math.floor(ts.length / 3))); // then nothing, connection left open
  });
  try {
    const d = await openUrl(`${url}/stall.ts`, { readTimeoutMs: 500 });
    const t0 = Date.now();
    const e = await (async () => {
      for await (const _f of d.frames(4)) {
        /* drain */
      }
    })().then(
      () => null,
      (err: unknown) => err,
    );
    assert.ok(e instanceof DecodeError, String(e));
    assert.equal(e.code, 'timeout', e.message);
    assert.ok(Date.now() - t0 < 5000);
    await d.close();
  } finally {
    await stop(server, sockets);
  }
});

test('a server that never answers fails with code timeout after openTimeoutMs', async () => {
  const { server, sockets, url } = await listen(() => {
    /* never responds */
  });
  try {
    const t0 = Date.now();
    const e = await openUrl(`${url}/hang.mp4`, { openTimeoutMs: 500 }).then(
      () => null,
      (err: unknown) => err,
    );
    assert.ok(e instanceof DecodeError);
    assert.equal(e.code, 'timeout');
    assert.ok(Date.now() - t0 < 5000);
  } finally {
    await stop(server, sockets);
  }
});

test('an AbortSignal stops an open() blocked on a silent server within 1 s', async () => {
  const { server, sockets, url } = await listen(() => {
    /* never responds */
  });
  try {
    const controller = new AbortController();
    const opening = openUrl(`${url}/hang.mp4`, { signal: controller.signal }).then(
      () => null,
      (err: unknown) => err,
    );
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    controller.abort();
    const e = await opening;
    assert.ok(e instanceof DecodeError);
    assert.equal(e.code, 'aborted');
    assert.ok(Date.now() - t0 < 1000, `open returned ${Date.now() - t0} ms after abort`);
  } finally {
    await stop(server, sockets);
  }
});

test('info.finalUrl tells where FFmpeg ended after redirects', async () => {
  const bytes = readFileSync(await h264Clip());
  const file = serveFile(bytes);
  const { server, sockets, url } = await listen((req, res) => {
    if (req.url === '/moved.mp4') {
      res.writeHead(302, { Location: '/real.mp4' });
      res.end();
      return;
    }
    file(req, res);
  });
  try {
    const d = await openUrl(`${url}/moved.mp4`);
    assert.equal(d.info.finalUrl, `${url}/real.mp4`);
    await d.close();
    const direct = await openUrl(`${url}/real.mp4`);
    assert.equal(direct.info.finalUrl, `${url}/real.mp4`);
    await direct.close();
  } finally {
    await stop(server, sockets);
  }
});

test('an http 404 is fetch_failed', async () => {
  const { server, sockets, url } = await listen((_req, res) => {
    res.writeHead(404);
    res.end('no');
  });
  try {
    const e = await openUrl(`${url}/missing.mp4`).then(
      () => null,
      (err: unknown) => err,
    );
    assert.ok(e instanceof DecodeError);
    assert.equal(e.code, 'fetch_failed');
  } finally {
    await stop(server, sockets);
  }
});

test('a local playlist cannot make the decoder fetch URLs (protocols are limited per input kind)', async () => {
  let requests = 0;
  const { server, sockets, url } = await listen((_req, res) => {
    requests++;
    res.writeHead(404);
    res.end();
  });
  try {
    const playlist = join(mediaDir(), 'evil.m3u8');
    writeFileSync(playlist, `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n${url}/segment.ts\n#EXT-X-ENDLIST\n`);
    const e = await VideoDecoder.open(playlist).then(
      () => null,
      (err: unknown) => err,
    );
    assert.ok(e instanceof DecodeError, String(e));
    assert.equal(requests, 0);
  } finally {
    await stop(server, sockets);
  }
});
