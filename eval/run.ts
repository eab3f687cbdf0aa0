// `npm run eval -- <task>`: quality numbers over the evaluation data (eval/dir.ts: SIGHTFLOW_EVAL_DIR, default
// ../shared/eval). A task whose data is absent says it was skipped and exits 0.
import { fileURLToPath } from 'node:url';
import { runSuite } from '../scripts/suite-runner.js';

await runSuite(fileURLToPath(new URL('./tasks', import.meta.url)), 'npm run eval -- <task>');
