// The shutdown deadline: a step that never ends makes the process exit 1 with the step named in the log; a
// shutdown that finishes in time is not cut. And a real app's stop walks through its named steps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { armShutdownDeadline, type ShutdownProgress } from '../../src/base/shutdown-deadline.js';
import type { Logger } from '../../src/base/log.js';
import { startTestApp } from '../helpers/app.js';

function capture(): { log: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  return { log: pino({ level: 'info' }, sink), lines };
}

test('a shutdown stuck in a step exits 1 at the deadline and names the step', async () => {
  const { log, lines } = capture();
  const progress: ShutdownProgress = { step: 'closing the database' };
  // The deadline's timer never holds a process by itself; this test's stuck step has to.
  const hold = setInterval(() => {}, 1000);
  const code = await new Promise<number>((resolve) => {
    armShutdownDeadline(log, 50, progress, resolve);
  });
  clearInterval(hold);
  assert.equal(code, 1);
  const line = lines.find((l) => l.msg === 'shutdown did not finish in time; exiting');
  assert.ok(line, JSON.stringify(lines));
  assert.equal(line.step, 'closing the database');
  assert.equal(line.deadlineMs, 50);
});

test('a shutdown that finishes in time is not cut', async () => {
  const { log, lines } = capture();
  let exited: number | null = null;
  const disarm = armShutdownDeadline(log, 50, { step: 'x' }, (c) => {
    exited = c;
  });
  disarm();
  await new Promise((r) => setTimeout(r, 120));
  assert.equal(exited, null);
  assert.equal(lines.length, 0);
});

test("a real app's stop goes through its named steps, in order", async () => {
  const t = await startTestApp();
  const steps: string[] = [];
  const progress: ShutdownProgress = {
    get step() {
      return steps.at(-1) ?? '';
    },
    set step(v: string) {
      steps.push(v);
    },
  };
  await t.app.stop(progress);
  await t.close();
  const fixed = steps.filter((s) => !s.startsWith('stopping the '));
  assert.deepEqual(fixed, [
    'finishing in-flight requests',
    'closing the models',
    'writing queued usage rows',
    'closing the database',
    'closing the metrics endpoint',
    'sending the last spans',
  ]);
  assert.ok(steps.includes('stopping the video part'), steps.join(' | '));
  assert.equal(steps.indexOf('stopping the video part') < steps.indexOf('closing the models'), true);
});
