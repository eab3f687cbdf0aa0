// The failover bench's fleet (bench/suites/failover.ts): a throwaway PostgreSQL cluster, one API node in this
// process (its reaper looks often, no worker of its own) and two worker processes with a short lease, polling
// and renewing fast. It finds which worker holds a task (the lease owner names its pid), SIGKILLs it, starts a
// new one, and warms a worker by handing it a short task with the measured task's steps (so its models are
// loaded), so a takeover is timed with warm models, not a cold start.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { api, type TestApp } from '../test/helpers/app.js';
import { startCluster, stopCluster } from '../test/helpers/pg-cluster.js';
import { startVideoApp, waitFor } from '../test/helpers/video-tasks.js';
import { projectRoot } from '../src/base/paths.js';
import { sql } from './task-lease.sql.js';
import { sql as checkpointSql } from '../test/helpers/task-checkpoint.sql.js';
import { scriptArgs } from '../test/helpers/node-script.js';

/** The CLI itself (`sightflow worker`), compiled or not, as the suite runs. */
const MAIN = fileURLToPath(new URL(`../src/main${import.meta.url.endsWith('.js') ? '.js' : '.ts'}`, import.meta.url));

export interface FleetWorker {
  child: ChildProcess;
  pid: number;
  /** It ran a warm-up task to its end. */
  warm: boolean;
}

export interface FleetOptions {
  leaseMs: number;
  /**
   * What each worker process is: `sightflow worker`, or a whole node (`sightflow serve` on a port nobody asks)
   * for tasks with an index step, which needs the vectors part that `sightflow worker` does not run.
   */
  role: 'worker' | 'node';
  /** Settings every worker gets beside the fleet's own (one inference session, fixed threads). */
  workerEnv?: Record<string, string>;
}

/** Waits on two busy cores: generous, always bounded. */
export const WAIT_MS = 120_000;

export class Fleet {
  readonly workers: FleetWorker[] = [];
  private constructor(
    readonly app: TestApp,
    private readonly pg: { url: string; dir: string },
    private readonly dataDir: string,
    private readonly opts: FleetOptions,
  ) {}

  static async start(opts: FleetOptions): Promise<Fleet> {
    const pg = await startCluster();
    const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-failover-'));
    try {
      const app = await startVideoApp(
        {
          SIGHTFLOW_VIDEO_REAPER_MS: '250',
          SIGHTFLOW_VIDEO_LEASE_MS: String(opts.leaseMs),
          SIGHTFLOW_VIDEO_STREAM_POLL_MS: '50',
        },
        { dataDir, databaseUrl: pg.url },
      );
      const fleet = new Fleet(app, pg, dataDir, opts);
      await Promise.all([fleet.spawn(), fleet.spawn()]);
      return fleet;
    } catch (e) {
      stopCluster(pg.dir);
      rmSync(dataDir, { recursive: true, force: true });
      throw e;
    }
  }

  /** Starts one more worker; resolves once it claims tasks (it logs that it runs). */
  spawn(): Promise<FleetWorker> {
    const [args, ready] =
      this.opts.role === 'worker'
        ? [['worker'], '"sightflow worker running"']
        : [['serve', '--port', '0', '--host', '127.0.0.1'], '"sightflow listening"'];
    const child = spawn(process.execPath, [...scriptArgs(MAIN), ...args], {
      env: {
        ...process.env,
        DATABASE_URL: this.pg.url,
        SIGHTFLOW_DATA_DIR: this.dataDir,
        SIGHTFLOW_LOG_LEVEL: 'info',
        SIGHTFLOW_MODELS_DIR: process.env.SIGHTFLOW_MODELS_DIR ?? join(projectRoot, 'data', 'models'),
        SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true',
        SIGHTFLOW_NO_WORKER: 'false',
        SIGHTFLOW_VIDEO_LEASE_MS: String(this.opts.leaseMs),
        SIGHTFLOW_VIDEO_HEARTBEAT_MS: '250',
        SIGHTFLOW_VIDEO_POLL_MS: '100',
        SIGHTFLOW_WORKER_CONCURRENCY: '1',
        ...this.opts.workerEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const worker: FleetWorker = { child, pid: child.pid!, warm: false };
    this.workers.push(worker);
    child.on('exit', () => {
      const i = this.workers.indexOf(worker);
      if (i >= 0) this.workers.splice(i, 1);
    });
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr = (stderr + d).slice(-4000);
    });
    return new Promise((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line.includes(ready)) resolve(worker);
      });
      child.on('close', (code, signal) =>
        reject(new Error(`worker exited (${code ?? signal}) before it ran: ${stderr}`)),
      );
    });
  }

  /** The worker holding `taskId`'s lease now, or undefined while none does. */
  async holder(taskId: string): Promise<FleetWorker | undefined> {
    const [row] = await this.app.app.services.db.query<{ lease_owner: string | null }>(sql.leaseOwner, [taskId]);
    const pid = Number(row?.lease_owner?.split(':').at(-2));
    return this.workers.find((w) => w.pid === pid);
  }

  /** Frame chunks archived after the chunk of `taskId`'s stored checkpoint (a file's is of every few); null: none. */
  async behind(taskId: string): Promise<number | null> {
    const [row] = await this.app.app.services.db.query<{ behind: number | null }>(checkpointSql.behindCheckpoint, [
      taskId,
    ]);
    return row?.behind === null || row?.behind === undefined ? null : Number(row.behind);
  }

  /** SIGKILLs `w`; resolves once it is gone. */
  kill(w: FleetWorker): Promise<void> {
    const c = w.child;
    if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  }

  /**
   * Runs warm-up tasks (`body()` each) until every worker in `which` has run one (each worker takes one task at
   * a time, so a worker busy with another task leaves it to an idle one). Throws after `tries` tasks.
   */
  async warm(which: FleetWorker[], body: () => Promise<unknown>, tries = 6): Promise<void> {
    for (let n = 0; which.some((w) => !w.warm); n++) {
      if (n >= tries) throw new Error(`warm-up: ${tries} tasks did not reach every worker`);
      // As many tasks as workers could claim them at once: with one task per cold worker, idle warm workers
      // took them first often enough that a cold one could miss every round.
      const cold = which.filter((w) => !w.warm);
      const count = Math.max(cold.length, this.workers.length);
      const ids = await Promise.all(Array.from({ length: count }, async () => this.create(await body())));
      await Promise.all(
        ids.map(async (id) => {
          // Who ran it: the lease owner while it runs (a task that ended before a look counts for nobody).
          const by = await waitFor(
            `warm-up ${id} to be claimed`,
            async () => (await this.holder(id)) ?? ((await this.record(id)).finished_at ? 'ended' : undefined),
            WAIT_MS,
          );
          const done = await this.finished(id);
          if (done.status !== 'succeeded')
            throw new Error(`warm-up ${id} ${done.status}: ${JSON.stringify(done.error)}`);
          if (by !== 'ended') by.warm = true;
        }),
      );
    }
  }

  async create(body: unknown): Promise<string> {
    const r = await api(this.app, '/v1/video/process', { method: 'POST', json: body });
    if (r.status !== 202) throw new Error(`create: ${r.status} ${r.text}`);
    return r.body.id as string;
  }

  async record(id: string): Promise<any> {
    return (await api(this.app, `/v1/video/tasks/${id}`)).body;
  }

  /** The task's record once it is terminal. */
  finished(id: string, timeoutMs = WAIT_MS): Promise<any> {
    return waitFor(
      `task ${id} to end`,
      async () => {
        const r = await this.record(id);
        return ['succeeded', 'failed', 'cancelled'].includes(r.status) ? r : null;
      },
      timeoutMs,
    );
  }

  async close(): Promise<void> {
    for (const w of [...this.workers]) await this.kill(w);
    await this.app.close();
    stopCluster(this.pg.dir);
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
