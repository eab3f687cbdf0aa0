// The ports of servers that tests restart (test/helpers/ports.ts): below the kernel's ephemeral range, where
// no outgoing connection can take them while their server is down, and a camera comes back on its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { ephemeralLow, FLOOR, stablePort } from './ports.js';
import { startRtspServer, synthetic720p } from './live-sources.js';

const low = ephemeralLow();

/** An RTSP OPTIONS request's status line. */
function options(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const c = connect(Number(port), hostname);
    c.once('error', reject);
    c.once('connect', () => c.write(`OPTIONS ${url} RTSP/1.0\r\nCSeq: 1\r\n\r\n`));
    c.once('data', (d) => {
      c.destroy();
      resolve(String(d).split('\r\n')[0]!);
    });
  });
}

test('stable ports lie below the ephemeral range, each free when given', async () => {
  for (let i = 0; i < 20; i++) {
    const port = await stablePort();
    assert.ok(port >= FLOOR && port < low, `port ${port}, ephemeral range from ${low}`);
  }
});

test('an RTSP camera killed and restarted answers again on the same URL', { timeout: 60_000 }, async () => {
  const cam = await startRtspServer(await synthetic720p(2));
  try {
    assert.ok(Number(new URL(cam.url).port) < low, cam.url);
    assert.equal(await options(cam.url), 'RTSP/1.0 200 OK');
    await cam.kill();
    await assert.rejects(options(cam.url), /ECONNREFUSED/);
    await cam.restart();
    assert.equal(await options(cam.url), 'RTSP/1.0 200 OK');
  } finally {
    await cam.close();
  }
});
