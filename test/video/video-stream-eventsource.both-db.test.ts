// A standard EventSource client (the npm `eventsource` package, a WHATWG implementation) reads a task stream
// with `?event_ids=true` through a loopback TCP proxy that cuts the connection mid-event twice: it must
// reconnect on its own with Last-Event-ID and end with exactly the uninterrupted stream's events, in order,
// with no gap and no duplicate. Also: the id rewriter itself, chunk boundaries anywhere.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { EventSource } from 'eventsource';
import type { TestApp } from '../helpers/app.js';
import {
  SyntheticProvider,
  startVideoApp,
  body,
  createTask,
  readStream,
  startWorker,
  waitStatus,
} from '../helpers/video-tasks.js';
import { EventIdWriter } from '../../src/video/stream/event-ids.js';

let t: TestApp;
before(async () => {
  t = await startVideoApp();
});
after(async () => {
  await t?.close();
});

/** Events of SSE bytes as [data, offset right after the event] (comments have no data and are skipped). */
function dataEvents(bytes: Buffer): Array<{ data: string; end: number }> {
  const out: Array<{ data: string; end: number }> = [];
  let pos = 0;
  for (const ev of bytes.toString('utf8').split('\n\n').slice(0, -1)) {
    pos += Buffer.byteLength(ev, 'utf8') + 2;
    if (ev.startsWith('data: ')) out.push({ data: ev.slice(6), end: pos });
  }
  return out;
}

/**
 * A loopback TCP proxy to the app. Connection i (0-based) is cut after cuts[i] bytes of the response
 * (headers included), the bytes up to the cut delivered; later connections pass through. It records each
 * request's Last-Event-ID.
 */
async function cuttingProxy(
  target: URL,
  cuts: number[],
): Promise<{ url: string; lastEventIds: Array<string | null>; close: () => Promise<void> }> {
  const lastEventIds: Array<string | null> = [];
  const sockets = new Set<net.Socket>();
  let n = 0;
  const server = net.createServer((client) => {
    const cut = cuts[n++];
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client);
    sockets.add(upstream);
    let head = '';
    client.on('data', (d) => {
      if (head !== null) {
        head += d.toString('latin1');
        const m = /\r\nlast-event-id:\s*([^\r]*)\r\n/i.exec(head);
        if (head.includes('\r\n\r\n')) {
          lastEventIds.push(m ? m[1]! : null);
          head = null as unknown as string;
        }
      }
      upstream.write(d);
    });
    let sent = 0;
    upstream.on('data', (d: Buffer) => {
      if (cut === undefined) {
        client.write(d);
        return;
      }
      const room = cut - sent;
      client.write(d.subarray(0, Math.max(0, room)));
      sent += d.length;
      if (sent >= cut) {
        upstream.destroy();
        client.end();
      }
    });
    const done = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    upstream.on('close', done);
    upstream.on('error', done);
    client.on('close', done);
    client.on('error', done);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    lastEventIds,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

test('EventSource with event ids survives two forced disconnects without gap or duplicate', {
  timeout: 60_000,
}, async () => {
  const w = startWorker(t, () => [new SyntheticProvider({ frames: 40, frameMs: 15 })]);
  const proxy = await cuttingProxy(new URL(t.url), [900, 2100]);
  try {
    const id = await createTask(t, body());
    const received: Array<{ data: string; lastEventId: string }> = [];
    let errors = 0;
    const es = new EventSource(`${proxy.url}/v1/video/tasks/${id}/stream?event_ids=true`, {
      fetch: (url, init) => fetch(url, { ...init, headers: { ...init.headers, Authorization: `Bearer ${t.key}` } }),
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`stream not finished; ${received.length} events, ${errors} errors`)),
        50_000,
      );
      es.onerror = () => {
        errors++;
      };
      es.onmessage = (ev) => {
        received.push({ data: ev.data, lastEventId: ev.lastEventId });
        if (ev.data === '[DONE]') {
          clearTimeout(timer);
          es.close();
          resolve();
        }
      };
    });
    await waitStatus(t, id, ['succeeded']);

    const whole = await readStream(t, id);
    const expected = dataEvents(whole.bytes);
    assert.equal(expected.length, 42, '40 frames, the terminal chunk and [DONE]');
    assert.deepEqual(
      received.map((e) => e.data),
      expected.map((e) => e.data),
      'chunk for chunk the uninterrupted stream',
    );
    assert.deepEqual(
      received.map((e) => e.lastEventId),
      expected.map((e) => String(e.end)),
      'each id is the archive offset after its event',
    );
    assert.equal(proxy.lastEventIds.length, 3, 'two reconnects');
    assert.equal(proxy.lastEventIds[0], null);
    for (const lid of proxy.lastEventIds.slice(1)) {
      assert.ok(
        lid !== null && /^\d+$/.test(lid) && whole.bytes.subarray(0, Number(lid)).toString('utf8').endsWith('\n\n'),
        `Last-Event-ID ${lid} is an event boundary`,
      );
    }
    assert.ok(errors >= 2, 'the client saw both disconnects');
  } finally {
    await proxy.close();
    await w.stop();
  }
});

test('event ids: the bytes are the archive plus id lines and one retry block; default responses are unchanged', async () => {
  const w = startWorker(t, () => [new SyntheticProvider({ frames: 5, frameMs: 1 })]);
  try {
    const id = await createTask(t, body());
    await waitStatus(t, id, ['succeeded']);
    const plain = await readStream(t, id);
    const withIds = await fetch(`${t.url}/v1/video/tasks/${id}/stream?event_ids=true`, {
      headers: { authorization: `Bearer ${t.key}` },
    });
    assert.equal(withIds.headers.get('x-stream-offset'), '0');
    const text = await withIds.text();
    assert.ok(text.startsWith('retry: 1000\n\n'));
    assert.equal(text.slice('retry: 1000\n\n'.length).replace(/^id: \d+\n/gm, ''), plain.bytes.toString('utf8'));
    // Resuming from an id: the rest, ids still absolute archive offsets.
    const mid = dataEvents(plain.bytes)[2]!.end;
    const rest = await fetch(`${t.url}/v1/video/tasks/${id}/stream?event_ids=true`, {
      headers: { authorization: `Bearer ${t.key}`, 'last-event-id': String(mid) },
    });
    assert.equal(rest.headers.get('x-stream-offset'), String(mid));
    const restText = (await rest.text()).slice('retry: 1000\n\n'.length);
    assert.equal(restText.replace(/^id: \d+\n/gm, ''), plain.bytes.subarray(mid).toString('utf8'));
    assert.equal(/id: (\d+)\n\n$/.exec(restText)?.[1], String(plain.bytes.length));
    const bad = await fetch(`${t.url}/v1/video/tasks/${id}/stream?event_ids=yes`, {
      headers: { authorization: `Bearer ${t.key}` },
    });
    assert.equal(bad.status, 400);
  } finally {
    await w.stop();
  }
});

test('EventIdWriter gives the same bytes whatever the chunking', () => {
  const src = Buffer.from(': hb\n\ndata: {"a":"é"}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n', 'utf8');
  const whole = new EventIdWriter(0).transform(src).toString('utf8');
  assert.equal(whole, ': hb\nid: 6\n\ndata: {"a":"é"}\nid: 24\n\ndata: {"b":2}\nid: 39\n\ndata: [DONE]\nid: 53\n\n');
  for (let size = 1; size <= 7; size++) {
    const wr = new EventIdWriter(0);
    const parts: Buffer[] = [];
    for (let i = 0; i < src.length; i += size) parts.push(wr.transform(src.subarray(i, i + size)));
    assert.equal(Buffer.concat(parts).toString('utf8'), whole, `chunks of ${size}`);
  }
  assert.equal(
    new EventIdWriter(24).transform(src.subarray(24)).toString('utf8'),
    'data: {"b":2}\nid: 39\n\ndata: [DONE]\nid: 53\n\n',
  );
});
