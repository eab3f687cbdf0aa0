// The one place that imports uWebSockets.js. The npm build we can install (@trufflesuite/uws-js-unofficial)
// silently falls back to a pure-JS server when its binary does not load; we load the binary directly so
// that a missing native build stops the service instead of quietly running slow.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type * as UwsTypes from '@trufflesuite/uws-js-unofficial';

const require = createRequire(import.meta.url);

function loadNative(): typeof UwsTypes {
  const pkgDir = dirname(require.resolve('@trufflesuite/uws-js-unofficial/package.json'));
  const file = join(pkgDir, 'binaries', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  try {
    return require(file) as typeof UwsTypes;
  } catch (e) {
    throw new Error(
      `uWebSockets.js has no native build for this platform (${file}); refusing to run on a JS fallback: ${(e as Error).message}`,
    );
  }
}

export const uws = loadNative();
export type HttpResponse = UwsTypes.HttpResponse;
export type HttpRequest = UwsTypes.HttpRequest;
export type TemplatedApp = UwsTypes.TemplatedApp;
export type ListenSocket = UwsTypes.us_listen_socket;
