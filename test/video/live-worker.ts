// Spawned by the video-resume-*.both-db.test.ts and index-on-worker tests (kept beside them): a video worker
// process exactly as `sightflow worker` builds it (openServices + workerModules with the default providers,
// configured from the environment), so a live task runs through the real LocalProvider, models and native
// decoder. Prints the "sightflow worker running" log line once it claims tasks.
// Usage: node --import tsx live-worker.ts
import { runWorker } from '../helpers/worker-process.js';

await runWorker();
