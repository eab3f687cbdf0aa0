#!/usr/bin/env bash
# Node check, PostgreSQL (for the test harness and scale-out), and the npm packages from the lockfile.
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
source scripts/lib/apt.sh

if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' 2>/dev/null; then
  echo "sightflow needs Node.js >= 20 (found: $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi
apt_install ca-certificates postgresql util-linux procps wrk
# onnxruntime-node's postinstall would download CUDA files; the CPU build ships in the package.
export ONNXRUNTIME_NODE_INSTALL=skip
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  flock /tmp/npm.lock npm ci --no-audit --no-fund
fi
# Benchmark peers (Fastify, autocannon, hnswlib-node ...) live in their own package, never in sightflow's.
if [ ! -d bench/node_modules ] || [ bench/package-lock.json -nt bench/node_modules/.package-lock.json ]; then
  (cd bench && flock /tmp/npm.lock npm ci --no-audit --no-fund)
fi
