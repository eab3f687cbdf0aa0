// Holds the error catalogue (src/base/errors.ts) and the code table of docs/errors.md to each other: every
// catalogued code is documented with its status and type, every documented code exists, and no code is
// coined outside the catalogue. Clients read docs/errors.md to handle errors, so a code missing there is a bug.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { errorCatalogue, errors, taskErrors, DecodeError, toolCancelledBody } from '../../src/base/errors.js';
import { projectRoot } from '../../src/base/paths.js';

const root = projectRoot;

interface DocRow {
  status: number | null;
  type: string | null;
  code: string;
}

/** The rows of the code table in docs/errors.md's "Error codes" section (up to the next level-2 heading). */
export function documentedCodes(page: string): DocRow[] {
  const start = page.indexOf('\n## Error codes\n');
  assert.ok(start >= 0, 'docs/errors.md has no "## Error codes" section');
  const end = page.indexOf('\n## ', start + 1);
  const section = page.slice(start, end < 0 ? undefined : end);
  const rows: DocRow[] = [];
  for (const m of section.matchAll(/^\| *(\d+|—) *\| *([a-z_]+|—) *\| *`([a-z0-9_]+)` *\|.*\|$/gm)) {
    rows.push({ status: m[1] === '—' ? null : Number(m[1]), type: m[2] === '—' ? null : m[2]!, code: m[3]! });
  }
  return rows;
}

const catalogue = errorCatalogue as Record<string, { status: number | null; type: string | null }>;
const documented = documentedCodes(readFileSync(join(root, 'docs', 'errors.md'), 'utf8'));

test('docs/errors.md lists every catalogued code with its status and type', () => {
  const byCode = new Map(documented.map((r) => [r.code, r]));
  const missing = Object.keys(catalogue).filter((c) => !byCode.has(c));
  assert.deepEqual(missing, [], `codes in src/base/errors.ts but not in docs/errors.md: ${missing.join(', ')}`);
  for (const [code, e] of Object.entries(catalogue)) {
    const row = byCode.get(code)!;
    assert.deepEqual(
      { status: row.status, type: row.type },
      { status: e.status, type: e.type },
      `docs/errors.md row for ${code}`,
    );
  }
});

test('every code in docs/errors.md exists in the catalogue, once', () => {
  const unknown = documented.map((r) => r.code).filter((c) => !(c in catalogue));
  assert.deepEqual(unknown, [], `codes in docs/errors.md but not in src/base/errors.ts: ${unknown.join(', ')}`);
  const seen = new Set<string>();
  const twice = documented.map((r) => r.code).filter((c) => (seen.has(c) ? true : (seen.add(c), false)));
  assert.deepEqual(twice, [], 'codes listed twice in docs/errors.md');
});

test('the table reader finds rows and would notice a missing one', () => {
  const planted =
    '# x\n\n## Error codes\n\n| status | type | code | when |\n|---|---|---|---|\n| 400 | invalid_request_error | `invalid_json` | bad |\n| — | — | `worker_lost` | lost |\n\n## Next\n| 500 | api_error | `not_here` | x |\n';
  assert.deepEqual(documentedCodes(planted), [
    { status: 400, type: 'invalid_request_error', code: 'invalid_json' },
    { status: null, type: null, code: 'worker_lost' },
  ]);
});

test("constructors build catalogued codes with the catalogue's status and type", () => {
  const built = [
    errors.invalidJson('x'),
    errors.authentication('missing_api_key', 'x'),
    errors.invalidSignature('x'),
    errors.collectionExists('n'),
    errors.duplicateProjectName('n'),
    errors.taskFinished('vt_1', 'failed'),
    errors.sessionNotFound('s', 60, null),
    errors.tooManySessions(1, 60, 1),
    errors.consoleNotBuilt('x'),
    errors.internal(),
    new DecodeError('invalid_video', 'x'),
    new DecodeError('not_open', 'x'),
  ];
  for (const e of built) {
    const entry = catalogue[e.code];
    assert.ok(entry, `${e.code} is not catalogued`);
    assert.equal(e.status, entry.status, e.code);
    assert.equal(e.type, entry.type, e.code);
  }
  for (const t of [
    taskErrors.noProvider('m'),
    taskErrors.providerError('p', 1, 'x'),
    taskErrors.providersFailed(['a: b']),
    taskErrors.workerShutdown(),
    taskErrors.workerLostBeforeFirstChunk(3),
    taskErrors.workerLostMidStream(2),
  ]) {
    assert.ok(t.code in catalogue, t.code);
  }
  assert.ok(toolCancelledBody().error.code in catalogue);
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith('.ts'))
    .map((d) => join(d.parentPath, d.name));
}

/** `code: 'some_code'` object properties outside errors.ts: an error code coined away from the catalogue.
 * zod's issue code ('custom') and Node's errno codes (capitals) are not error codes of ours. */
export function coinedCodes(files: { path: string; text: string }[]): string[] {
  const found: string[] = [];
  for (const f of files) {
    if (f.path.endsWith('/src/base/errors.ts')) continue;
    for (const m of f.text.matchAll(/\bcode: *['"`]([a-z][a-z0-9_]*)['"`]/g)) {
      if (m[1] !== 'custom') found.push(`${f.path}: ${m[1]}`);
    }
  }
  return found;
}

test('no error code is coined outside src/base/errors.ts', () => {
  const files = sourceFiles(join(root, 'src')).map((path) => ({ path, text: readFileSync(path, 'utf8') }));
  assert.deepEqual(coinedCodes(files), []);
  assert.deepEqual(coinedCodes([{ path: '/r/src/video/x.ts', text: "error: { code: 'worker_lost', message: 'm' }" }]), [
    '/r/src/video/x.ts: worker_lost',
  ]);
});
