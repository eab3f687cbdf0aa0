// Bad input on a JSON route: every case is a 4xx (or a timeout) in the documented shape, never a 500, and
// the server is still answering afterwards.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startTestApp, admin, api, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await startTestApp({ SIGHTFLOW_BODY_TIMEOUT_MS: '1500' });
});
after(async () => {
  await t?.close();
});

const ROUTE = '/admin/v1/projects';
const invalid = (code: string, message: string, param: string | null) => ({
  error: { type: 'invalid_request_error', code, message, param },
});

/** Raw HTTP over a socket, for bodies fetch will not send (truncated, stalled). */
function raw(request: string | Buffer, opts: { endAfterWrite?: boolean; waitMs?: number } = {}): Promise<string> {
  return new Promise((resolve) => {
    const port = Number(new URL(t.url).port);
    const sock = connect(port, '127.0.0.1');
    let data = '';
    sock.on('data', (d) => {
      data += d.toString();
    });
    sock.on('close', () => resolve(data));
    sock.on('error', () => resolve(data));
    sock.write(request, () => {
      if (opts.endAfterWrite) sock.end();
    });
    setTimeout(() => {
      sock.destroy();
      resolve(data);
    }, opts.waitMs ?? 5000).unref();
  });
}

async function stillUp(): Promise<void> {
  const r = await api(t, '/v1/project');
  assert.equal(r.status, 200, 'server must still answer');
}

test('invalid JSON -> 400 invalid_json', async () => {
  const r = await admin(t, ROUTE, {
    method: 'POST',
    body: '{"name": "x",',
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(r.status, 400);
  assert.equal(r.body.error.type, 'invalid_request_error');
  assert.equal(r.body.error.code, 'invalid_json');
  assert.equal(r.body.error.param, null);
  await stillUp();
});

test('wrong types -> 400 naming the field', async () => {
  const r = await admin(t, ROUTE, { method: 'POST', json: { name: 42 } });
  assert.equal(r.status, 400);
  assert.deepEqual(
    r.body,
    invalid('invalid_request', 'Invalid body field name: Invalid input: expected string, received number', 'name'),
  );
  const arr = await admin(t, ROUTE, { method: 'POST', json: ['name'] });
  assert.equal(arr.status, 400);
  assert.equal(arr.body.error.code, 'invalid_request');
  const empty = await admin(t, ROUTE, { method: 'POST', json: { name: '' } });
  assert.equal(empty.status, 400);
  assert.equal(empty.body.error.param, 'name');
});

test('unknown fields on a strict body -> 400', async () => {
  const r = await admin(t, ROUTE, { method: 'POST', json: { name: 'ok', extra: true } });
  assert.equal(r.status, 400);
  assert.deepEqual(r.body, invalid('invalid_request', 'Invalid body field extra: Unknown field "extra"', 'extra'));
});

test('missing body and wrong content type -> 400', async () => {
  const r = await admin(t, ROUTE, { method: 'POST' });
  assert.equal(r.status, 400);
  assert.equal(r.body.error.code, 'invalid_request');
  const ct = await admin(t, ROUTE, {
    method: 'POST',
    body: 'name=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(ct.status, 400);
  assert.deepEqual(
    ct.body,
    invalid(
      'unsupported_content_type',
      'Expected Content-Type application/json but received application/x-www-form-urlencoded',
      null,
    ),
  );
});

test('31 MB body -> 413 payload_too_large (declared and streamed)', async () => {
  const big = Buffer.alloc(31 * 1024 * 1024, 0x20);
  const r = await admin(t, ROUTE, { method: 'POST', body: big, headers: { 'content-type': 'application/json' } }).catch(
    (e) => ({ status: 0, body: String(e) }),
  );
  assert.equal(r.status, 413);
  assert.deepEqual((r as { body: unknown }).body, {
    error: {
      type: 'invalid_request_error',
      code: 'payload_too_large',
      message: 'The request body is larger than the limit of 31457280 bytes',
      param: null,
    },
  });
  // Chunked: no Content-Length, the limit is enforced while reading.
  const head = `POST ${ROUTE} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.adminToken}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  const parts: Buffer[] = [Buffer.from(head)];
  for (let i = 0; i < 32; i++) parts.push(Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n'));
  const resp = await raw(Buffer.concat(parts), { waitMs: 8000 });
  assert.match(resp, /^HTTP\/1\.1 413 /);
  await stillUp();
});

test('truncated body (client closes early) -> no response needed, server stays up', async () => {
  const body = '{"name":"trunc';
  await raw(
    `POST ${ROUTE} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.adminToken}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n${body}`,
    { endAfterWrite: true, waitMs: 1000 },
  );
  await stillUp();
  const list = await admin(t, ROUTE);
  assert.ok(
    !list.body.data.some((p: { name: string }) => p.name.startsWith('trunc')),
    'no project from a truncated body',
  );
});

test('slow body (client stalls) -> 408 request_timeout, server stays up', async () => {
  const resp = await raw(
    `POST ${ROUTE} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.adminToken}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"na`,
    { waitMs: 6000 },
  );
  assert.match(resp, /^HTTP\/1\.1 408 /);
  assert.match(resp, /"code":"request_timeout"/);
  await stillUp();
});

test('duplicate project name -> 409 conflict_error', async () => {
  assert.equal((await admin(t, ROUTE, { method: 'POST', json: { name: 'dup' } })).status, 201);
  const r = await admin(t, ROUTE, { method: 'POST', json: { name: 'dup' } });
  assert.equal(r.status, 409);
  assert.deepEqual(r.body, {
    error: {
      type: 'conflict_error',
      code: 'duplicate_project_name',
      message: 'A project named "dup" already exists',
      param: 'name',
    },
  });
});

test('bad usage query -> 400 naming the parameter', async () => {
  const r = await admin(t, `/admin/v1/projects/${t.projectId}/usage?from=yesterday`);
  assert.equal(r.status, 400);
  assert.equal(r.body.error.param, 'from');
  const u = await admin(t, `/admin/v1/projects/${t.projectId}/usage?bogus=1`);
  assert.equal(u.status, 400);
  assert.equal(u.body.error.param, 'bogus');
  const nf = await admin(t, '/admin/v1/projects/proj_nope/keys');
  assert.equal(nf.status, 404);
});
