// HLS through the guarded network path: a playlist and its segment decode through the host's fetches (every
// request the loopback server sees is one the host made), byte-range seeks still work, and hostile playlists
// end with a clear code in bounded time and memory: one that names itself as its variant, and one that lists
// 100 000 segments. The bounds asserted are generous; the diagnostics print what was measured.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo, Socket } from 'node:net';
import { VideoDecoder, DecodeError, type DecoderOptions } from '../../src/video/source/decoder.js';
import { h264Ts } from '../helpers/media.js';

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; url: string; sockets: Set<Socket>; paths: string[] }> {
  const paths: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    handler(req, res);
  });
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, sockets, paths, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

async function stop(server: Server, sockets: Set<Socket>): Promise<void> {
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

const open = (input: string, options: DecoderOptions = {}) =>
  VideoDecoder.open(input, { network: { policy: { allowPrivate: true } }, ...options });

async function drain(d: VideoDecoder): Promise<number[]> {
  const out: number[] = [];
  for await (const f of d.frames(4)) out.push(f.index);
  return out;
}

test('an HLS playlist and its segment decode through the guarded path', async () => {
  const ts = readFileSync(await h264Ts());
  const { server, sockets, url, paths } = await listen((req, res) => {
    if (req.url === '/live/index.m3u8') {
      res.writeHead(200, { 'Content-Type': 'application/vnd.apple.mpegurl' });
      return void res.end(
        '#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nseg0.ts\n#EXT-X-ENDLIST\n',
      );
    }
    if (req.url === '/live/seg0.ts') {
      res.writeHead(200, { 'Content-Type': 'video/mp2t', 'Content-Length': ts.length });
      return void res.end(ts);
    }
    res.writeHead(404);
    res.end();
  });
  try {
    const d = await open(`${url}/live/index.m3u8`);
    assert.equal(d.info.format, 'hls');
    assert.deepEqual(
      await drain(d),
      Array.from({ length: 10 }, (_, i) => i * 25),
    );
    await d.close();
    assert.ok(paths.includes('/live/seg0.ts'), paths.join(' '));
  } finally {
    await stop(server, sockets);
  }
});

test('a master playlist that names itself ends with source_limit_exceeded in bounded time and memory', async (t) => {
  const { server, sockets, url, paths } = await listen((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/vnd.apple.mpegurl' });
    res.end('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\nloop.m3u8\n#EXT-X-STREAM-INF:BANDWIDTH=2000\nloop.m3u8?b\n');
  });
  try {
    const rss0 = process.memoryUsage().rss;
    const t0 = Date.now();
    const e = await open(`${url}/loop.m3u8`).then(
      (d) => drain(d).then(() => null),
      (err: unknown) => err,
    );
    const took = Date.now() - t0;
    const grew = (process.memoryUsage().rss - rss0) / 2 ** 20;
    assert.ok(e instanceof DecodeError, String(e));
    assert.equal(e.code, 'source_limit_exceeded', e.message);
    assert.ok(took < 20_000, `took ${took} ms`);
    assert.ok(grew < 256, `rss grew ${grew.toFixed(1)} MiB`);
    assert.ok(paths.length <= 65, `${paths.length} requests`);
    t.diagnostic(
      `self-naming playlist: ${e.code} after ${took} ms, ${paths.length} requests, rss +${grew.toFixed(1)} MiB`,
    );
  } finally {
    await stop(server, sockets);
  }
});

test('a playlist of 100 000 segments ends with source_limit_exceeded in bounded time and memory', async (t) => {
  const lines = ['#EXTM3U', '#EXT-X-TARGETDURATION:1'];
  for (let i = 0; i < 100_000; i++) lines.push('#EXTINF:1,', `s${i}.ts`);
  lines.push('#EXT-X-ENDLIST');
  const playlist = lines.join('\n');
  const { server, sockets, url, paths } = await listen((_req, res) => {
    res.writeHead(200, {
      'Content-Type': 'application/vnd.apple.mpegurl',
      'Content-Length': Buffer.byteLength(playlist),
    });
    res.end(playlist);
  });
  try {
    const rss0 = process.memoryUsage().rss;
    const t0 = Date.now();
    const e = await open(`${url}/huge.m3u8`).then(
      (d) => drain(d).then(() => null),
      (err: unknown) => err,
    );
    const took = Date.now() - t0;
    const grew = (process.memoryUsage().rss - rss0) / 2 ** 20;
    assert.ok(e instanceof DecodeError, String(e));
    assert.equal(e.code, 'source_limit_exceeded', e.message);
    assert.match(e.message, /larger than 1048576 bytes/);
    assert.ok(took < 10_000, `took ${took} ms`);
    assert.ok(grew < 256, `rss grew ${grew.toFixed(1)} MiB`);
    assert.ok(
      paths.every((p) => p === '/huge.m3u8'),
      `no segment was requested: ${paths.join(' ')}`,
    );
    t.diagnostic(
      `100 000-segment playlist (${(playlist.length / 2 ** 20).toFixed(2)} MiB): ${e.code} after ${took} ms, rss +${grew.toFixed(1)} MiB`,
    );
  } finally {
    await stop(server, sockets);
  }
});
