// Spawned by video-resume.both-db.test.ts (kept beside it, its only user): a video worker process exactly as
// `sightflow worker` builds it (openServices + workerModules with the default providers, configured from the
// environment), so a live task runs through the real LocalProvider, models and native decoder. Prints the
// "sightflow worker running" log line once it claims tasks. Usage: node --import tsx live-worker.ts
import { loadConfig } from '../../src/config/index.js';
import { openServices, stopServices, workerModules } from '../../src/app.js';

const services = await openServices(loadConfig(process.env));
const mods = workerModules(services);
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
