// A shutdown that never ends leaves a process that neither serves nor exits: a supervisor waits out its own
// kill timeout, a script or test waits for ever. Past the deadline the process logs the step it was stuck in
// (a module's stop, the models, the usage flush, the database) and exits with status 1. The timer is unref'd,
// so a shutdown that finishes is never held by it.
import type { Logger } from './log.js';

/** Where a shutdown is; each step sets it before it starts. */
export interface ShutdownProgress {
  step: string;
}

/** What the steps after the HTTP drain (bounded by SIGHTFLOW_SHUTDOWN_TIMEOUT_MS itself) may take in all. */
export const SHUTDOWN_GRACE_MS = 20_000;

/** Arms the deadline; the returned function disarms it (a shutdown that finished). */
export function armShutdownDeadline(
  log: Logger,
  ms: number,
  progress: ShutdownProgress,
  exit: (code: number) => void = (c) => process.exit(c),
): () => void {
  const timer = setTimeout(() => {
    log.error({ step: progress.step, deadlineMs: ms }, 'shutdown did not finish in time; exiting');
    log.flush();
    exit(1);
  }, ms);
  timer.unref();
  return () => clearTimeout(timer);
}
