// CollectionStore's rows on the real database (PGlite here, PostgreSQL in the suite's second run): on the
// embedded database a collection read once is read from memory until this store writes it, and every write
// (items added, deleted, metadata changed, the collection deleted) is seen by the next read; on PostgreSQL,
// shared with other nodes, every read goes to the database. A store counts the collection reads it sends
// through a Db that passes every call on.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTestServices, type TestServices } from '../helpers/app.js';
import { CollectionStore, type NewItem } from '../../src/vectors/collection-store.js';
import type { Db } from '../../src/store/db.js';

let t: TestServices;
before(async () => {
  t = await openTestServices();
});
after(async () => {
  await t?.close();
});

/** A store over the services' database that counts its reads of one collection's row. */
function countingStore(): { store: CollectionStore; reads: () => number } {
  let n = 0;
  const db = t.s.db;
  const counting: Db = {
    kind: db.kind,
    query: (sql, params) => {
      if (/FROM vector_collections WHERE id = \$1 AND project_id = \$2/.test(sql)) n++;
      return db.query(sql, params);
    },
    tx: (fn) => db.tx(fn),
    exec: (sql) => db.exec(sql),
    ping: () => db.ping(),
    close: () => db.close(),
  };
  return { store: new CollectionStore(counting), reads: () => n };
}

const item = (id: string, v: number, metadata: Record<string, unknown> = {}): NewItem => ({
  id,
  content_type: 'text',
  text: id,
  blob_key: null,
  metadata,
  vector: new Float32Array([v, 1 - v, 0.5]),
});

test('a collection read once is read from memory on the embedded database only, and every write is seen by the next read', async () => {
  const { store, reads } = countingStore();
  const c = (await store.create(t.projectId, {
    name: 'rows',
    description: null,
    model_id: 'multimodal-embedding-v1',
    dimensions: 3,
    metric: 'COSINE',
  }))!;
  const cached = t.s.db.kind === 'pglite';
  const read = async () => (await store.get(t.projectId, c.id))!;

  assert.equal((await read()).change_seq, 0);
  const first = reads();
  await read();
  assert.equal(
    reads(),
    cached ? first : first + 1,
    cached ? 'the second read came from memory' : 'PostgreSQL: every read queries',
  );

  await store.addItems(t.projectId, c.id, [item('a', 0.1), item('b', 0.9)]);
  let now = await read();
  assert.deepEqual([now.item_count, now.change_seq], [2, 1]);
  // An upsert replaces one item: the count stays, the change number moves.
  await store.addItems(t.projectId, c.id, [item('a', 0.2)]);
  now = await read();
  assert.deepEqual([now.item_count, now.change_seq], [2, 2]);
  assert.ok(await store.updateMetadata(t.projectId, c.id, 'b', () => ({ k: 1 })));
  assert.equal((await read()).change_seq, 3);
  assert.equal(await store.updateMetadata(t.projectId, c.id, 'nope', () => ({})), 'missing');
  assert.equal((await read()).change_seq, 3, 'a rolled-back write changes nothing');
  await store.deleteItems(t.projectId, c.id, ['a']);
  now = await read();
  assert.deepEqual([now.item_count, now.change_seq], [1, 4]);

  // What a caller does to the row it got does not reach the next caller.
  now.item_count = 99;
  assert.equal((await read()).item_count, 1);
  // Another project's caller never sees it, cached or not.
  const other = await t.s.projects.create('someone-else');
  assert.equal(await store.get(other.id, c.id), null);

  assert.equal(await store.delete(t.projectId, c.id), true);
  assert.equal(await store.get(t.projectId, c.id), null);
});

test('a read the database answers while a write runs never leaves an older row behind it', async () => {
  const { store } = countingStore();
  const c = (await store.create(t.projectId, {
    name: 'race',
    description: null,
    model_id: 'multimodal-embedding-v1',
    dimensions: 3,
    metric: 'COSINE',
  }))!;
  for (let i = 0; i < 20; i++) {
    // Reads sent before, with and after each write: the read that follows the write sees it.
    const before = store.get(t.projectId, c.id);
    const write = store.addItems(t.projectId, c.id, [item(`i${i}`, i / 20)]);
    const during = store.get(t.projectId, c.id);
    await Promise.all([before, write, during]);
    const after = (await store.get(t.projectId, c.id))!;
    assert.deepEqual([after.item_count, after.change_seq], [i + 1, i + 1], `write ${i}`);
  }
});
