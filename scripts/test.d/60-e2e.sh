#!/usr/bin/env bash
# The web console end to end: headless Debian Chromium (playwright-core) against a real server.
set -uo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"
source scripts/lib/test-tree.sh
ensure_test_tree || exit 1
mkdir -p .tmp
node --enable-source-maps --test --test-concurrency=1 $(compiled $(find test/e2e -name '*.test.ts' | sort)) 2>&1 | tee .tmp/test-e2e.tap | grep -E '^(not ok|# (tests|pass|fail|skipped))'
exit "${PIPESTATUS[0]}"
