#!/usr/bin/env bash
# The web console's front end, built into console/dist, which the server serves at /console. Rebuilt only
# when a source changed.
set -euo pipefail
cd "${SIGHTFLOW_ROOT:-$(dirname "$0")/../..}"

newest_src=$(find console -path console/dist -prune -o -type f -printf '%T@\n' | sort -n | tail -1)
built=$( [ -f console/dist/index.html ] && stat -c %Y console/dist/index.html || echo 0 )
if [ "${newest_src%.*}" -ge "$built" ]; then
  npx --no-install vite build --config console/vite.config.ts
  echo "built console/dist/"
else
  echo "console/dist/ is up to date"
fi
