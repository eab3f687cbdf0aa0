// The API description is complete: every route has its schemas, and /openapi.json lists every route.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, api, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t?.close();
});

test('every route declares its schemas', () => {
  for (const r of t.app.server.router.all()) {
    const id = `${r.method} ${r.path}`;
    if (['POST', 'PUT', 'PATCH'].includes(r.method))
      assert.ok(r.body || r.noBody, `${id} takes a body but has no body schema`);
    const ok = Object.entries(r.responses).filter(([s]) => Number(s) < 300);
    assert.ok(ok.length > 0, `${id} has no success response`);
    // JSON responses need a schema; files, pages and event streams declare their content type instead.
    const json = ok.filter(([, v]) => !v.contentType || v.contentType === 'application/json');
    if (r.path !== '/openapi.json' && json.length === ok.length) {
      assert.ok(
        ok.some(([, v]) => v.schema),
        `${id} has no response schema`,
      );
    } else if (r.path !== '/openapi.json') {
      assert.ok(
        ok.every(([, v]) => v.schema || v.contentType),
        `${id} declares neither a schema nor a content type`,
      );
    }
    assert.ok(r.summary.length > 3, `${id} has no summary`);
  }
});

test('/openapi.json is OpenAPI 3.1 and lists every route', async () => {
  const r = await api(t, '/openapi.json', { key: null });
  assert.equal(r.status, 200);
  assert.equal(r.body.openapi, '3.1.0');
  for (const route of t.app.server.router.all()) {
    const p = route.path.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\*$/, '{path}');
    assert.ok(r.body.paths[p]?.[route.method.toLowerCase()], `missing ${route.method} ${p}`);
  }
  const create = r.body.paths['/admin/v1/projects'].post;
  assert.equal(create.requestBody.content['application/json'].schema.properties.name.type, 'string');
});
