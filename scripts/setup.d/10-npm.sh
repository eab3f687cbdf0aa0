#!/usr/bin/env bash
# The npm packages from the lockfile (npm ci also builds the addon through binding.gyp, against local Node
# headers), and for the test setup the benchmark peers' own package.
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
source scripts/lib/node.sh

# onnxruntime-node's postinstall would download its CUDA provider from outside the npm registry; the CPU
# build ships in the package. A GPU server asks for it (ONNXRUNTIME_NODE_INSTALL=cuda12: docs/operations.md,
# "On a GPU server").
export ONNXRUNTIME_NODE_INSTALL="${ONNXRUNTIME_NODE_INSTALL:-skip}"
# node-gyp (run by npm ci for binding.gyp) builds against the local headers, never downloaded ones.
npm_config_nodedir="$(node_headers_dir)"
export npm_config_nodedir
# ...with a compiler per core (node-gyp reads JOBS; npm ci's rebuild runs make serially otherwise): the
# addon's 16 files took 27 s instead of 43 on two cores.
JOBS="$(nproc 2>/dev/null || echo 2)"
export JOBS
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  flock /tmp/npm.lock npm ci --no-audit --no-fund
fi
# Benchmark peers (Fastify, hnswlib-node ...) live in their own package, never in sightflow's.
if [ "${SIGHTFLOW_SETUP:-test}" = test ]; then
  if [ ! -f bench/node_modules/.package-lock.json ] || [ bench/package-lock.json -nt bench/node_modules/.package-lock.json ]; then
    (cd bench && flock /tmp/npm.lock npm ci --no-audit --no-fund)
  fi
fi
