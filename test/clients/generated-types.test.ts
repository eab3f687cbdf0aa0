// The SDKs' generated types are the served OpenAPI document's: regenerating them from /openapi.json gives
// the committed files byte for byte. A route or schema change that is not regenerated fails here, with the
// command that fixes it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { projectRoot } from '../../src/base/paths.js';
import { operationsOf, pythonModule, typescriptModule } from '../../clients/codegen/openapi-codegen.js';

let t: TestApp;
let doc: Record<string, any>;
before(async () => {
  t = await startTestApp();
  const r = await fetch(`${t.url}/openapi.json`);
  doc = (await r.json()) as Record<string, any>;
  assert.equal(r.status, 200, JSON.stringify(doc).slice(0, 500));
});
after(async () => {
  await t?.close();
});

const REGENERATE = 'regenerate with `node --import tsx clients/codegen/generate.ts` and commit the result';

test('clients/typescript/src/generated/api.ts is generated from the served document', () => {
  const committed = readFileSync(join(projectRoot, 'clients', 'typescript', 'src', 'generated', 'api.ts'), 'utf8');
  assert.ok(
    committed === typescriptModule(doc),
    `the TypeScript SDK's types drifted from the OpenAPI document: ${REGENERATE}`,
  );
});

test('clients/python/sightflow/_generated.py is generated from the served document', () => {
  const committed = readFileSync(join(projectRoot, 'clients', 'python', 'sightflow', '_generated.py'), 'utf8');
  assert.ok(committed === pythonModule(doc), `the Python SDK's types drifted from the OpenAPI document: ${REGENERATE}`);
});

test('the generator sees every operation, each with a unique id, and every named schema', () => {
  const ops = operationsOf(doc);
  const count = Object.values(doc.paths as Record<string, object>).reduce((n, o) => n + Object.keys(o).length, 0);
  assert.equal(ops.length, count);
  assert.equal(new Set(ops.map((o) => o.id)).size, ops.length);
  const ts = typescriptModule(doc);
  for (const name of Object.keys(doc.components.schemas)) assert.match(ts, new RegExp(`^export type ${name} = `, 'm'));
  // A drifted document is caught: a renamed field or path changes the output.
  assert.notEqual(typescriptModule(JSON.parse(JSON.stringify(doc).replace('"next_cursor"', '"next_page"'))), ts);
  const moved = JSON.parse(
    JSON.stringify(doc).replace('"/v1/video/tasks/{id}/results"', '"/v1/video/tasks/{id}/result"'),
  );
  assert.notEqual(typescriptModule(moved), ts);
  assert.notEqual(pythonModule(moved), pythonModule(doc));
});
