#!/usr/bin/env bash
# Sets up everything sightflow needs on a fresh Debian/Ubuntu machine (root or sudo): system packages,
# npm packages, the native addon, the TypeScript build and the built-in models. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
export SIGHTFLOW_ROOT="$PWD"
for part in scripts/setup.d/*.sh; do
  echo "== setup: ${part##*/}"
  bash "$part"
done
