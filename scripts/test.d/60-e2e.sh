#!/usr/bin/env bash
# The web console end to end: headless Debian Chromium (playwright-core) against a real server.
set -uo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
source scripts/lib/test-tree.sh
source scripts/lib/node-tests.sh
ensure_test_tree || exit 1
mkdir -p .tmp
run_node_tests .tmp/test-e2e.tap 1 $(compiled $(find test/e2e -name '*.test.ts' | sort))
