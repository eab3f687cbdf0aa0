// Spawned by video-multiprocess.test.ts (kept beside it, its only user): a video worker process as
// `sightflow worker` builds it (openServices + workerModules, configured from the environment),
// except that its providers are one synthetic provider (../helpers/synthetic-provider.ts), so frames are
// deterministic and no model is needed. Prints the same "sightflow worker running" log line once it claims
// tasks. Usage: node --import tsx synthetic-worker.ts [start-ms] (start-ms delays the first frame; default 0).
import { loadConfig } from '../../src/config/index.js';
import { openServices, stopServices, workerModules } from '../../src/app.js';
import { SyntheticProvider } from '../helpers/synthetic-provider.js';

const synthetic = new SyntheticProvider({ startMs: Number(process.argv[2] ?? 0) || 0 });
const services = await openServices(loadConfig(process.env));
const mods = workerModules(services, { videoProviders: () => [synthetic] });
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
