# Sourced by scripts/test.sh and its test.d parts, from the project root: benches and evaluations run into a
# TAP file like the node tests' own, and the counting of TAP files (passed, failed, skipped, skips by reason),
# so the main summary and the check without the evaluation data add up the same way.

# The skip reason of a test, bench or evaluation that found no evaluation data, as eval/dir.ts defines it.
eval_data_reason() {
  sed -n "s/^export const EVAL_DATA_MISSING = '\(.*\)';\$/\1/p" eval/dir.ts
}

# The skip reason of a test, bench or evaluation that found no bring-your-own model exports (eval/byo-dir.ts).
byo_models_reason() {
  sed -n "s/^export const BYO_MODELS_MISSING = '\(.*\)';\$/\1/p" eval/byo-dir.ts
}

# run_suites TAP KIND/NAME...: `npm run KIND -- NAME --quick --json` for each (eval/track on ground-truth
# detections; from the suite's compiled tree when SIGHTFLOW_TEST_TREE names it), SIGHTFLOW_SUITE_JOBS at a
# time (default 3: most quick runs wait on servers, sources that play in real time and process starts more
# than they compute; two at once took about 60% of one after the other, and three at once 230 s against 271 s
# for two, the two cores then 95% busy; quick runs assert that every part works, not how fast). One passes
# when it exits 0 and its last stdout line is a JSON object; that object being {"skipped": true, "reason": R}
# makes it skipped with reason R. Writes a TAP line per run (in the order given) and the totals to TAP;
# returns 1 when any failed. A KIND/NAME may be followed by arguments of its own, in the same word list
# ("bench/live --streams 2"): they go after --quick --json.
run_suites() {
  local tap=$1; shift
  local jobs=${SIGHTFLOW_SUITE_JOBS:-3} spec extra kind name out rc last reason i n=0 pass=0 fail=0 skipped=0 status=0 running=0
  local -a specs=("$@") lines=()
  local dir
  dir=$(mktemp -d)
  # Each run writes its output, exit status and seconds under $dir/<index>.
  _run_suite() {
    local i=$1 spec kind name t0=$SECONDS
    local -a args=(--quick --json) words
    read -r -a words <<< "$2"
    spec=${words[0]}; args+=("${words[@]:1}")
    kind=${spec%%/*}; name=${spec#*/}
    [ "$spec" = eval/track ] && args+=(--detections gt)
    if [ -n "${SIGHTFLOW_TEST_TREE:-}" ]; then
      # What `npm run KIND` runs (KIND/run.ts), from the suite's compiled tree (scripts/lib/test-tree.sh).
      timeout 600 node --enable-source-maps "$SIGHTFLOW_TEST_TREE/$kind/run.js" "$name" "${args[@]}" > "$dir/$i.out" 2>&1
    else
      timeout 600 npm run --silent "$kind" -- "$name" "${args[@]}" > "$dir/$i.out" 2>&1
    fi
    echo $? > "$dir/$i.rc"
    echo $((SECONDS - t0)) > "$dir/$i.s"
  }
  for i in "${!specs[@]}"; do
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
    _run_suite "$i" "${specs[$i]}" &
    running=$((running + 1))
  done
  wait
  for i in "${!specs[@]}"; do
    read -r spec extra <<< "${specs[$i]}"; kind=${spec%%/*}; name=${spec#*/}; n=$((n + 1))
    out=$(cat "$dir/$i.out"); rc=$(cat "$dir/$i.rc")
    echo "-- npm run $kind -- $name --quick --json${extra:+ $extra} ($(cat "$dir/$i.s") s)"
    last=$(printf '%s\n' "$out" | grep -v '^npm warn' | tail -n 1)
    if [ "$rc" -eq 0 ] && reason=$(node -e '
        const o = JSON.parse(process.argv[1]);
        if (o?.skipped === true) process.stdout.write(String(o.reason || "no reason given"));' "$last" 2>/dev/null); then
      printf '%s\n' "$out" | grep -v '^npm warn' | tail -n 3
      if [ -n "$reason" ]; then
        skipped=$((skipped + 1)); lines+=("ok $n - $kind $name # SKIP $reason")
      else
        pass=$((pass + 1)); lines+=("ok $n - $kind $name")
      fi
    else
      printf '%s\n' "$out" | tail -n 30
      echo "FAILED: $kind $name (exit $rc)"
      fail=$((fail + 1)); status=1
      lines+=("not ok $n - $kind $name (exit $rc)")
      while IFS= read -r l; do lines+=("  # $l"); done < <(printf '%s\n' "$out" | tail -n 30)
    fi
  done
  rm -rf "$dir"
  {
    printf '%s\n' "${lines[@]}"
    printf '1..%d\n# pass %d\n# fail %d\n# skipped %d\n' "$n" "$pass" "$fail" "$skipped"
  } > "$tap"
  return $status
}

# tap_total KEY TAP...: the sum of the `# KEY N` totals (pass, fail, skipped).
tap_total() {
  local key=$1; shift
  cat "$@" 2>/dev/null | grep -E "^# $key [0-9]+" | awk '{s += $3} END {print s + 0}'
}

# tap_skip_reasons TAP...: "N<TAB>reason" for every reason a test was skipped for, most first.
tap_skip_reasons() {
  cat "$@" 2>/dev/null | grep -E '^[[:space:]]*ok [0-9]+ - .* # SKIP' | sed -E 's/.* # SKIP ?//; s/^$/(no reason given)/' |
    sort | uniq -c | sort -k1,1nr | sed -E 's/^ *([0-9]+) /\1\t/'
}

# tap_skipped_for REASON TAP...: how many were skipped with exactly REASON.
tap_skipped_for() {
  local want=$1; shift
  tap_skip_reasons "$@" | awk -F '\t' -v want="$want" '$2 == want {s += $1} END {print s + 0}'
}

# tap_summary TAP...: the summary line, then one line per skip reason.
tap_summary() {
  echo "tests: $(tap_total pass "$@") passed, $(tap_total fail "$@") failed, $(tap_total skipped "$@") skipped"
  tap_skip_reasons "$@" | while IFS=$'\t' read -r count reason; do echo "skipped $count: $reason"; done
}
