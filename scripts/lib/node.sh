# Sourced by setup parts. node_headers_dir prints the folder whose include/node holds this Node.js's headers:
# /usr for Debian's and NodeSource's packages, the install prefix for a tarball or a version manager. node-gyp
# uses it (--nodedir) and so never downloads headers.
node_headers_dir() {
  local d
  for d in /usr "$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"; do
    [ -f "$d/include/node/node_api.h" ] && { echo "$d"; return 0; }
  done
  echo "no Node.js headers found (include/node/node_api.h under /usr or the node install prefix)" >&2
  return 1
}
