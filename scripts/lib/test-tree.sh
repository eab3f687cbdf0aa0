# Sourced by scripts/test.sh and its test.d parts, from the project root: the suite runs its TypeScript compiled
# once into a tree of JavaScript (scripts/test-tree.ts says why and how), not through tsx in every process.
# ensure_test_tree builds it unless this suite run already has (scripts/test.sh builds it first and exports
# SIGHTFLOW_TEST_TREE), so a part run on its own builds its own; compiled FILE... prints the tree's file for
# each source path (test/a.test.ts -> $SIGHTFLOW_TEST_TREE/test/a.test.js). Source maps are on so that a
# failure's stack names the .ts lines (measured: no cost to speak of).
ensure_test_tree() {
  if [ -z "${SIGHTFLOW_TEST_TREE:-}" ] || [ ! -d "$SIGHTFLOW_TEST_TREE" ]; then
    export SIGHTFLOW_TEST_TREE="${SIGHTFLOW_TEST_TREE:-$PWD/.tmp/js}"
    node --import tsx scripts/test-tree.ts "$SIGHTFLOW_TEST_TREE"
  fi
}

compiled() {
  local f
  for f in "$@"; do printf '%s\n' "$SIGHTFLOW_TEST_TREE/${f%.ts}.js"; done
}
