// The reaper tests' harness: a video app whose own reaper waits an hour, so only the test's reaper passes
// move tasks, with the queue and archive a test plays silent "workers" with directly, and a short lease
// that `expire` waits out.
import { after, before } from 'node:test';
import type { TestApp } from './app.js';
import { startVideoApp } from './video-tasks.js';
import { TaskQueue } from '../../src/video/worker/queue.js';
import { StreamArchive } from '../../src/video/stream/stream-archive.js';
import { hubFor } from '../../src/video/stream/stream-hub.js';
import { Reaper } from '../../src/video/tasks/reaper.js';

export interface ReaperHarness {
  t: TestApp;
  queue: TaskQueue;
  archive: StreamArchive;
  reaper: Reaper;
}

/** The lease a test's claims and appends take (milliseconds). */
export const LEASE = 150;
/** Waits until a lease of LEASE taken now has expired. */
export const expire = () => new Promise((r) => setTimeout(r, LEASE + 100));

export async function startReaperHarness(): Promise<ReaperHarness> {
  const t = await startVideoApp({ SIGHTFLOW_VIDEO_REAPER_MS: '3600000' });
  const archive = new StreamArchive(t.app.services, hubFor(t.app.services));
  return {
    t,
    queue: new TaskQueue(t.app.services),
    archive,
    reaper: new Reaper(t.app.services, archive, 60_000),
  };
}

/** The harness for one test file: started before its tests, closed after them (its fields are set by then). */
export function useReaperHarness(): ReaperHarness {
  const h = {} as ReaperHarness;
  before(async () => {
    Object.assign(h, await startReaperHarness());
  });
  after(async () => {
    await h.t?.close();
  });
  return h;
}
