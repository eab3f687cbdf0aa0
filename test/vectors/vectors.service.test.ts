// VectorsService called directly (no HTTP): real database, real index files, the real multimodal embedder.
// Create, index, list, search and delete through the use cases; indexing and search each bill one ledger
// row with the tokens they report; a missing collection is a 404 ApiError.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openTestServices, type TestServices } from '../helpers/app.js';
import { vectorsModule } from '../../src/vectors/vectors.module.js';
import type { VectorsService } from '../../src/vectors/vectors.service.js';
import { ApiError } from '../../src/base/errors.js';

let t: TestServices;
let vectors: VectorsService;
let stop: () => Promise<void>;
before(async () => {
  t = await openTestServices();
  const m = vectorsModule(t.s);
  await m.start!();
  vectors = m.service;
  stop = () => m.stop!();
  await t.s.models.ready;
});
after(async () => {
  await stop?.();
  await t?.close();
});

test('a collection: create, index text, list, search by meaning, delete items, delete the collection', async () => {
  const c = await vectors.createCollection(t.caller(), { name: 'notes' });
  assert.equal(c.model_id, 'multimodal-embedding-v1');
  assert.equal(c.item_count, 0);
  const texts = [
    'a dog playing with a ball in the park',
    'a plate of pasta with tomato sauce',
    'snow covered mountains at sunrise',
  ];
  const indexed = await vectors.indexItems(t.caller(), c.id, {
    items: texts.map((text, i) => ({ text, metadata: { i } })),
  });
  assert.equal(indexed.indexed, 3);
  assert.ok(indexed.usage.input_tokens > 0);

  const list = await vectors.listItems(t.caller(), c.id, { limit: 2 });
  assert.deepEqual([list.total, list.has_more, list.data.map((x) => x.text)], [3, true, texts.slice(0, 2)]);

  const found = await vectors.search(t.caller(), c.id, { text: 'puppy fetching a toy', top_k: 1 });
  assert.deepEqual(
    found.results.map((r) => r.id),
    [indexed.ids[0]],
  );

  const rows = await t.s.usage.events(t.projectId);
  assert.deepEqual(
    rows.map((r) => [r.endpoint, r.model, Number(r.input_tokens), r.key_id]),
    [
      ['/v1/vectors/collections/:id/index', 'multimodal-embedding-v1', indexed.usage.input_tokens, t.keyId],
      ['/v1/vectors/collections/:id/search', 'multimodal-embedding-v1', found.usage.input_tokens, t.keyId],
    ],
  );

  assert.deepEqual(await vectors.deleteItems(t.caller(), c.id, { ids: [indexed.ids[0]!, 'item_nope'] }), {
    deleted: 1,
    not_found: ['item_nope'],
  });
  const again = await vectors.search(t.caller(), c.id, { text: 'puppy fetching a toy', top_k: 3 });
  assert.ok(!again.results.some((r) => r.id === indexed.ids[0]));
  assert.deepEqual(await vectors.deleteCollection(t.caller(), c.id), {
    id: c.id,
    object: 'vectors.collection',
    deleted: true,
  });
  await assert.rejects(vectors.getCollection(t.caller(), c.id), (e) => e instanceof ApiError && e.status === 404);
});

test("another project's collection is not found", async () => {
  const c = await vectors.createCollection(t.caller(), { name: 'mine' });
  const other = await t.s.projects.create('other');
  await assert.rejects(
    vectors.getCollection({ projectId: other.id }, c.id),
    (e) => e instanceof ApiError && e.status === 404,
  );
  assert.deepEqual((await vectors.listCollections({ projectId: other.id })).data, []);
});
