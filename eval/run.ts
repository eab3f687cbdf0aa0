// `npm run eval -- <task>`: quality numbers over SIGHTFLOW_EVAL_DIR (default ../shared/eval).
import { fileURLToPath } from 'node:url';
import { runSuite } from '../scripts/suite-runner.js';

await runSuite(fileURLToPath(new URL('./tasks', import.meta.url)), 'npm run eval -- <task>');
