// The RTSP relay at the byte level: a client's bytes reach the checked address unchanged, the server's answers
// come back whole (split across TCP reads or not), interleaved media after them passes as is, and a 3xx answer
// cuts both connections instead of reaching the client.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import tls from 'node:tls';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRtspRelay } from '../../src/media/rtsp-relay.js';
import { selfSignedCert } from '../helpers/self-signed-cert.js';

async function server(
  onData: (s: net.Socket, data: Buffer) => void,
): Promise<{ srv: net.Server; port: number; got: Buffer[] }> {
  const got: Buffer[] = [];
  const srv = net.createServer((s) => {
    s.on('data', (d: Buffer) => {
      got.push(d);
      onData(s, d);
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { srv, port: (srv.address() as AddressInfo).port, got };
}

async function talk(
  url: string,
  request: string,
  until: (b: Buffer) => boolean,
): Promise<{ bytes: Buffer; closed: boolean }> {
  const u = new URL(url);
  const c = net.connect({ host: u.hostname, port: Number(u.port) });
  let bytes = Buffer.alloc(0);
  return new Promise((resolve) => {
    const done = (closed: boolean) => {
      c.destroy();
      resolve({ bytes, closed });
    };
    c.on('data', (d: Buffer) => {
      bytes = Buffer.concat([bytes, d]);
      if (until(bytes)) done(false);
    });
    c.on('close', () => done(true));
    c.on('error', () => undefined);
    c.write(request);
  });
}

test('answers pass whole, then interleaved media passes as is; the client request reaches the server unchanged', async () => {
  const answer = 'RTSP/1.0 200 OK\r\nCSeq: 1\r\nContent-Length: 5\r\n\r\nhello';
  const media = Buffer.concat([
    Buffer.from([0x24, 0, 0, 4]),
    Buffer.from('abcd'),
    Buffer.from('RTSP/1.0 302 Found\r\n\r\n'),
  ]);
  const { srv, port, got } = await server((s) => {
    // The answer in two TCP writes, then media; a 3xx after media started is data, not a redirect.
    s.write(answer.slice(0, 20));
    setTimeout(() => {
      s.write(answer.slice(20));
      s.write(media);
    }, 30);
  });
  const relay = await startRtspRelay(new URL(`rtsp://camera.test:${port}/live?x=1`), '127.0.0.1');
  try {
    assert.match(relay.url, /^rtsp:\/\/127\.0\.0\.1:\d+\/live\?x=1$/);
    const request = 'DESCRIBE rtsp://camera.test/live RTSP/1.0\r\nCSeq: 1\r\n\r\n';
    const { bytes } = await talk(relay.url, request, (b) => b.length >= answer.length + media.length);
    assert.equal(bytes.toString('latin1'), answer + media.toString('latin1'));
    assert.equal(Buffer.concat(got).toString('latin1'), request);
    assert.equal(relay.refusal, null);
  } finally {
    await relay.close();
    srv.close();
  }
});

test('a redirect before the media starts is never passed on: both connections are cut', async () => {
  const { srv, port } = await server((s) =>
    s.write('RTSP/1.0 301 Moved\r\nCSeq: 1\r\nLocation: rtsp://10.0.0.1/x\r\n\r\n'),
  );
  const relay = await startRtspRelay(new URL(`rtsp://camera.test:${port}/live`), '127.0.0.1');
  try {
    const { bytes, closed } = await talk(relay.url, 'OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n\r\n', () => false);
    assert.equal(closed, true);
    assert.equal(bytes.length, 0);
    assert.equal(relay.refusal, 'the RTSP server redirected to rtsp://10.0.0.1/x, which is not followed');
  } finally {
    await relay.close();
    srv.close();
  }
});

/** A self-signed certificate for `name` (openssl, as a camera's own certificate would be). */
function selfSigned(name: string): { key: string; cert: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-rtsps-'));
  try {
    const { keyFile, certFile } = selfSignedCert(dir, name, `DNS:${name}`);
    return { key: readFileSync(keyFile, 'utf8'), cert: readFileSync(certFile, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("rtsps: the relay is the TLS client (certificate checked for the URL's host), FFmpeg gets plain rtsp on loopback", async () => {
  const { key, cert } = selfSigned('camera.test');
  const answer = 'RTSP/1.0 200 OK\r\nCSeq: 1\r\n\r\n';
  const got: Buffer[] = [];
  const srv = tls.createServer({ key, cert }, (s) => {
    s.on('data', (d: Buffer) => {
      got.push(d);
      s.write(answer);
    });
    s.on('error', () => undefined);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  const request = 'OPTIONS * RTSP/1.0\r\nCSeq: 1\r\n\r\n';
  const trusted = await startRtspRelay(new URL(`rtsps://camera.test:${port}/live`), '127.0.0.1', { ca: cert });
  // The same server under another name: its certificate does not match, so nothing is relayed.
  const misnamed = await startRtspRelay(new URL(`rtsps://other.test:${port}/live`), '127.0.0.1', { ca: cert });
  try {
    assert.match(trusted.url, /^rtsp:\/\/127\.0\.0\.1:\d+\/live$/);
    const ok = await talk(trusted.url, request, (b) => b.length >= answer.length);
    assert.equal(ok.bytes.toString('latin1'), answer);
    assert.equal(Buffer.concat(got).toString('latin1'), request);
    const bad = await talk(misnamed.url, request, () => false);
    assert.equal(bad.closed, true);
    assert.equal(bad.bytes.length, 0);
  } finally {
    await trusted.close();
    await misnamed.close();
    srv.close();
  }
});
