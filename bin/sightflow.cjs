#!/usr/bin/env node
// The `sightflow` command: sizes libuv's thread pool for the machine, then runs the CLI (the built tree's
// dist/src/main.js, or server.js beside this file in the GPU check's bundle).
//
// Why a CommonJS file in front of the ESM CLI: the image work of every request (JPEG decode, the detector's
// letterbox, colour names) runs on libuv's pool, whose size libuv reads from UV_THREADPOOL_SIZE once, when the
// pool first gets work, and it keeps its default of 4 threads after that. Loading ES modules reads their files
// on that pool, so by the time the CLI's first line runs the pool has its size. Four threads cap a GPU host's
// images per second whatever its cores (docs/capacity.md, "The image thread pool"); here, before any ES module
// loads, the pool gets one thread a core (at least libuv's 4). A UV_THREADPOOL_SIZE given by the operator is
// kept as it is.
'use strict';
const { existsSync } = require('node:fs');
const { availableParallelism } = require('node:os');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

/** libuv's own bounds for its pool. */
const DEFAULT_THREADS = 4;
const MAX_THREADS = 1024;

/** The pool size to set, or undefined to leave the operator's (or libuv's) as it is. */
function threadpoolSize(env, cores) {
  if (env.UV_THREADPOOL_SIZE !== undefined && env.UV_THREADPOOL_SIZE !== '') return undefined;
  return String(Math.min(MAX_THREADS, Math.max(DEFAULT_THREADS, Math.floor(cores) || 0)));
}

/** Sets UV_THREADPOOL_SIZE in `env` (this process's: libuv reads it) unless it is set already. */
function sizeThreadpool(env = process.env, cores = availableParallelism()) {
  const size = threadpoolSize(env, cores);
  if (size !== undefined) env.UV_THREADPOOL_SIZE = size;
  return env.UV_THREADPOOL_SIZE;
}

module.exports = { threadpoolSize, sizeThreadpool };

if (require.main === module) {
  sizeThreadpool();
  const bundled = join(__dirname, 'server.js');
  const entry = existsSync(bundled) ? bundled : join(__dirname, '..', 'dist', 'src', 'main.js');
  import(pathToFileURL(entry).href).catch((e) => {
    process.stderr.write(`sightflow: ${e && e.stack ? e.stack : e}\n`);
    process.exit(1);
  });
}
