#!/usr/bin/env bash
# CI's fresh-root check: the README's first command, `./quickstart serve`, on a Debian 12 root that has never
# seen this project. The root is a bare debootstrap (minbase) plus what any machine of this kind has before a
# user arrives: the host's Node.js (binary, npm, headers), resolver, CA trust and npm user settings. Setup must
# install everything else itself; a package missing from scripts/system-packages.txt fails here.
# Then: the key line and the admin-token line are printed, /readyz answers 200, detect finds a person in
# assets/astronaut.jpg, the printed admin token opens the admin API and the console. The server is stopped.
#
# Cached outside the clone (SIGHTFLOW_CI_CACHE, default /var/cache/sightflow-ci), each rebuilt from nothing
# when absent: the bare root tarball, apt's downloaded .deb files and npm's download cache. Only downloads are
# cached; every install, build and conversion runs in the new root.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$PWD"
export SIGHTFLOW_ROOT="$repo"
source scripts/lib/apt.sh
apt_install_groups ci

cache="${SIGHTFLOW_CI_CACHE:-/var/cache/sightflow-ci}"
suite=bookworm
mirror="${SIGHTFLOW_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
limit_s="${SIGHTFLOW_FRESH_ROOT_TIMEOUT:-2400}"
t0=$(date +%s)
mkdir -p "$cache/apt-archives/partial" "$cache/npm"

tarball="$cache/debian-$suite-minbase.tar"
if [ ! -f "$tarball" ]; then
  echo "fresh root: debootstrap $suite (minbase) from $mirror"
  boot="$(mktemp -d /var/tmp/sightflow-debootstrap.XXXXXX)"
  debootstrap --variant=minbase "$suite" "$boot" "$mirror" >"$boot.log" 2>&1 || { tail -n 30 "$boot.log"; exit 1; }
  tar -C "$boot" -cf "$tarball.partial" . && mv "$tarball.partial" "$tarball"
  rm -rf "$boot" "$boot.log"
fi

work="$(mktemp -d /var/tmp/sightflow-fresh-root.XXXXXX)"
root="$work/root"
log="$work/serve.log"
pgid=""
cleanup() {
  if [ -n "$pgid" ] && kill -0 -- "-$pgid" 2>/dev/null; then
    kill -KILL -- "-$pgid" 2>/dev/null || true
    sleep 1
  fi
  # The mounts live in the check's private mount namespace, gone with its processes: only plain files remain.
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$root"
tar -C "$root" -xf "$tarball"

# The host's Node.js, every file of it, at the same prefix.
node_bin="$(readlink -f "$(command -v node)")"
prefix="$(dirname "$(dirname "$node_bin")")"
node_files=()
for p in bin/node bin/npm bin/npx bin/corepack include/node lib/node_modules/npm lib/node_modules/corepack etc/npmrc; do
  [ -e "$prefix/$p" ] || [ -L "$prefix/$p" ] && node_files+=("$p")
done
mkdir -p "$root$prefix"
tar -C "$prefix" -cf - "${node_files[@]}" | tar -C "$root$prefix" -xf -
# Resolver, CA trust (the bundle, and local CAs so that installing ca-certificates keeps them), npm settings.
rm -f "$root/etc/resolv.conf"
cp -L /etc/resolv.conf "$root/etc/resolv.conf"
cp -L /etc/hosts "$root/etc/hosts"
mkdir -p "$root/etc/ssl/certs" "$root/usr/local/share/ca-certificates" "$root/root/.npm"
cp -L /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
[ -d /usr/local/share/ca-certificates ] && cp -rL /usr/local/share/ca-certificates/. "$root/usr/local/share/ca-certificates/"
for f in /etc/npmrc "$HOME/.npmrc"; do [ -f "$f" ] && cp -L "$f" "$root$f"; done

# The clone: tracked files and untracked ones git does not ignore (no build outputs, no node_modules).
mkdir -p "$root/opt/sightflow"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
  | tar --null -T - -cf - | tar -C "$root/opt/sightflow" -xf -

echo "fresh root: prepared in $(( $(date +%s) - t0 )) s; running ./quickstart serve inside it"
t1=$(date +%s)
path="$prefix/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# setsid: the whole tree (apt, npm, node-gyp, the server) is one process group to stop. unshare: the mounts
# below exist only for it. env -i: nothing of CI's environment leaks in.
setsid unshare --mount --propagation private -- bash -c '
  set -e
  root="$1"; cache="$2"; path="$3"
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount --rbind /sys "$root/sys"
  mount --bind "$cache/apt-archives" "$root/var/cache/apt/archives"
  mount --bind "$cache/npm" "$root/root/.npm"
  exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb PATH="$path" \
    bash -c "cd /opt/sightflow && exec ./quickstart serve --port 0 --host 127.0.0.1"
' fresh-root "$root" "$cache" "$path" >"$log" 2>&1 </dev/null &
pid=$!
pgid=$pid

fail() {
  echo "fresh root: FAILED: $*"
  echo "---- last lines of the fresh root's output ----"
  tail -n 60 "$log"
  exit 1
}

# Wait for the server: the key line comes after the whole setup and the first start.
port=""
while :; do
  if ! kill -0 "$pid" 2>/dev/null; then fail "./quickstart serve exited before it was ready"; fi
  if [ $(( $(date +%s) - t1 )) -gt "$limit_s" ]; then fail "not ready within ${limit_s} s"; fi
  port=$(grep -o '"port":[0-9]*,[^}]*"msg":"sightflow listening"' "$log" | head -1 | sed 's/"port":\([0-9]*\),.*/\1/' || true)
  [ -n "$port" ] && break
  sleep 2
done
setup_s=$(( $(date +%s) - t1 ))
echo "fresh root: setup parts: $(grep -E '^== setup: .* took ' "$log" | sed 's/^== setup: //' | paste -sd ',' - | sed 's/,/, /g')"
key_line=$(grep -E '^sightflow: created project "default" with API key sk_sf_' "$log" | head -1 || true)
admin_line=$(grep -E '^sightflow: console at http://[^ ]+/console, admin token sf_admin_' "$log" | head -1 || true)
[ -n "$key_line" ] || fail "no API key line printed"
[ -n "$admin_line" ] || fail "no admin token line printed"
echo "fresh root: set up and started in ${setup_s} s; port $port"
echo "  $(printf '%s' "$key_line" | sed -E 's/(sk_sf_.{4})[^ ]*/\1.../')"
echo "  $(printf '%s' "$admin_line" | sed -E 's/(sf_admin_.{4})[^ ]*/\1.../')"
key=$(printf '%s' "$key_line" | grep -o 'sk_sf_[A-Za-z0-9_-]*')
admin=$(printf '%s' "$admin_line" | grep -o 'sf_admin_[A-Za-z0-9_-]*')

node scripts/ci/fresh-root-check.mjs "http://127.0.0.1:$port" "$key" "$admin" assets/astronaut.jpg || fail "checks against the fresh root's server"

kill -TERM "$pid"
for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
kill -0 "$pid" 2>/dev/null && fail "server did not stop within 30 s of SIGTERM"
pgid=""
echo "fresh root: passed in $(( $(date +%s) - t0 )) s (setup and first start ${setup_s} s)"
