// Filtered search, items by id and upsert by a client's id (docs/vectors.md, "Filtered search", "Items by id") on a real
// server and database (PGlite here, PostgreSQL in the both-database run): a filter returns only matching items,
// top_k of them whenever that many match, through both search plans (exact over a few matches, the graph search
// over many); GET/PATCH an item (JSON merge patch, seen by later filters); the same id indexed again replaces
// the item, also under concurrent requests; bad filters are 400s naming the offending part.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, api, type TestApp } from '../helpers/app.js';
import { exactSearchMaxMatches } from '../../src/vectors/index-manager.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t?.close();
});

const invalid = (message: string, param: string) => ({
  error: { type: 'invalid_request_error', code: 'invalid_parameter', message, param },
});

async function collection(name: string): Promise<string> {
  const r = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name } });
  assert.equal(r.status, 201, r.text);
  return r.body.id;
}

const WORDS =
  'red green blue dog cat horse car train boat tree river mountain city beach street house kitchen table chair window'.split(
    ' ',
  );

async function indexMany(col: string, n: number, meta: (i: number) => Record<string, unknown>) {
  for (let i = 0; i < n; i += 100) {
    const items = Array.from({ length: Math.min(100, n - i) }, (_, j) => {
      const k = i + j;
      return {
        id: `doc-${k}`,
        text: `${WORDS[k % 20]} ${WORDS[(k * 7 + 3) % 20]} ${WORDS[(k * 13 + 5) % 20]}`,
        metadata: meta(k),
      };
    });
    const r = await api(t, `/v1/vectors/collections/${col}/index`, { method: 'POST', json: { items } });
    assert.equal(r.status, 200, r.text);
  }
}

type Hit = { id: string; score: number; metadata: Record<string, unknown> };
const search = async (col: string, json: Record<string, unknown>) => {
  const r = await api(t, `/v1/vectors/collections/${col}/search`, {
    method: 'POST',
    json: { text: 'red dog', ...json },
  });
  assert.equal(r.status, 200, r.text);
  return r.body.results as Hit[];
};

test('filtered search: only matching items, top_k of them when enough match, on both plans', async () => {
  const col = await collection('filtered');
  const n = 2000;
  // group: 0-9 (10% each); price 0-99; shop: every third item; rare: two items only; wide: 95%.
  await indexMany(col, n, (i) => ({
    group: i % 10,
    price: (i * 37) % 100,
    shop: i % 3 === 0 ? 'acme' : 'zenith',
    rare: i === 5 || i === 777,
    wide: i % 20 !== 0,
  }));
  // The exact plan (few matches) and the graph plan (wide: more than exactSearchMaxMatches match) are both covered.
  assert.ok(n * 0.95 > exactSearchMaxMatches(n) && n / 3 < exactSearchMaxMatches(n));
  const cases: Array<[unknown, (m: Record<string, unknown>) => boolean, number]> = [
    [{ wide: true }, (m) => m.wide === true, 0],
    [{ wide: true, group: { $gte: 5 } }, (m) => m.wide === true && (m.group as number) >= 5, 0],
    [{ shop: 'acme' }, (m) => m.shop === 'acme', Math.ceil(n / 3)],
    [{ group: 3 }, (m) => m.group === 3, Math.ceil(n / 10)],
    [{ price: { $gte: 10, $lt: 20 } }, (m) => (m.price as number) >= 10 && (m.price as number) < 20, 0],
    [{ group: { $in: [1, 2] }, shop: 'zenith' }, (m) => (m.group === 1 || m.group === 2) && m.shop === 'zenith', 0],
    [{ $or: [{ rare: true }, { price: { $gt: 98 } }] }, (m) => m.rare === true || (m.price as number) > 98, 0],
    [{ rare: true }, (m) => m.rare === true, 2],
    [{ group: 42 }, () => false, 0],
    [
      { shop: { $eq: 'acme' }, $and: [{ group: { $lte: 4 } }, { group: { $gt: 1 } }] },
      (m) => m.shop === 'acme' && (m.group as number) <= 4 && (m.group as number) > 1,
      0,
    ],
  ];
  const unfilteredCount = (await search(col, { top_k: 50 })).length;
  assert.equal(unfilteredCount, 50);
  for (const [filter, pred] of cases) {
    for (const topK of [10, 50]) {
      const hits = await search(col, { filter, top_k: topK });
      const list = await allMatching(col, pred);
      assert.equal(hits.length, Math.min(topK, list), `top_k ${topK} of ${JSON.stringify(filter)} (${list} match)`);
      for (const h of hits)
        assert.ok(pred(h.metadata), `${h.id} ${JSON.stringify(h.metadata)} matches ${JSON.stringify(filter)}`);
    }
  }
  // The filtered results are the best of the matching items: the same as the unfiltered search's matching ones
  // where those reach top_k.
  const wide = await search(col, { top_k: 100 });
  // (Scores, not ids: items of the same text tie.)
  const acmeFirst = wide
    .filter((h) => h.metadata.shop === 'acme')
    .slice(0, 10)
    .map((h) => h.score);
  const acme = (await search(col, { filter: { shop: 'acme' }, top_k: 10 })).map((h) => h.score);
  assert.deepEqual(acme, acmeFirst);
  assert.deepEqual(
    await search(col, { filter: {}, top_k: 5 }),
    await search(col, { top_k: 5 }),
    '{} matches everything',
  );
});

const cache = new Map<string, Hit[]>();
async function allMatching(col: string, pred: (m: Record<string, unknown>) => boolean): Promise<number> {
  if (!cache.has(col)) {
    const out: Hit[] = [];
    for (let offset = 0; ; offset += 100) {
      const r = await api(t, `/v1/vectors/collections/${col}/items?limit=100&offset=${offset}`);
      out.push(...r.body.data);
      if (!r.body.has_more) break;
    }
    cache.set(col, out);
  }
  return cache.get(col)!.filter((h) => pred(h.metadata)).length;
}

test('items by id: GET, PATCH merges metadata (null removes a key), filters see the change, 404s', async () => {
  const col = await collection('by-id');
  const r = await api(t, `/v1/vectors/collections/${col}/index`, {
    method: 'POST',
    json: {
      items: [
        { id: 'sku:1', text: 'a red dog', metadata: { colour: 'red', stock: 3, tags: { a: 1, b: 2 } } },
        { text: 'a blue boat', metadata: { colour: 'blue' } },
      ],
    },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.ids[0], 'sku:1');
  assert.match(r.body.ids[1], /^item_[0-9a-z]{20}$/);
  const got = await api(t, `/v1/vectors/collections/${col}/items/sku:1`);
  assert.equal(got.status, 200);
  assert.deepEqual(
    { ...got.body, created_at: undefined },
    {
      id: 'sku:1',
      content_type: 'text',
      text: 'a red dog',
      metadata: { colour: 'red', stock: 3, tags: { a: 1, b: 2 } },
      content_url: null,
      created_at: undefined,
    },
  );
  const p = await api(t, `/v1/vectors/collections/${col}/items/sku:1`, {
    method: 'PATCH',
    json: { metadata: { colour: 'green', stock: null, tags: { b: null, c: 3 }, new: [1] } },
  });
  assert.equal(p.status, 200, p.text);
  assert.deepEqual(p.body.metadata, { colour: 'green', tags: { a: 1, c: 3 }, new: [1] });
  assert.deepEqual((await api(t, `/v1/vectors/collections/${col}/items/sku:1`)).body, p.body);
  assert.deepEqual(
    (await search(col, { filter: { colour: 'red' } })).map((h) => h.id),
    [],
  );
  assert.deepEqual(
    (await search(col, { filter: { colour: 'green' } })).map((h) => h.id),
    ['sku:1'],
  );
  assert.deepEqual(
    (await search(col, { filter: { stock: { $gte: 0 } } })).map((h) => h.id),
    [],
  );
  assert.equal((await api(t, `/v1/vectors/collections/${col}`)).body.item_count, 2);
  const notFound = {
    error: { type: 'not_found_error', code: 'not_found', message: 'No such item: nope', param: null },
  };
  assert.deepEqual((await api(t, `/v1/vectors/collections/${col}/items/nope`)).body, notFound);
  const pm = await api(t, `/v1/vectors/collections/${col}/items/nope`, {
    method: 'PATCH',
    json: { metadata: { a: 1 } },
  });
  assert.equal(pm.status, 404);
  assert.deepEqual(pm.body, notFound);
  assert.equal((await api(t, `/v1/vectors/collections/col_nope/items/sku:1`)).status, 404);
  const bad = await api(t, `/v1/vectors/collections/${col}/items/sku:1`, { method: 'PATCH', json: { metadata: 'x' } });
  assert.equal(bad.status, 400);
  // A filter loaded before the patch (the metadata columns are loaded on the first filtered search) sees it too.
  await api(t, `/v1/vectors/collections/${col}/items/sku:1`, {
    method: 'PATCH',
    json: { metadata: { colour: 'red' } },
  });
  assert.deepEqual(
    (await search(col, { filter: { colour: 'red' } })).map((h) => h.id),
    ['sku:1'],
  );
});

test('upsert by id: the same id replaces vector, content and metadata; no duplicates, also under concurrency', async () => {
  const col = await collection('upsert');
  const first = await api(t, `/v1/vectors/collections/${col}/index`, {
    method: 'POST',
    json: {
      items: [
        { id: 'x', text: 'a red dog', metadata: { v: 1 } },
        { id: 'y', text: 'a train' },
      ],
    },
  });
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(
    (await search(col, { filter: { v: 1 } })).map((h) => h.id),
    ['x'],
  );
  const again = await api(t, `/v1/vectors/collections/${col}/index`, {
    method: 'POST',
    json: { items: [{ id: 'x', text: 'snow covered mountains', metadata: { v: 2 } }] },
  });
  assert.equal(again.status, 200, again.text);
  assert.deepEqual(again.body.ids, ['x']);
  const item = (await api(t, `/v1/vectors/collections/${col}/items/x`)).body;
  assert.equal(item.text, 'snow covered mountains');
  assert.deepEqual(item.metadata, { v: 2 });
  assert.equal((await api(t, `/v1/vectors/collections/${col}`)).body.item_count, 2);
  const top = await api(t, `/v1/vectors/collections/${col}/search`, {
    method: 'POST',
    json: { text: 'mountains with snow', top_k: 10 },
  });
  assert.deepEqual(top.body.results.map((h: Hit) => h.id).sort(), ['x', 'y'], 'one result per id');
  assert.equal(top.body.results[0].id, 'x', 'the new vector is searched');
  assert.deepEqual(
    (await search(col, { filter: { v: 1 } })).map((h) => h.id),
    [],
  );
  // Concurrent upserts of the same ids: one item each, whichever came last.
  const writes = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      api(t, `/v1/vectors/collections/${col}/index`, {
        method: 'POST',
        json: {
          items: [
            { id: 'x', text: `take ${i} of a red dog`, metadata: { take: i } },
            { id: 'z', text: `boat ${i}`, metadata: { take: i } },
          ],
        },
      }),
    ),
  );
  for (const w of writes) assert.equal(w.status, 200, w.text);
  const list = await api(t, `/v1/vectors/collections/${col}/items?limit=100`);
  assert.deepEqual(list.body.data.map((h: Hit) => h.id).sort(), ['x', 'y', 'z']);
  assert.equal(list.body.total, 3);
  const all = await api(t, `/v1/vectors/collections/${col}/search`, {
    method: 'POST',
    json: { text: 'red dog', top_k: 100 },
  });
  assert.deepEqual(all.body.results.map((h: Hit) => h.id).sort(), ['x', 'y', 'z']);
  const takes = (await search(col, { filter: { take: { $gte: 0 } }, top_k: 10 })).map((h) => h.id).sort();
  assert.deepEqual(takes, ['x', 'z']);
  // Duplicate ids in one request, and ids that are not ids.
  const dup = await api(t, `/v1/vectors/collections/${col}/index`, {
    method: 'POST',
    json: {
      items: [
        { id: 'a', text: 'a' },
        { id: 'a', text: 'b' },
      ],
    },
  });
  assert.equal(dup.status, 400);
  assert.deepEqual(
    dup.body,
    invalid(
      'Expected ids unique within the request for items[1].id but received "a", the id of items[0] too',
      'items[1].id',
    ),
  );
  const slash = await api(t, `/v1/vectors/collections/${col}/index`, {
    method: 'POST',
    json: { items: [{ id: 'a/b', text: 'a' }] },
  });
  assert.equal(slash.status, 400);
  assert.equal(slash.body.error.param, 'items[0].id');
});

test('bad filters: 400 invalid_parameter naming the offending part', async () => {
  const col = await collection('bad-filters');
  const deep = { $and: [{ $or: [{ $and: [{ $or: [{ $and: [{ a: 1 }] }] }] }] }] };
  const cases: Array<[unknown, string, string]> = [
    [
      { price: { $gtt: 1 } },
      'Expected one of the operators $eq, $in, $gt, $gte, $lt, $lte for filter.price but received "$gtt"',
      'filter.price.$gtt',
    ],
    [{ price: { $gt: '10' } }, 'Expected a finite number for filter.price.$gt but received "10"', 'filter.price.$gt'],
    [
      { price: null },
      'Expected a string, finite number, boolean or an object of operators ($eq, $in, $gt, $gte, $lt, $lte) for filter.price but received null',
      'filter.price',
    ],
    [
      { price: [1, 2] },
      'Expected a string, finite number, boolean or an object of operators ($eq, $in, $gt, $gte, $lt, $lte) for filter.price but received an array of 2',
      'filter.price',
    ],
    [
      { tag: { $in: 'a' } },
      'Expected an array of 1 to 1000 strings, numbers or booleans for filter.tag.$in but received "a"',
      'filter.tag.$in',
    ],
    [
      { tag: { $in: Array.from({ length: 1001 }, (_, i) => i) } },
      'Expected an array of 1 to 1000 strings, numbers or booleans for filter.tag.$in but received an array of 1001',
      'filter.tag.$in',
    ],
    [
      { tag: { $in: ['a', { b: 1 }] } },
      'Expected a string, finite number or boolean for filter.tag.$in[1] but received an object',
      'filter.tag.$in[1]',
    ],
    [
      { $or: [] },
      'Expected an array of 1 to 64 filter objects for filter.$or but received an empty array',
      'filter.$or',
    ],
    [{ $or: [{ a: 1 }, 'b'] }, 'Expected an object of conditions for filter.$or[1] but received "b"', 'filter.$or[1]'],
    [
      { $gt: 1 },
      'Expected a metadata key, $and or $or for filter.$gt but received the operator "$gt" (operators go inside a key\'s condition: {"price": {"$gt": 10}})',
      'filter.$gt',
    ],
    [
      deep,
      'Expected $and/$or nested at most 4 deep for filter.$and[0].$or[0].$and[0].$or[0] but received deeper nesting',
      'filter.$and[0].$or[0].$and[0].$or[0].$and',
    ],
    [
      { a: {} },
      'Expected at least one operator ($eq, $in, $gt, $gte, $lt, $lte) for filter.a but received an object',
      'filter.a',
    ],
  ];
  for (const [filter, message, param] of cases) {
    const r = await api(t, `/v1/vectors/collections/${col}/search`, { method: 'POST', json: { text: 'a', filter } });
    assert.equal(r.status, 400, JSON.stringify(filter));
    assert.deepEqual(r.body, invalid(message, param), JSON.stringify(filter));
  }
  const notObject = await api(t, `/v1/vectors/collections/${col}/search`, {
    method: 'POST',
    json: { text: 'a', filter: [1] },
  });
  assert.equal(notObject.status, 400);
  assert.equal(notObject.body.error.param, 'filter');
});

test('a filter answered twice is answered afresh after every write in between (add, upsert, patch, delete)', async () => {
  const col = await collection('filter-cache');
  const put = async (items: Array<Record<string, unknown>>) => {
    const r = await api(t, `/v1/vectors/collections/${col}/index`, { method: 'POST', json: { items } });
    assert.equal(r.status, 200, r.text);
  };
  await put([
    { id: 'a', text: 'a red dog', metadata: { colour: 'red' } },
    { id: 'b', text: 'a blue boat', metadata: { colour: 'blue' } },
  ]);
  const red = async () => (await search(col, { filter: { colour: 'red' } })).map((h) => h.id).sort();
  // The second identical search is answered from the cached bitmap; each write below must drop it.
  assert.deepEqual(await red(), ['a']);
  assert.deepEqual(await red(), ['a']);
  await put([{ id: 'c', text: 'a red car', metadata: { colour: 'red' } }]);
  assert.deepEqual(await red(), ['a', 'c']);
  await put([{ id: 'b', text: 'a red boat', metadata: { colour: 'red' } }]);
  assert.deepEqual(await red(), ['a', 'b', 'c']);
  const p = await api(t, `/v1/vectors/collections/${col}/items/a`, {
    method: 'PATCH',
    json: { metadata: { colour: 'green' } },
  });
  assert.equal(p.status, 200, p.text);
  assert.deepEqual(await red(), ['b', 'c']);
  const d = await api(t, `/v1/vectors/collections/${col}/items`, { method: 'DELETE', json: { ids: ['c'] } });
  assert.equal(d.status, 200, d.text);
  assert.deepEqual(await red(), ['b']);
  // Written the same way ({"$and": [...]} of one clause, $in reordered) it is the same cached filter: same answer.
  assert.deepEqual(
    (await search(col, { filter: { $and: [{ colour: { $in: ['red', 'nope'] } }] } })).map((h) => h.id),
    ['b'],
  );
  assert.deepEqual(
    (await search(col, { filter: { colour: { $in: ['nope', 'red'] } } })).map((h) => h.id),
    ['b'],
  );
});
