// Loaded into every test process of the suite (node --import, scripts/lib/node-tests.sh): when a test runs far
// longer than any test should, or the process stays alive after its last test (something it opened still
// holds the event loop), it says so on stderr, which the test runner puts into the TAP output beside the
// file's result. The runner's per-file limit then fails the file by name; this says which test and what was
// still open. Both timers are unref'd: they never keep a process alive themselves.
import { after, afterEach, beforeEach } from 'node:test';

const SLOW_MS = Number(process.env.SIGHTFLOW_TEST_SLOW_REPORT_S ?? 120) * 1000;
const LINGER_MS = 30_000;

const running = new Map<object, { name: string; since: number; told: boolean }>();

function report(what: string): void {
  process.stderr.write(`hang report (pid ${process.pid}): ${what}; open: ${JSON.stringify(process.getActiveResourcesInfo())}\n`);
}

beforeEach((t) => { running.set(t, { name: t.name, since: Date.now(), told: false }); });
afterEach((t) => { running.delete(t); });

setInterval(() => {
  const now = Date.now();
  for (const r of running.values()) {
    if (r.told || now - r.since < SLOW_MS) continue;
    r.told = true;
    report(`test "${r.name}" still running after ${Math.round((now - r.since) / 1000)} s`);
  }
}, 5000).unref();

after(() => {
  setTimeout(() => report(`process still alive ${LINGER_MS / 1000} s after its last test`), LINGER_MS).unref();
});
