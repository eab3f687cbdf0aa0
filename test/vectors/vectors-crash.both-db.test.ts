// Crash safety of vector indexes with a real `sightflow serve` child process: SIGKILL while 1000 text items
// are being indexed in batches; after a restart every item whose request returned 200 is listed once and
// found by search. Then the index file is deleted, then corrupted: each start rebuilds it from the database
// and search answers as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshDatabaseUrl } from '../helpers/app.js';
import { serve, type Served } from '../helpers/cli.js';
import { projectRoot } from '../../src/base/paths.js';

const NOUNS = (
  'apple river mountain guitar window engine garden castle rocket pencil island forest camera bridge harbor desert ' +
  'violin tiger coffee ladder candle planet museum tractor blanket orchard lantern glacier compass pillow ' +
  'trumpet volcano meadow kettle statue canyon helmet saddle anchor tunnel'
).split(' ');

/** 1000 distinct word sets (combinations, never permutations: a bag of words is its order-free meaning). */
function texts(n: number): string[] {
  const out: string[] = [];
  for (let a = 0; a < NOUNS.length && out.length < n; a++)
    for (let b = a + 1; b < NOUNS.length && out.length < n; b++)
      for (let c = b + 1; c < NOUNS.length && out.length < n; c++) out.push(`${NOUNS[a]} ${NOUNS[b]} ${NOUNS[c]}`);
  return out;
}

interface Server {
  s: Served;
  url: string;
  key: string;
}

async function start(dataDir: string, env: Record<string, string>, key?: string): Promise<Server> {
  const s = await serve(['--data-dir', dataDir], env);
  const found = key ?? /sk_sf_[A-Za-z0-9_-]{43}/.exec(s.lines.find((l) => /sk_sf_/.test(l)) ?? '')?.[0];
  assert.ok(found, 'bootstrap key printed');
  return { s, url: `http://127.0.0.1:${s.port}`, key: found };
}

async function call(srv: Server, method: string, path: string, json?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(srv.url + path, {
    method,
    headers: { authorization: `Bearer ${srv.key}`, ...(json ? { 'content-type': 'application/json' } : {}) },
    body: json ? JSON.stringify(json) : undefined,
  });
  return { status: res.status, body: await res.json() };
}

async function stop(srv: Server, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  srv.s.child.kill(signal);
  await srv.s.exited;
}

async function allItems(srv: Server, col: string): Promise<Array<{ id: string; text: string }>> {
  const out = [];
  for (let offset = 0; ; offset += 100) {
    const r = await call(srv, 'GET', `/v1/vectors/collections/${col}/items?limit=100&offset=${offset}`);
    assert.equal(r.status, 200);
    out.push(...r.body.data);
    if (!r.body.has_more) return out;
  }
}

async function topIds(srv: Server, col: string, queries: string[]): Promise<string[][]> {
  const out = [];
  for (const q of queries) {
    const r = await call(srv, 'POST', `/v1/vectors/collections/${col}/search`, { text: q, top_k: 3 });
    assert.equal(r.status, 200);
    out.push(r.body.results.map((x: { id: string }) => x.id));
  }
  return out;
}

const lastIndexLog = (srv: Server) =>
  srv.s.lines
    .map((l) => {
      try {
        return JSON.parse(l);
      } catch {
        return {};
      }
    })
    .filter((j) => j.msg === 'vector indexes ready')
    .pop();

test('SIGKILL while indexing: acknowledged items survive once each; a deleted or corrupt index is rebuilt', {
  timeout: 300_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-vcrash-'));
  const databaseUrl = await freshDatabaseUrl();
  const env = {
    SIGHTFLOW_ADMIN_TOKEN: 'adm',
    SIGHTFLOW_MODELS_DIR: process.env.SIGHTFLOW_MODELS_DIR ?? join(projectRoot, 'data', 'models'),
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  };
  try {
    let srv = await start(dataDir, env);
    const col = (await call(srv, 'POST', '/v1/vectors/collections', { name: 'crash' })).body.id as string;
    const all = texts(1000);
    const batches: string[][] = [];
    for (let i = 0; i < all.length; i += 20) batches.push(all.slice(i, i + 20));
    const acknowledged = new Map<string, string>();
    let next = 0;
    let killed = false;
    // Two writers at a time, so requests are in flight when the kill lands (after about 60% of the batches).
    const writer = async () => {
      while (next < batches.length) {
        const b = batches[next++]!;
        if (next === Math.floor(batches.length * 0.6) && !killed) {
          killed = true;
          srv.s.child.kill('SIGKILL');
        }
        try {
          const r = await call(srv, 'POST', `/v1/vectors/collections/${col}/index`, {
            items: b.map((text) => ({ text })),
          });
          if (r.status === 200) r.body.ids.forEach((id: string, i: number) => acknowledged.set(id, b[i]!));
        } catch {
          /* the server is gone: this batch was never acknowledged */
        }
      }
    };
    await Promise.all([writer(), writer()]);
    await srv.s.exited;
    assert.ok(acknowledged.size >= 400, `acknowledged ${acknowledged.size}`);

    srv = await start(dataDir, env, srv.key);
    const listed = await allItems(srv, col);
    const ids = listed.map((x) => x.id);
    assert.equal(new Set(ids).size, ids.length, 'no item listed twice');
    assert.equal(new Set(listed.map((x) => x.text)).size, listed.length, 'no text indexed twice');
    for (const [id, text] of acknowledged)
      assert.ok(
        listed.some((x) => x.id === id && x.text === text),
        `acknowledged ${id} listed`,
      );
    // Every acknowledged item is found by its own text (an identical vector, score 1).
    const sample = [...acknowledged].filter((_, i) => i % 10 === 0);
    for (const [id, text] of sample) {
      const r = await call(srv, 'POST', `/v1/vectors/collections/${col}/search`, { text, top_k: 3 });
      assert.equal(r.body.results[0].id, id, `search "${text}"`);
      assert.ok(r.body.results[0].score > 0.999);
    }
    const queries = sample.slice(0, 20).map(([, text]) => text.split(' ').slice(0, 2).join(' '));
    const before = await topIds(srv, col, queries);
    await stop(srv);

    const files = () => readdirSync(join(dataDir, 'indexes'));
    assert.ok(files().includes(`${col}.usearch`), 'index saved at stop');
    rmSync(join(dataDir, 'indexes', `${col}.usearch`));
    srv = await start(dataDir, env, srv.key);
    assert.equal(lastIndexLog(srv)?.rebuilt, 1, 'missing index rebuilt at start');
    assert.deepEqual(await topIds(srv, col, queries), before);
    await stop(srv);

    writeFileSync(join(dataDir, 'indexes', `${col}.usearch`), Buffer.alloc(4096, 0x5a));
    srv = await start(dataDir, env, srv.key);
    assert.equal(lastIndexLog(srv)?.rebuilt, 1, 'corrupt index rebuilt at start');
    assert.deepEqual(await topIds(srv, col, queries), before);
    assert.equal((await call(srv, 'GET', `/v1/vectors/collections/${col}`)).body.item_count, listed.length);
    await stop(srv);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
