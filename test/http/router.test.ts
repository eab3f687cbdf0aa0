import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Router } from '../../src/http/router.js';
import { defineRoute, type Method } from '../../src/http/route.js';

const route = (method: Method, path: string) =>
  defineRoute({ method, path, auth: 'none', summary: path, responses: {}, handler: async () => ({ json: {} }) });

function table(): Router {
  const r = new Router();
  for (const [m, p] of [
    ['GET', '/v1/tasks/:id'],
    ['GET', '/v1/tasks/list'],
    ['POST', '/v1/tasks'],
    ['GET', '/v1/tasks'],
    ['DELETE', '/v1/tasks/:id'],
    ['GET', '/v1/files/*'],
  ] as const)
    r.add(route(m, p));
  return r;
}

test('a literal path wins over a parameter route of the same shape, and has no params', () => {
  const m = table().match('GET', '/v1/tasks/list');
  assert.equal(m.kind, 'found');
  assert.equal(m.kind === 'found' && m.def.path, '/v1/tasks/list');
  assert.deepEqual(m.kind === 'found' && m.params, {});
});

test('parameters are decoded; a trailing or doubled slash still routes', () => {
  const m = table().match('DELETE', '/v1/tasks/a%20b');
  assert.deepEqual(m.kind === 'found' && m.params, { id: 'a b' });
  assert.equal(table().match('GET', '/v1/tasks/').kind, 'found');
  assert.equal(table().match('POST', '/v1//tasks').kind, 'found');
  const w = table().match('GET', '/v1/files/a/b%2Fc');
  assert.deepEqual(w.kind === 'found' && w.params, { '*': 'a/b/c' });
});

test('a known path with another method is 405 with the allowed methods; an unknown path is 404', () => {
  assert.deepEqual(table().match('PUT', '/v1/tasks'), { kind: 'method_not_allowed', allowed: ['POST', 'GET'] });
  assert.deepEqual(table().match('POST', '/v1/tasks/x'), { kind: 'method_not_allowed', allowed: ['GET', 'DELETE'] });
  assert.deepEqual(table().match('GET', '/v1/nothing'), { kind: 'not_found' });
});

test('a duplicate route is refused', () => {
  const r = table();
  assert.throws(() => r.add(route('GET', '/v1/tasks')), /duplicate route GET \/v1\/tasks/);
});
