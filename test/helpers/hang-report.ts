// Loaded into every test process of the suite (node --import, scripts/lib/node-tests.sh): when a test runs far
// longer than any test should, or the process stays alive after its last test (something it opened still
// holds the event loop), it says so on stderr, which the test runner puts into the TAP output beside the
// file's result. The runner's per-file limit then fails the file by name; this says which test and what was
// still open. Both timers are unref'd: they never keep a process alive themselves.
import { isMainThread } from 'node:worker_threads';

// Worker threads (the inference workers) inherit the preload; only the test process's own thread watches.
if (isMainThread) await watch();

async function watch(): Promise<void> {
  const { after, afterEach, beforeEach } = await import('node:test');
  const slowMs = Number(process.env.SIGHTFLOW_TEST_SLOW_REPORT_S ?? 120) * 1000;
  const lingerMs = 30_000;
  const running = new Map<object, { name: string; since: number; told: boolean }>();
  const report = (what: string) => {
    process.stderr.write(
      `hang report (pid ${process.pid}): ${what}; open: ${JSON.stringify(process.getActiveResourcesInfo())}\n`,
    );
  };
  beforeEach((t) => {
    running.set(t, { name: t.name, since: Date.now(), told: false });
  });
  afterEach((t) => {
    running.delete(t);
  });
  setInterval(() => {
    const now = Date.now();
    for (const r of running.values()) {
      if (r.told || now - r.since < slowMs) continue;
      r.told = true;
      report(`test "${r.name}" still running after ${Math.round((now - r.since) / 1000)} s`);
    }
  }, 5000).unref();
  after(() => {
    setTimeout(() => report(`process still alive ${lingerMs / 1000} s after its last test`), lingerMs).unref();
  });
}
