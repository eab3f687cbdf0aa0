# Sourced by the test.d parts (after test-tree.sh): every node:test run of the suite goes through run_node_tests,
# so that no test can hold the suite forever. A test file may run at most SIGHTFLOW_TEST_FILE_TIMEOUT_S
# seconds (default 600; the slowest single test takes under 20 s, a whole PGlite run about 8 minutes): past it the runner ends the file
# and reports it `not ok` by name, and the suite goes on. Each test process loads test/helpers/hang-report.ts,
# which names a test that has run for minutes and what a process still holds open after its last test.
# The filtered lines are printed as they come (grep --line-buffered), so a log cut off by an outer limit still
# shows how far the run got.

# run_node_tests TAP CONCURRENCY FILE...: the files' TAP output to TAP, failures and totals to stdout; the
# runner's exit status.
run_node_tests() {
  local tap=$1 concurrency=$2; shift 2
  local file_ms=$(( ${SIGHTFLOW_TEST_FILE_TIMEOUT_S:-600} * 1000 ))
  node --enable-source-maps --import "$SIGHTFLOW_TEST_TREE/test/helpers/hang-report.js" \
    --test --test-concurrency="$concurrency" --test-timeout="$file_ms" "$@" 2>&1 \
    | tee "$tap" | grep --line-buffered -E '^(not ok|# (hang report|tests|pass|fail|skipped))'
  return "${PIPESTATUS[0]}"
}
