// Video task webhooks end to end: a receiver on loopback refuses the first two attempts of every delivery,
// and the server is restarted between attempts (deliveries are queued in the database). Each task gets
// exactly one delivery for its terminal state, with the same webhook-id on every attempt, and the Standard
// Webhooks signature verifies with the secret the 202 returned (or the one the client gave).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, freshDatabaseUrl } from '../helpers/app.js';
import { SyntheticProvider, startVideoApp, body, startWorker, waitFor, waitStatus } from '../helpers/video-tasks.js';
import { WebhookDispatcher } from '../../src/video/tasks/webhooks.js';
import type { Db } from '../../src/store/db.js';

interface Hit {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  answered: number;
}

/** Refuses (503) the first `refusals` attempts of each webhook-id, then answers 204. */
async function receiver(refusals: number): Promise<{ url: string; hits: Hit[]; close: () => Promise<void> }> {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      const answered = hits.filter((h) => h.id === id).length < refusals ? 503 : 204;
      hits.push({
        id,
        timestamp: String(req.headers['webhook-timestamp']),
        signature: String(req.headers['webhook-signature']),
        body: Buffer.concat(parts).toString('utf8'),
        answered,
      });
      res.writeHead(answered).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`,
    hits,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function verify(secret: string, h: Hit): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${h.id}.${h.timestamp}.${h.body}`).digest('base64');
  return h.signature.split(' ').some((sig) => sig === `v1,${expected}`);
}

const ENV = { SIGHTFLOW_VIDEO_WEBHOOK_POLL_MS: '50', SIGHTFLOW_VIDEO_WEBHOOK_RETRY_MS: '400' };

test('one signed delivery per terminal state, through refusals and a restart', { timeout: 90_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-webhooks-'));
  const databaseUrl = await freshDatabaseUrl();
  const rx = await receiver(2);
  const clientSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
  try {
    let a = await startVideoApp(ENV, { dataDir, databaseUrl });
    const w = startWorker(a, () => [new SyntheticProvider({ frames: 3, frameMs: 1 })]);
    let done: string, cancelled: string, secret: string;
    try {
      const r1 = await api(a, '/v1/video/process', {
        method: 'POST',
        json: body(undefined, { webhook: { url: rx.url } }),
      });
      assert.equal(r1.status, 202, r1.text);
      assert.equal(r1.body.webhook.url, rx.url);
      secret = r1.body.webhook.secret;
      assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
      done = r1.body.id;
      await waitStatus(a, done, ['succeeded']);
      const echo = await api(a, `/v1/video/tasks/${done}?include=request`);
      assert.deepEqual(echo.body.request.webhook, { url: rx.url }, 'the secret is never echoed');
      await w.stop();
      const r2 = await api(a, '/v1/video/process', {
        method: 'POST',
        json: body('http://127.0.0.1:9/never.mp4', { webhook: { url: rx.url, secret: clientSecret } }),
      });
      assert.equal(r2.status, 202, r2.text);
      assert.equal(r2.body.webhook, undefined, 'a client-given secret is not repeated');
      cancelled = r2.body.id;
      assert.equal((await api(a, `/v1/video/tasks/${cancelled}/cancel`, { method: 'POST' })).status, 202);
      // The first attempt of each is refused; then the server goes away.
      await waitFor('first attempts', async () => new Set(rx.hits.map((h) => h.id)).size === 2);
    } finally {
      await w.stop();
    }
    await a.close();
    const refusedBeforeRestart = rx.hits.length;
    assert.ok(rx.hits.every((h) => h.answered === 503));

    a = await startVideoApp(ENV, { dataDir, databaseUrl });
    try {
      await waitFor('deliveries', async () => rx.hits.filter((h) => h.answered === 204).length === 2, 30_000);
      assert.ok(rx.hits.length > refusedBeforeRestart, 'attempts continued after the restart');
      await new Promise((r) => setTimeout(r, 1500)); // nothing more may arrive
      const ok = rx.hits.filter((h) => h.answered === 204);
      assert.equal(ok.length, 2, 'exactly one accepted delivery per task');
      for (const [task, key, type] of [
        [done, secret, 'video.task.succeeded'],
        [cancelled, clientSecret, 'video.task.cancelled'],
      ] as const) {
        const mine = rx.hits.filter((h) => JSON.parse(h.body).data.id === task);
        assert.equal(mine.length, 3, `${task}: two refused attempts, then the delivery`);
        assert.equal(new Set(mine.map((h) => h.id)).size, 1, 'one webhook-id for every attempt');
        assert.equal(new Set(mine.map((h) => h.body)).size, 1, 'the same body on every attempt');
        for (const h of mine) assert.ok(verify(key, h), `signature of ${h.id} at ${h.timestamp}`);
        assert.ok(!verify(key, { ...mine[0]!, body: mine[0]!.body + ' ' }), 'a changed body does not verify');
        const payload = JSON.parse(mine[0]!.body);
        assert.equal(payload.type, type);
        assert.equal(payload.data.object, 'video.task');
        assert.equal(payload.data.status, type.split('.').at(-1));
        const rec = await api(a, `/v1/video/tasks/${task}?include=webhook_deliveries,request`);
        assert.equal(rec.status, 200, rec.text);
        assert.equal(rec.body.webhook_deliveries.length, 1);
        const d = rec.body.webhook_deliveries[0];
        assert.equal(d.id, mine[0]!.id);
        assert.equal(d.event, type);
        assert.equal(d.status, 'delivered');
        assert.equal(d.attempts, 3);
        assert.equal(d.last_status_code, 204);
        assert.ok(d.delivered_at && d.next_attempt_at === null);
        assert.equal(rec.body.request.webhook.url, rx.url);
      }
    } finally {
      await a.close();
    }
  } finally {
    await rx.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('webhook validation: http(s) URLs and whsec_ secrets only; unknown include is a 400', async () => {
  const t = await startVideoApp();
  try {
    for (const [webhook, param] of [
      [{ url: 'ftp://x/y' }, 'webhook.url'],
      [{ url: 'not a url' }, 'webhook.url'],
      [{ url: 'http://127.0.0.1:9/h', secret: 'abc' }, 'webhook.secret'],
      [{ url: 'http://127.0.0.1:9/h', secret: 'whsec_AAAA' }, 'webhook.secret'],
    ] as const) {
      const r = await api(t, '/v1/video/process', { method: 'POST', json: body(undefined, { webhook }) });
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.error.param, param);
    }
    const plain = await api(t, '/v1/video/process', { method: 'POST', json: body() });
    assert.equal(plain.body.webhook, undefined);
    const rec = await api(t, `/v1/video/tasks/${plain.body.id}?include=webhook_deliveries`);
    assert.deepEqual(rec.body.webhook_deliveries, []);
    assert.equal((await api(t, `/v1/video/tasks/${plain.body.id}?include=nope`)).status, 400);
  } finally {
    await t.close();
  }
});

test('an idle pass is one statement: no task to queue a delivery for, no delivery due', async () => {
  const t = await startVideoApp();
  try {
    // The real database, its statements counted.
    const real = t.app.services.db;
    const seen: string[] = [];
    const db: Db = Object.create(real);
    db.query = (text: string, params?: unknown[]) => {
      seen.push(text);
      return real.query(text, params);
    };
    db.tx = (fn) => {
      seen.push('BEGIN');
      return real.tx(fn);
    };
    const d = new WebhookDispatcher({ ...t.app.services, db }, { pollMs: 50, retryMs: 400 });
    await d.pass();
    assert.equal(seen.length, 1, seen.join('\n'));
    assert.match(seen[0]!, /EXISTS/);
  } finally {
    await t.close();
  }
});
