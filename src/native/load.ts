// The only file that loads the native addon (build/Release/sightflow.node, built by node-gyp at setup), and the
// addon's one error convention. The typed faces of the addon sit beside it, one per part of native/core
// (decode.ts, gpu.ts, track.ts, image.ts, vectors.ts); nothing else in src/ calls the addon. Two builds exist
// (binding.gyp): sightflow.node, and sightflow_novideo.node without FFmpeg (no decoder: addonFeatures says so).
//
// Errors: whatever the addon raises is an Error (a TypeError or RangeError for a bad argument) with a stable
// `code`, ERR_SIGHTFLOW_<AREA>_<REASON>. AREA is DECODE, GPU, IMAGE, TRACK or VECTORS. REASON is INVALID_ARG for a
// bad argument or option (message "Expected <type> <constraint> for <name> but received <value>"), the
// decoder's own reason for its failures (ERR_SIGHTFLOW_DECODE_TIMEOUT, ..._INPUT_NOT_FOUND), or FAILED with
// the core's message. The faces check their inputs first and throw the catalogue's invalid_parameter error
// (src/base/errors.ts) in the same words, so INVALID_ARG only comes from a call that went around them. A feature
// that shows native failures to clients maps the codes to client codes itself (src/video/source/decoder.ts).
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { projectRoot } from '../base/paths.js';

let cached: unknown;
let addonPath = resolve(projectRoot, 'build/Release/sightflow.node');
let loadedFrom: string | undefined;

/**
 * Makes loadAddon load another build (the configuration's SIGHTFLOW_ADDON_PATH; the server calls this at
 * start). A process loads one addon: asking for another file once one is loaded is an error.
 */
export function useAddonPath(path: string): void {
  const p = resolve(path);
  if (loadedFrom !== undefined && loadedFrom !== p)
    throw new Error(`sightflow native addon already loaded from ${loadedFrom}; cannot switch to ${p}`);
  addonPath = p;
}

/** Loads the addon once; throws a clear message when it has not been built. `T` is the slice a face calls. */
export function loadAddon<T>(): T {
  if (cached === undefined) {
    const require = createRequire(import.meta.url);
    const path = addonPath;
    try {
      cached = require(path);
      loadedFrom = path;
    } catch (e) {
      throw new Error(
        `sightflow native addon not loadable at ${path} (run scripts/setup.sh, or just bash scripts/setup.d/20-native.sh): ${(e as Error).message}`,
      );
    }
  }
  return cached as T;
}

/** What the loaded build of the addon has (its `features` export, native/addon/addon.cc). */
export interface AddonFeatures {
  /** False for sightflow_novideo.node, the build without FFmpeg: it has no Decoder (src/native/decode.ts). */
  video: boolean;
}

/** The loaded addon's features; a build from before the export had every feature, the decoder included. */
export function addonFeatures(): AddonFeatures {
  const addon = loadAddon<{ features?: Partial<AddonFeatures>; Decoder?: unknown }>();
  return { video: addon.features?.video ?? typeof addon.Decoder === 'function' };
}

export type NativeArea = 'DECODE' | 'GPU' | 'IMAGE' | 'TRACK' | 'VECTORS';

/** An error raised by the addon (see the convention above). */
export interface NativeError extends Error {
  code: string;
}

/** True for an error the addon raised, optionally only those of one area. */
export function isNativeError(e: unknown, area?: NativeArea): e is NativeError {
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith(area ? `ERR_SIGHTFLOW_${area}_` : 'ERR_SIGHTFLOW_');
}

/**
 * Awaits an asynchronous addon call whose errors are made in a libuv callback (their stack has no JS frames)
 * and gives a rejection a stack that leads to the caller. With `caller`, an Error made before the call, that
 * stack is its. Without it the stack is made when the call fails, from the async functions awaiting this one
 * (V8's async stack traces), so a call that succeeds makes no Error: capturing a stack before every call was a
 * measurable part of the per-image time of the thread that owns the models (docs/capacity.md, "Front
 * processes"). That chain is only the callers that `await` (not those that chain `.then`), so calls made per
 * image or per frame, whose callers await, leave `caller` out; a call made once per video keeps it.
 */
export async function withCallerStack<T>(call: Promise<T>, caller?: Error): Promise<T> {
  try {
    return await call;
  } catch (e) {
    if (e instanceof Error) {
      const stack = (caller ?? new Error()).stack ?? '';
      e.stack = `${e.name}: ${e.message}\n${stack.split('\n').slice(1).join('\n')}`;
    }
    throw e;
  }
}
