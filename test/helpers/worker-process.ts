// `sightflow worker` as a separate process, for the multi-process video tests: `spawnWorker` starts one of
// the worker scripts beside those tests on the test's database and data directory (resolving once it claims
// tasks), and `runWorker` is the scripts' own body: the worker as `sightflow worker` builds it (openServices +
// workerModules, configured from the environment), with the providers a script gives it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/index.js';
import { openServices, stopServices, workerModules } from '../../src/app.js';
import { projectRoot } from '../../src/base/paths.js';
import type { VideoProvider } from '../../src/video/task-contract.js';
import { scriptArgs } from './node-script.js';

export interface SpawnWorkerOptions {
  databaseUrl: string;
  dataDir: string;
  /** Settings beside the database, data directory, info logging and the models directory. */
  env: Record<string, string>;
  /** The script's arguments. */
  args?: string[];
  /** Called with the child as soon as it is spawned (so a test can kill it in `after` whatever happens). */
  spawned(child: ChildProcess): void;
}

/** Starts `script` (node-script.ts); resolves once it logs "sightflow worker running". */
export function spawnWorker(script: string, opts: SpawnWorkerOptions): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...scriptArgs(script), ...(opts.args ?? [])], {
      env: {
        ...process.env,
        DATABASE_URL: opts.databaseUrl,
        SIGHTFLOW_DATA_DIR: opts.dataDir,
        SIGHTFLOW_LOG_LEVEL: 'info',
        SIGHTFLOW_MODELS_DIR: process.env.SIGHTFLOW_MODELS_DIR ?? join(projectRoot, 'data', 'models'),
        ...opts.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    opts.spawned(child);
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr = (stderr + d).slice(-4000);
    });
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.includes('"sightflow worker running"')) resolve(child);
    });
    child.on('close', (code, signal) =>
      reject(new Error(`worker exited (${code ?? signal}) before it ran: ${stderr}`)),
    );
  });
}

/** The worker scripts' body: runs the worker until SIGTERM or SIGINT, then stops it cleanly and exits. */
export async function runWorker(videoProviders?: () => VideoProvider[]): Promise<void> {
  const services = await openServices(loadConfig(process.env));
  const mods = workerModules(services, videoProviders ? { videoProviders } : undefined);
  for (const m of mods) await m.start?.();
  const stop = async () => {
    await stopServices(services, mods);
    services.log.flush();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  services.log.info({ db: services.db.kind }, 'sightflow worker running');
  services.log.flush();
}
