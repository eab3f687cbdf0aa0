// The GPU readings (native/core/gpu through src/native/gpu.ts) against a host without a driver and against a
// stand-in for the driver's management library (test/helpers/nvml-stub.c): the library found or not, with
// or without its calls, a driver that fails to start and then starts, cards that lack a reading or are lost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cachedGpuStatus, gpuStatus } from '../../src/native/gpu.js';
import { loadAddon } from '../../src/native/load.js';
import { buildNvmlStub } from '../helpers/nvml-stub.js';

test('no library: not available, the loader says why, no cards', async () => {
  const s = await gpuStatus('/nonexistent/libnvidia-ml.so.1');
  assert.equal(s.available, false);
  assert.match(s.reason!, /\/nonexistent\/libnvidia-ml\.so\.1: cannot open shared object file/);
  assert.deepEqual(s.devices, []);
  // Asked again, the same answer (the failed open is kept).
  assert.deepEqual(await gpuStatus('/nonexistent/libnvidia-ml.so.1'), s);
});

test('a library without the calls is not taken for the driver', async () => {
  const s = await gpuStatus('libm.so.6');
  assert.equal(s.available, false);
  assert.match(s.reason!, /libm\.so\.6 has no nvmlInit_v2/);
});

test('two cards: every reading of card 0; card 1 without the ones it does not support', async () => {
  const stub = buildNvmlStub();
  try {
    const s = await gpuStatus(stub.library);
    assert.deepEqual(s, {
      available: true,
      driverVersion: '580.95.05',
      devices: [
        {
          index: 0,
          uuid: 'GPU-00000000-0000-0000-0000-000000000000',
          name: 'Stub GPU 0',
          utilization: 0.37,
          memoryUsedBytes: 2 ** 30,
          memoryTotalBytes: 80 * 2 ** 30,
          decoderUtilization: 0.12,
          powerWatts: 123.456,
          temperatureCelsius: 41,
        },
        {
          index: 1,
          uuid: 'GPU-00000000-0000-0000-0000-000000000001',
          name: 'Stub GPU 1',
          utilization: 0.9,
          memoryUsedBytes: 2 * 2 ** 30,
          memoryTotalBytes: 80 * 2 ** 30,
          temperatureCelsius: 42,
        },
      ],
    });
    // Each call reads the cards again.
    process.env.NVML_STUB_UTIL = '64';
    assert.equal((await gpuStatus(stub.library)).devices[0]!.utilization, 0.64);
    // A card the library cannot hand over is listed with why, and no readings.
    process.env.NVML_STUB_DEVICES = '3';
    assert.deepEqual((await gpuStatus(stub.library)).devices[2], {
      index: 2,
      uuid: '',
      name: '',
      error: 'nvmlDeviceGetHandleByIndex_v2 failed: GPU is lost',
    });
  } finally {
    delete process.env.NVML_STUB_UTIL;
    delete process.env.NVML_STUB_DEVICES;
    stub.remove();
  }
});

test('a driver that does not start says so, and is asked again on the next reading', async () => {
  const stub = buildNvmlStub();
  try {
    process.env.NVML_STUB_INIT = '9';
    const failed = await gpuStatus(stub.library);
    assert.deepEqual(failed, { available: false, reason: 'nvmlInit_v2 failed: Driver Not Loaded', devices: [] });
    process.env.NVML_STUB_INIT = '0';
    const started = await gpuStatus(stub.library);
    assert.equal(started.available, true);
    assert.equal(started.devices.length, 2);
  } finally {
    delete process.env.NVML_STUB_INIT;
    stub.remove();
  }
});

test('cachedGpuStatus reads once within its age, again after it', async () => {
  const stub = buildNvmlStub();
  try {
    const read = cachedGpuStatus(200, stub.library);
    const [first, second] = await Promise.all([read(), read()]);
    assert.equal(second, first, 'callers together share one reading');
    assert.equal(first.devices[0]!.utilization, 0.37);
    process.env.NVML_STUB_UTIL = '50';
    assert.equal((await read()).devices[0]!.utilization, 0.37);
    await new Promise((r) => setTimeout(r, 250));
    assert.equal((await read()).devices[0]!.utilization, 0.5);
  } finally {
    delete process.env.NVML_STUB_UTIL;
    stub.remove();
  }
});

test('cachedGpuStatus: a driver that hangs answers not available after the timeout, with one reading at a time', async () => {
  const stub = buildNvmlStub();
  try {
    process.env.NVML_STUB_SLOW_MS = '600';
    const read = cachedGpuStatus(0, stub.library, 150);
    const t0 = performance.now();
    const [a, b] = await Promise.all([read(), read()]);
    assert.ok(performance.now() - t0 < 500, 'the scrape did not wait for the driver');
    for (const s of [a, b])
      assert.deepEqual(s, { available: false, reason: 'the driver did not answer in 150 ms', devices: [] });
    // The reading still under way is the one the next call waits on; once it ends, its cards are the answer.
    delete process.env.NVML_STUB_SLOW_MS;
    await new Promise((r) => setTimeout(r, 600));
    const after = await read();
    assert.equal(after.available, true);
    assert.equal(after.devices.length, 2);
  } finally {
    delete process.env.NVML_STUB_SLOW_MS;
    stub.remove();
  }
});

test('bad arguments: the face answers invalid_parameter, the addon ERR_SIGHTFLOW_GPU_INVALID_ARG', async () => {
  await assert.rejects(gpuStatus(''), { code: 'invalid_parameter', param: 'library' });
  const addon = loadAddon<{ gpuStatusAsync: (library: unknown) => Promise<unknown> }>();
  assert.throws(() => addon.gpuStatusAsync(5), { name: 'TypeError', code: 'ERR_SIGHTFLOW_GPU_INVALID_ARG' });
  assert.throws(() => addon.gpuStatusAsync(''), { code: 'ERR_SIGHTFLOW_GPU_INVALID_ARG' });
});
