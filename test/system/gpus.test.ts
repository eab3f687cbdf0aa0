// GET /admin/v1/gpus: this node's NVIDIA cards through the admin API, on a host without a driver (CI) and with
// SIGHTFLOW_NVML_LIBRARY naming a stand-in for the driver's library (test/helpers/nvml-stub.c); the admin
// token guards it like the rest of /admin/v1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, api, startTestApp } from '../helpers/app.js';
import { buildNvmlStub } from '../helpers/nvml-stub.js';

test('no driver: 200 with an empty list, not available and why; 401 without the admin token', async (t) => {
  const app = await startTestApp({ SIGHTFLOW_NVML_LIBRARY: '/nonexistent/libnvidia-ml.so.1' });
  t.after(() => app.close());
  const r = await admin(app, '/admin/v1/gpus');
  assert.equal(r.status, 200);
  const body = r.body;
  assert.equal(body.object, 'list');
  assert.deepEqual(body.data, []);
  assert.equal(body.available, false);
  assert.match(body.reason, /\/nonexistent\/libnvidia-ml\.so\.1: cannot open shared object file/);
  assert.equal(body.driver_version, null);
  // A project's key is no admin token.
  const refused = await api(app, '/admin/v1/gpus');
  assert.equal(refused.status, 401);
  assert.equal(refused.body.error.type, 'authentication_error');
});

test('two cards: each with its readings; a reading a card lacks is absent', async (t) => {
  const stub = buildNvmlStub();
  const app = await startTestApp({ SIGHTFLOW_NVML_LIBRARY: stub.library });
  t.after(async () => {
    await app.close();
    stub.remove();
  });
  const body = (await admin(app, '/admin/v1/gpus')).body;
  assert.deepEqual(body, {
    object: 'list',
    data: [
      {
        object: 'gpu',
        index: 0,
        uuid: 'GPU-00000000-0000-0000-0000-000000000000',
        name: 'Stub GPU 0',
        utilization: 0.37,
        memory_used_bytes: 2 ** 30,
        memory_total_bytes: 80 * 2 ** 30,
        decoder_utilization: 0.12,
        power_watts: 123.456,
        temperature_celsius: 41,
      },
      {
        object: 'gpu',
        index: 1,
        uuid: 'GPU-00000000-0000-0000-0000-000000000001',
        name: 'Stub GPU 1',
        utilization: 0.9,
        memory_used_bytes: 2 * 2 ** 30,
        memory_total_bytes: 80 * 2 ** 30,
        temperature_celsius: 42,
      },
    ],
    available: true,
    reason: null,
    driver_version: '580.95.05',
  });
});
