#!/usr/bin/env bash
# Native core tests: the doctest suites (native/test/*.cc) in a Release build and again under
# AddressSanitizer + UndefinedBehaviorSanitizer, then the decoder fuzz test under the sanitizers.
# Build trees live in native/build-release and native/build-asan (git-ignored, reused between runs).
set -euo pipefail
cd "$(dirname "$0")/../.."
jobs="$(nproc 2>/dev/null || echo 2)"
status=0

cmake -S . -B native/build-release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build native/build-release -j "$jobs"
ctest --test-dir native/build-release -LE fuzz --output-on-failure || status=1

# RelWithDebInfo: sanitizer reports with line numbers at near-release speed.
cmake -S . -B native/build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIGHTFLOW_SANITIZE=ON >/dev/null
cmake --build native/build-asan -j "$jobs"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir native/build-asan -LE fuzz --output-on-failure || status=1

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
