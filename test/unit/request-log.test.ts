// The one-line-per-request log is written without pino's serializer: every line must still be valid JSON
// with the fields escaped, for paths with quotes, backslashes and non-ASCII, and for repeated routes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const logModule = fileURLToPath(new URL('../../src/log.ts', import.meta.url));

test('request lines are JSON, with user-given text escaped and repeated values identical', () => {
  const script = `
    const { createLogger, requestLogger } = await import(${JSON.stringify(logModule)});
    const log = requestLogger(createLogger('info'));
    const paths = ['/v1/project', '/v1/x"y\\\\z', '/v1/caf\\u00e9/\\u2028', '/v1/project'];
    for (const path of paths) log({ requestId: 'req_1', method: 'GET', route: '/v1/items/:id', path, status: 200, ms: 0.12, project: 'proj_"a' });
    log({ requestId: 'req_2', method: 'POST', route: '(unmatched)', path: '/nope', status: 404, ms: 1 });
  `;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  const lines = out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(lines.length, 5);
  assert.deepEqual(lines.map((l) => l.path), ['/v1/project', '/v1/x"y\\z', '/v1/caf\u00e9/\u2028', '/v1/project', '/nope']);
  assert.equal(lines[0]!.route, '/v1/items/:id');
  assert.equal(lines[3]!.project, 'proj_"a');
  assert.equal(lines[4]!.project, undefined);
  assert.equal(lines[4]!.status, 404);
  assert.equal(lines[0]!.msg, 'request');
});
