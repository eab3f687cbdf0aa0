// The one-line-per-request log is written without pino's serializer: every line must still be valid JSON
// with the fields escaped, for paths with quotes, backslashes and non-ASCII, and for repeated routes; a
// request's trace id follows its request id.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const logModule = fileURLToPath(new URL('../../src/base/log.ts', import.meta.url));

test('request lines are JSON, with user-given text escaped and repeated values identical', () => {
  const script = `
    const { createLogger, requestLogger } = await import(${JSON.stringify(logModule)});
    const log = requestLogger(createLogger('info'));
    const paths = ['/v1/project', '/v1/x"y\\\\z', '/v1/caf\\u00e9/\\u2028', '/v1/project'];
    for (const path of paths) log({ requestId: 'req_1', method: 'GET', route: '/v1/items/:id', path, status: 200, startedMs: 10, endedMs: 10.123, project: 'proj_"a' });
    log({ requestId: 'req_2', method: 'POST', route: '(unmatched)', path: '/nope', status: 404, startedMs: 5, endedMs: 6, project: undefined });
    const t = performance.now();
    log({ requestId: 'req_3', method: 'G"ET', route: '/r', path: '/p', status: 200, startedMs: t - 1234.5678, endedMs: t, project: undefined });
    // A path that is its route (every route without parameters) is copied with the route's bytes.
    for (const route of ['/v1/project', '/v1/project', '/v1/"q\\\\\u00e9']) log({ requestId: 'req_4.a:b-C', method: 'GET', route, path: route, status: 200, startedMs: 1, endedMs: 1.05, project: 'p' });
    log({ requestId: 'req_5', method: 'GET', route: '/v1/project', path: '/v1/project/', status: 499, startedMs: 1, endedMs: 1, project: 'p' });
    log({ requestId: 'req_0af7651916cd43dd8448eb211c80319c', traceId: null, method: 'GET', route: '/v1/project', path: '/v1/project', status: 200, startedMs: 1, endedMs: 2, project: 'p' });
    log({ requestId: 'req_6', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', method: 'GET', route: '/v1/items/:id', path: '/v1/items/x', status: 200, startedMs: 1, endedMs: 2, project: 'p' });
    process.stderr.write(String(Date.now()));
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.equal(lines.length, 12);
  // A trace the request started is its request id's hex; another is written as given.
  assert.equal(lines[10]!.trace_id, '0af7651916cd43dd8448eb211c80319c');
  assert.equal(lines[11]!.trace_id, '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.deepEqual(Object.keys(lines[11]!), [
    'level',
    'time',
    'service',
    'requestId',
    'trace_id',
    'method',
    'route',
    'path',
    'status',
    'ms',
    'project',
    'msg',
  ]);
  lines.splice(10);
  assert.deepEqual(
    lines.map((l) => l.path),
    [
      '/v1/project',
      '/v1/x"y\\z',
      '/v1/caf\u00e9/\u2028',
      '/v1/project',
      '/nope',
      '/p',
      '/v1/project',
      '/v1/project',
      '/v1/"q\\\u00e9',
      '/v1/project/',
    ],
  );
  assert.deepEqual(
    lines.map((l) => l.route),
    [
      '/v1/items/:id',
      '/v1/items/:id',
      '/v1/items/:id',
      '/v1/items/:id',
      '(unmatched)',
      '/r',
      '/v1/project',
      '/v1/project',
      '/v1/"q\\\u00e9',
      '/v1/project',
    ],
  );
  assert.deepEqual(
    lines.map((l) => l.requestId),
    ['req_1', 'req_1', 'req_1', 'req_1', 'req_2', 'req_3', 'req_4.a:b-C', 'req_4.a:b-C', 'req_4.a:b-C', 'req_5'],
  );
  assert.deepEqual(
    lines.map((l) => l.ms),
    [0.12, 0.12, 0.12, 0.12, 1, 1234.57, 0.05, 0.05, 0.05, 0],
  );
  assert.deepEqual(
    lines.map((l) => l.status),
    [200, 200, 200, 200, 404, 200, 200, 200, 200, 499],
  );
  // The time is the wall clock when the request was answered, in milliseconds, like pino's own lines.
  const wall = Number(r.stderr);
  assert.ok(Math.abs((lines[5]!.time as number) - wall) < 1000, `time ${lines[5]!.time} vs Date.now() ${wall}`);
  assert.equal(lines[5]!.method, 'G"ET');
  assert.equal(lines[0]!.route, '/v1/items/:id');
  assert.equal(lines[3]!.project, 'proj_"a');
  assert.equal(lines[4]!.project, undefined);
  assert.equal(lines[4]!.status, 404);
  assert.equal(lines[0]!.msg, 'request');
});
