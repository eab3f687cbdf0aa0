// Spawned by video-multiprocess.test.ts (kept beside it, its only user): a video worker process as
// `sightflow worker` builds it (openServices + workerModules, configured from the environment),
// except that its providers are one synthetic provider (../helpers/synthetic-provider.ts), so frames are
// deterministic and no model is needed. Prints the same "sightflow worker running" log line once it claims
// tasks. Usage: node --import tsx synthetic-worker.ts [start-ms] (start-ms delays the first frame; default 0).
import { SyntheticProvider } from '../helpers/synthetic-provider.js';
import { runWorker } from '../helpers/worker-process.js';

const synthetic = new SyntheticProvider({ startMs: Number(process.argv[2] ?? 0) || 0 });
await runWorker(() => [synthetic]);
