// The console's SSE reader (console/src/api/task-stream.ts) against a server that drops the connection in
// the middle of an event (and of a multi-byte character): it must resume with Last-Event-ID = bytes received
// and deliver every chunk exactly once, then stop at [DONE]. Started at an offset (a moment's), it asks and
// resumes with ?offset=.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { followTaskStream, type StreamState } from '../../console/src/api/task-stream.js';

const chunk = (i: number) => ({
  id: `c${i}`,
  object: 'mm.pipeline.chunk',
  stream_info: { frame_index: i, total_frames: 6, decoded_frames: i + 1, dropped_frames: 0, fps: 10, elapsed_ms: i },
  delta: {
    results: [
      {
        index: 0,
        targets: [{ track_id: 1, class: 'café ☕', confidence: 0.9, roi: { left: i, top: 0, width: 1, height: 1 } }],
      },
    ],
  },
  finish_reason: i === 5 ? 'stop' : null,
});

test('resumes from the byte offset after a cut mid-event and mid-character; every chunk once; stops at [DONE]', async () => {
  const all = Buffer.from(
    [0, 1, 2, 3, 4, 5].map((i) => `data: ${JSON.stringify(chunk(i))}\n\n`).join('') + ': hb\n\ndata: [DONE]\n\n',
  );
  // Cut points inside the second and fourth events, one of them inside the 3-byte '☕'.
  const coffee = all.indexOf(Buffer.from('☕'), all.indexOf(Buffer.from('"c1"')));
  const cuts = [coffee + 1, all.indexOf(Buffer.from('"c3"')) + 10];
  const seen: Array<{ auth: string | undefined; lastEventId: string | undefined }> = [];
  const server = createServer((req, res) => {
    seen.push({ auth: req.headers.authorization, lastEventId: req.headers['last-event-id'] as string | undefined });
    const from = Number(req.headers['last-event-id'] ?? 0);
    const cut = cuts.find((c) => c > from) ?? all.length;
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'X-Stream-Offset': String(from) });
    res.write(all.subarray(from, cut));
    if (cut < all.length) setTimeout(() => res.socket?.destroy(), 20);
    else res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/video/tasks/vt_x/stream`;
  try {
    const got: string[] = [];
    const classes = new Set<string>();
    const states: StreamState[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no [DONE]; got ${got.join(',')}; states ${states.join(',')}`)),
        20_000,
      );
      followTaskStream({
        url,
        key: 'sk_sf_test',
        onChunk: (c) => {
          got.push(c.id);
          for (const t of c.delta.results[0]!.targets) classes.add(t.class);
        },
        onState: (s) => {
          states.push(s);
          if (s === 'done' || s === 'failed') {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    assert.deepEqual(got, ['c0', 'c1', 'c2', 'c3', 'c4', 'c5']);
    assert.deepEqual([...classes], ['café ☕']);
    assert.equal(states.at(-1), 'done');
    assert.ok(states.includes('reconnecting'));
    assert.deepEqual(
      seen.map((s) => s.lastEventId),
      [undefined, String(cuts[0]), String(cuts[1])],
    );
    assert.ok(seen.every((s) => s.auth === 'Bearer sk_sf_test'));
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('a 404 or 401 stops the reader with the server message instead of retrying forever', async () => {
  let calls = 0;
  const server = createServer((_req, res) => {
    calls++;
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(
      JSON.stringify({
        error: { type: 'not_found_error', code: 'not_found', message: 'No such task: vt_x', param: null },
      }),
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/s`;
  try {
    const [state, detail] = await new Promise<[StreamState, string | undefined]>((resolve) => {
      followTaskStream({
        url,
        key: 'k',
        onChunk: () => {},
        onState: (s, d) => {
          if (s === 'done' || s === 'failed') resolve([s, d]);
        },
      });
    });
    assert.equal(state, 'failed');
    assert.equal(detail, 'No such task: vt_x');
    assert.equal(calls, 1);
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test("from: starts at a byte offset with ?offset= (a moment's stream_offset) and resumes with ?offset= too", async () => {
  const all = Buffer.from(
    [0, 1, 2, 3].map((i) => `data: ${JSON.stringify(chunk(i))}\n\n`).join('') + 'data: [DONE]\n\n',
  );
  const from = all.indexOf('data: ', 1);
  const cut = all.indexOf(Buffer.from('"c2"')) + 5;
  const asked: Array<{ offset: string | null; lastEventId: string | undefined }> = [];
  const server = createServer((req, res) => {
    const offset = new URL(req.url!, 'http://x').searchParams.get('offset');
    asked.push({ offset, lastEventId: req.headers['last-event-id'] as string | undefined });
    const start = Number(offset ?? 0);
    const end = start < cut ? cut : all.length;
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    res.write(all.subarray(start, end));
    if (end < all.length) setTimeout(() => res.socket?.destroy(), 20);
    else res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/video/tasks/vt_x/stream`;
  try {
    const got: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no [DONE]; got ${got.join(',')}`)), 20_000);
      followTaskStream({
        url,
        key: 'k',
        from,
        onChunk: (c) => got.push(c.id),
        onState: (s) => {
          if (s === 'done' || s === 'failed') {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    assert.deepEqual(got, ['c1', 'c2', 'c3']);
    assert.deepEqual(asked, [
      { offset: String(from), lastEventId: undefined },
      { offset: String(cut), lastEventId: undefined },
    ]);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
