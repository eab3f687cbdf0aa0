// SSRF through the real server: with SIGHTFLOW_URL_ALLOW=127.0.0.0/8 and SIGHTFLOW_URL_DENY=127.0.0.3/32, a
// test origin on 127.0.0.1 is reachable and a canary on 127.0.0.3 must see ZERO connections, whatever a
// client names: a URL that redirects to it, an HLS playlist whose segment names it, an RTSP URL naming it or
// an RTSP server redirecting to it, and a host name whose second DNS answer is the canary's address. Video
// tasks run through the API and the in-process worker; image (vision detect) and audio (vectors search)
// URLs go through the same policy. Hostile playlists fail their tasks with source_limit_exceeded while a
// good task beside them succeeds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { h264Clip, h264Ts } from '../helpers/media.js';
import { ApiError } from '../../src/base/errors.js';
import { loadImage, parseImageInput } from '../../src/media/image-input.js';
import type { Resolver } from '../../src/media/url-policy.js';
import { loadContent, parseContent } from '../../src/vectors/item-input.js';
import { openVideo } from '../../src/video/source/video-source.js';

const ENV = {
  SIGHTFLOW_ALLOW_PRIVATE_URLS: 'false',
  SIGHTFLOW_URL_ALLOW: '127.0.0.0/8',
  SIGHTFLOW_URL_DENY: '127.0.0.3/32',
};

let t: TestApp;
let canary: net.Server;
let canaryHits = 0;
let canaryPort = 0;
let origin: http.Server;
let base = '';
let originPort = 0;
let rtsp: net.Server;
let rtspPort = 0;
const sockets = new Set<Socket>();

async function listenOn(server: net.Server, host: string): Promise<number> {
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return (server.address() as AddressInfo).port;
}

function serveBytes(req: IncomingMessage, res: ServerResponse, bytes: Buffer, type: string): void {
  const m = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
  if (m) {
    const start = Number(m[1]);
    const end = m[2] ? Math.min(Number(m[2]), bytes.length - 1) : bytes.length - 1;
    res.writeHead(206, {
      'Content-Type': type,
      'Accept-Ranges': 'bytes',
      'Content-Length': end - start + 1,
      'Content-Range': `bytes ${start}-${end}/${bytes.length}`,
    });
    res.end(bytes.subarray(start, end + 1));
  } else {
    res.writeHead(200, { 'Content-Type': type, 'Accept-Ranges': 'bytes', 'Content-Length': bytes.length });
    res.end(bytes);
  }
}

before(async () => {
  const clip = readFileSync(await h264Clip());
  const ts = readFileSync(await h264Ts());
  const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: 'red' } })
    .png()
    .toBuffer();
  const wav = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE'), Buffer.alloc(32)]);
  canary = http.createServer((_req, res) => res.writeHead(200).end('canary'));
  canary.on('connection', () => {
    canaryHits++;
  });
  canaryPort = await listenOn(canary, '127.0.0.3');
  const canaryUrl = `http://127.0.0.3:${canaryPort}`;
  const huge = [
    '#EXTM3U',
    '#EXT-X-TARGETDURATION:1',
    ...Array.from({ length: 100_000 }, (_, i) => `#EXTINF:1,\ns${i}.ts`),
    '#EXT-X-ENDLIST',
  ].join('\n');
  origin = http.createServer((req, res) => {
    const path = (req.url ?? '').replace(/\?.*$/, '');
    const m3u8 = (text: string) => res.writeHead(200, { 'Content-Type': 'application/vnd.apple.mpegurl' }).end(text);
    if (path === '/clip.mp4') return serveBytes(req, res, clip, 'video/mp4');
    if (path === '/seg0.ts') return serveBytes(req, res, ts, 'video/mp2t');
    if (path === '/a.png') return serveBytes(req, res, png, 'image/png');
    if (path === '/a.wav') return serveBytes(req, res, wav, 'audio/wav');
    if (path === '/to-canary') return void res.writeHead(302, { Location: `${canaryUrl}/x` }).end();
    if (path === '/good.m3u8') return m3u8('#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nseg0.ts\n#EXT-X-ENDLIST\n');
    if (path === '/canary.m3u8')
      return m3u8(`#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n${canaryUrl}/seg0.ts\n#EXT-X-ENDLIST\n`);
    if (path === '/loop.m3u8') return m3u8('#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\nloop.m3u8\n');
    if (path === '/huge.m3u8') return m3u8(huge);
    res.writeHead(404).end();
  });
  originPort = await listenOn(origin, '127.0.0.1');
  base = `http://127.0.0.1:${originPort}`;
  // An RTSP server that answers everything with a redirect to the canary.
  rtsp = net.createServer((s) => {
    s.on('data', (d: Buffer) => {
      const cseq = /CSeq:\s*(\d+)/i.exec(d.toString('latin1'))?.[1] ?? '1';
      s.write(
        `RTSP/1.0 302 Found\r\nCSeq: ${cseq}\r\nLocation: rtsp://127.0.0.3:${canaryPort}/x\r\nContent-Length: 0\r\n\r\n`,
      );
    });
    s.on('error', () => undefined);
  });
  rtspPort = await listenOn(rtsp, '127.0.0.1');
  t = await startTestApp(ENV);
});

after(async () => {
  await t?.close();
  for (const s of sockets) s.destroy();
  await Promise.all([canary, origin, rtsp].map((s) => new Promise((r) => s?.close(r))));
});

async function finished(id: string, ms = 120_000): Promise<any> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await api(t, `/v1/video/tasks/${id}`);
    if (['succeeded', 'failed', 'cancelled'].includes(r.body?.status)) return r.body;
    if (Date.now() > end) throw new Error(`task ${id} still ${r.body?.status}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}

const submit = async (url: string) => {
  const r = await api(t, '/v1/video/process', {
    method: 'POST',
    json: { input: [{ type: 'video_url', url, max_frames: 2 }], steps: [{ model: 'detect' }] },
  });
  return r;
};

test('video: a redirect to the canary and an HLS segment naming it fail the task with url_not_allowed; good URLs decode', {
  timeout: 300_000,
}, async () => {
  const direct = await submit(`http://127.0.0.3:${canaryPort}/clip.mp4`);
  assert.equal(direct.status, 400);
  assert.equal(direct.body.error.code, 'url_not_allowed');
  assert.match(direct.body.error.message, /denied by SIGHTFLOW_URL_DENY 127\.0\.0\.3\/32/);
  const ids: Record<string, string> = {};
  for (const [name, path] of [
    ['redirect', '/to-canary'],
    ['segment', '/canary.m3u8'],
    ['mp4', '/clip.mp4'],
    ['hls', '/good.m3u8'],
  ] as const) {
    const r = await submit(`${base}${path}`);
    assert.equal(r.status, 202, r.text);
    ids[name] = r.body.id;
  }
  for (const name of ['redirect', 'segment']) {
    const task = await finished(ids[name]!);
    assert.equal(task.status, 'failed', name);
    assert.equal(task.error.code, 'url_not_allowed', `${name}: ${JSON.stringify(task.error)}`);
    assert.match(
      task.error.message,
      /127\.0\.0\.3 \(denied by SIGHTFLOW_URL_DENY 127\.0\.0\.3\/32\)|127\.0\.0\.3 is denied by SIGHTFLOW_URL_DENY/,
      name,
    );
  }
  for (const name of ['mp4', 'hls']) {
    const task = await finished(ids[name]!);
    assert.equal(task.status, 'succeeded', `${name}: ${JSON.stringify(task.error)}`);
  }
  assert.equal(canaryHits, 0);
});

test('hostile playlists fail with source_limit_exceeded in bounded time while a good task beside them succeeds', {
  timeout: 300_000,
}, async (tc) => {
  const rss0 = process.memoryUsage().rss;
  const t0 = Date.now();
  const loop = (await submit(`${base}/loop.m3u8`)).body.id;
  const huge = (await submit(`${base}/huge.m3u8`)).body.id;
  const good = (await submit(`${base}/clip.mp4`)).body.id;
  for (const id of [loop, huge]) {
    const task = await finished(id);
    assert.equal(task.status, 'failed');
    assert.equal(task.error.code, 'source_limit_exceeded', JSON.stringify(task.error));
  }
  const took = Date.now() - t0;
  const ok = await finished(good);
  assert.equal(ok.status, 'succeeded', JSON.stringify(ok.error));
  const grew = (process.memoryUsage().rss - rss0) / 2 ** 20;
  assert.ok(took < 60_000, `hostile tasks took ${took} ms`);
  assert.ok(grew < 512, `rss grew ${grew.toFixed(1)} MiB`);
  tc.diagnostic(`both hostile tasks failed within ${took} ms of submission; rss +${grew.toFixed(1)} MiB`);
  assert.equal(canaryHits, 0);
});

test('image and audio URLs: a redirect to the canary and the canary itself are url_not_allowed', {
  timeout: 120_000,
}, async () => {
  for (const image of [`${base}/to-canary`, `http://127.0.0.3:${canaryPort}/a.png`]) {
    const r = await api(t, '/v1/vision/detect', { method: 'POST', json: { image } });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.code, 'url_not_allowed', image);
  }
  const c = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'ssrf' } });
  assert.equal(c.status, 201, c.text);
  for (const audio of [`${base}/to-canary`, `http://127.0.0.3:${canaryPort}/a.wav`]) {
    const r = await api(t, `/v1/vectors/collections/${c.body.id}/search`, { method: 'POST', json: { audio } });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.code, 'url_not_allowed', audio);
  }
  const ok = await api(t, '/v1/vision/detect', { method: 'POST', json: { image: `${base}/a.png` } });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(canaryHits, 0);
});

test('RTSP: a URL naming the canary is refused, and a server redirecting to it is cut off', {
  timeout: 60_000,
}, async () => {
  const network = { policy: t.config.urlPolicy };
  await assert.rejects(
    openVideo({ url: `rtsp://127.0.0.3:${canaryPort}/x` }, network, {}),
    (e: unknown) => e instanceof ApiError && e.code === 'url_not_allowed',
  );
  await assert.rejects(
    openVideo({ url: `rtsp://127.0.0.1:${rtspPort}/x` }, network, { openTimeoutMs: 5000 }),
    (e: unknown) => {
      assert.ok(e instanceof ApiError && e.code === 'url_not_allowed', String(e));
      assert.match(e.message, /redirected to rtsp:\/\/127\.0\.0\.3/);
      return true;
    },
  );
  // The same through the API: a 400 at submit for the canary itself (rtsp and rtsps), and a failed task
  // (url_not_allowed) for a server whose answer redirects to it.
  for (const scheme of ['rtsp', 'rtsps']) {
    const direct = await submit(`${scheme}://127.0.0.3:${canaryPort}/x`);
    assert.equal(direct.status, 400, direct.text);
    assert.equal(direct.body.error.code, 'url_not_allowed');
  }
  const redirected = await submit(`rtsp://127.0.0.1:${rtspPort}/x`);
  assert.equal(redirected.status, 202, redirected.text);
  const task = await finished(redirected.body.id);
  assert.equal(task.status, 'failed');
  assert.equal(task.error.code, 'url_not_allowed', JSON.stringify(task.error));
  assert.equal(canaryHits, 0);
});

test('DNS rebinding: a host whose second answer is the canary is fetched from its first answer only', {
  timeout: 60_000,
}, async () => {
  let asked = 0;
  const rebinding: Resolver = async () => (asked++ === 0 ? ['127.0.0.1'] : ['127.0.0.3']);
  const policy = t.config.urlPolicy;
  // Video (with a range seek and an HLS playlist whose segment is on the same host): one answer per job.
  for (const path of ['/clip.mp4', '/good.m3u8']) {
    asked = 0;
    const d = await openVideo(
      { url: `http://rebind.test:${originPort}${path}` },
      { policy, resolve: rebinding },
      { range: { start: 4 }, maxFrames: 2 },
    );
    let frames = 0;
    for await (const _f of d.frames(2)) frames++;
    await d.close();
    assert.equal(frames, 2, path);
    assert.equal(asked, 1, `${path}: the host was resolved once`);
  }
  asked = 0;
  const img = await loadImage(parseImageInput({ image: `http://rebind.test:${originPort}/a.png` }), {
    ...policy,
    resolve: rebinding,
  });
  assert.equal(img.width, 64);
  asked = 0;
  const audio = await loadContent(parseContent({ audio: `http://rebind.test:${originPort}/a.wav` }, 'items[0].'), {
    ...policy,
    resolve: rebinding,
  });
  assert.equal(audio.content_type, 'audio');
  // A second lookup that does answer the canary is refused before any connection.
  await assert.rejects(
    loadImage(parseImageInput({ image: `http://rebind.test:${originPort}/a.png` }), { ...policy, resolve: rebinding }),
    (e: unknown) => e instanceof ApiError && e.code === 'url_not_allowed',
  );
  assert.equal(canaryHits, 0);
});
