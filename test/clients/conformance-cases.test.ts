// One conformance suite for every SDK: each case of clients/conformance/cases.json is a test of the
// TypeScript SDK (test/clients/typescript-sdk.test.ts) and of the Python SDK
// (clients/python/tests/test_conformance.py), named by the case id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/base/paths.js';

const cases = (
  JSON.parse(readFileSync(join(projectRoot, 'clients', 'conformance', 'cases.json'), 'utf8')) as {
    cases: Array<{ id: string }>;
  }
).cases;
const SUITES = {
  typescript: {
    file: 'test/clients/typescript-sdk.test.ts',
    name: (id: string) => new RegExp(`^test\\(['"]${id}: `, 'm'),
  },
  python: {
    file: 'clients/python/tests/test_conformance.py',
    name: (id: string) => new RegExp(`^def test_${id}(_\\w+)?\\(`, 'm'),
  },
};

test('every conformance case is a test of each SDK', () => {
  assert.ok(cases.length >= 10);
  assert.equal(new Set(cases.map((c) => c.id)).size, cases.length, 'case ids are unique');
  for (const [sdk, s] of Object.entries(SUITES)) {
    const text = readFileSync(join(projectRoot, s.file), 'utf8');
    const missing = cases.filter((c) => !s.name(c.id).test(text)).map((c) => c.id);
    assert.deepEqual(missing, [], `${sdk} (${s.file}) lacks these cases`);
  }
});
