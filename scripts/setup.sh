#!/usr/bin/env bash
# Sets up everything sightflow needs on a fresh Debian/Ubuntu machine (root or sudo): system packages first,
# then npm packages, the native addon, the built-in models and the TypeScript build. Idempotent.
#   scripts/setup.sh serve   what running the service needs
#   scripts/setup.sh test    that, plus the test harness, benchmark peers and browser (the default)
set -euo pipefail
cd "$(dirname "$0")/.."
export SIGHTFLOW_ROOT="$PWD"
export SIGHTFLOW_SETUP="${1:-test}"
case "$SIGHTFLOW_SETUP" in serve|test) ;; *) echo "usage: scripts/setup.sh [serve|test]" >&2; exit 2 ;; esac
for part in scripts/setup.d/*.sh; do
  echo "== setup: ${part##*/}"
  t0=$SECONDS
  bash "$part"
  echo "== setup: ${part##*/} took $((SECONDS - t0)) s"
done
