#!/usr/bin/env bash
# Native core tests: the doctest suites (native/test/*.cc) under AddressSanitizer + UndefinedBehaviorSanitizer,
# then the decoder fuzz test under the sanitizers. The optimised build of the same code is the addon that
# setup builds and every Node test runs; a second, Release build of the same doctest suites here ran the same
# tests again and cost CI over a minute of compiling (native/build-release is still what
# CMakeLists.txt documents for working on the native code by hand). The build tree lives in native/build-asan
# (git-ignored, reused between runs).
# With --build-only it builds and stops (CI builds it beside its fresh-root check, before the suite).
set -euo pipefail
cd "$(dirname "$0")/../.."
jobs="$(nproc 2>/dev/null || echo 2)"
status=0

# RelWithDebInfo: sanitizer reports with line numbers at near-release speed.
cmake -S . -B native/build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIGHTFLOW_SANITIZE=ON >/dev/null
cmake --build native/build-asan -j "$jobs"
[ "${1:-}" = --build-only ] && exit 0
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir native/build-asan -LE fuzz -j "$jobs" --output-on-failure || status=1

# >= 300 mutated videos under the sanitizers; bounded in count and time (see native/test/decode_fuzz.cc).
log="$(mktemp)"
if SIGHTFLOW_FUZZ_COUNT="${SIGHTFLOW_FUZZ_COUNT:-1500}" SIGHTFLOW_FUZZ_SECONDS="${SIGHTFLOW_FUZZ_SECONDS:-100}" \
  ctest --test-dir native/build-asan -L fuzz --output-on-failure -V >"$log" 2>&1; then
  grep -E 'fuzz: ' "$log" || true
  echo "native fuzz: passed"
else
  tail -n 60 "$log"
  echo "native fuzz: FAILED"
  status=1
fi
rm -f "$log"
exit $status
