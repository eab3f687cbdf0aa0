// The only file that loads the native addon (build/Release/sightflow.node, built by node-gyp at setup).
// Typed wrappers live beside the code that uses them (video/decoder.ts, video/tracker.ts, vision/image-ops.ts);
// each declares the slice of the addon it calls.
import { createRequire } from 'node:module';
import { projectRoot } from './paths.js';
import { resolve } from 'node:path';

const root = projectRoot;
let cached: unknown;

/** Loads the addon once; throws a clear message when it has not been built. */
export function loadAddon<T>(): T {
  if (cached === undefined) {
    const require = createRequire(import.meta.url);
    const path = process.env.SIGHTFLOW_ADDON_PATH ?? resolve(root, 'build/Release/sightflow.node');
    try {
      cached = require(path);
    } catch (e) {
      throw new Error(`sightflow native addon not loadable at ${path} (run scripts/setup.sh, or just bash scripts/setup.d/20-native.sh): ${(e as Error).message}`);
    }
  }
  return cached as T;
}
