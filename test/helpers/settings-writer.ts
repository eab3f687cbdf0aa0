// A child process for the settings file's lock test: sets N models' overrides in a data dir, one at a time,
// each a read-modify-write of the whole file, as a server or `sightflow models settings` does.
//   settings-writer.ts DATA_DIR PREFIX N
import { updateSettingsOverride } from '../../src/inference/settings-overrides.js';

const [dataDir, prefix, n] = process.argv.slice(2);
for (let i = 0; i < Number(n); i++) await updateSettingsOverride(dataDir!, `${prefix}${i}`, { queueDepth: i + 1 });
