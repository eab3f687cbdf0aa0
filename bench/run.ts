// `npm run bench -- <suite>`: each suite runs a peer beside sightflow in the same run and prints the ratio.
import { fileURLToPath } from 'node:url';
import { runSuite } from '../scripts/suite-runner.js';

await runSuite(fileURLToPath(new URL('./suites', import.meta.url)), 'npm run bench -- <suite>');
