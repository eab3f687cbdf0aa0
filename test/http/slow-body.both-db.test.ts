// A body that arrives one byte at a time, or stops halfway, is cut by the body deadline (the whole body, not
// an idle gap: a trickle that never pauses long still ends) with a 408 and a closed connection, and holds
// nothing: other requests answer meanwhile and no request is left in flight afterwards.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { startTestApp, api, admin, type TestApp } from '../helpers/app.js';

const DEADLINE_MS = 3000;
let t: TestApp;
before(async () => {
  t = await startTestApp({ SIGHTFLOW_BODY_TIMEOUT_MS: String(DEADLINE_MS) });
});
after(async () => {
  await t?.close();
});

const inFlight = () => Reflect.get(t.app.server, 'inFlight') as number;

interface Slow {
  sock: Socket;
  answer: Promise<{ text: string; closedAfterMs: number }>;
}

/** A POST whose body comes one byte every `everyMs` (never, with 0: it stops after `first`). */
function slowPost(first: string, everyMs: number): Slow {
  const port = Number(new URL(t.url).port);
  const sock = connect(port, '127.0.0.1');
  const started = Date.now();
  let text = '';
  let timer: NodeJS.Timeout | undefined;
  const answer = new Promise<{ text: string; closedAfterMs: number }>((resolve) => {
    sock.on('data', (d) => {
      text += d.toString();
    });
    sock.on('close', () => {
      clearInterval(timer);
      resolve({ text, closedAfterMs: Date.now() - started });
    });
    sock.on('error', () => {});
  });
  sock.write(
    `POST /admin/v1/projects HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.adminToken}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n${first}`,
  );
  if (everyMs > 0)
    timer = setInterval(() => {
      if (!sock.destroyed) sock.write(' ');
    }, everyMs);
  return { sock, answer };
}

test('a body trickling in byte by byte, and one that stops halfway, are cut at the deadline with 408 and a closed connection', async () => {
  const before = (await admin(t, '/admin/v1/projects')).body.data.length;
  const slow = [
    ...Array.from({ length: 6 }, () => slowPost('{"name":"trickle"', 100)),
    ...Array.from({ length: 6 }, () => slowPost('{"name":"half', 0)),
  ];
  // Meanwhile the server answers others: the slow bodies hold no worker (they are all still open then).
  let settled = 0;
  for (const s of slow)
    void s.answer.then(() => {
      settled++;
    });
  await new Promise((r) => setTimeout(r, 200));
  for (let i = 0; i < 5; i++) assert.equal((await api(t, '/v1/project')).status, 200);
  assert.equal(settled, 0, 'requests beside the slow bodies were answered while those were still arriving');

  for (const s of slow) {
    const { text, closedAfterMs } = await s.answer;
    assert.match(text, /^HTTP\/1\.1 408 /, text);
    assert.match(text, /"code":"request_timeout"/);
    // Cut at the deadline (plus scheduling slack on a busy machine), not after the trickle's 20 s.
    assert.ok(closedAfterMs >= DEADLINE_MS && closedAfterMs < DEADLINE_MS + 4000, `closed after ${closedAfterMs} ms`);
  }
  assert.equal(inFlight(), 0, 'no request left in flight');
  assert.equal((await admin(t, '/admin/v1/projects')).body.data.length, before, 'nothing stored from a cut body');
});

test('a client that goes away mid-body leaves nothing in flight', async () => {
  const s = slowPost('{"name":"gone', 0);
  await new Promise((r) => setTimeout(r, 100));
  s.sock.destroy();
  await s.answer;
  for (let i = 0; i < 50 && inFlight() > 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal(inFlight(), 0);
  assert.equal((await api(t, '/v1/project')).status, 200);
});
