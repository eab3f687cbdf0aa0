# Sourced by setup parts: apt_install PKG... installs the Debian packages that are missing, as root or via
# sudo, non-interactively. Parts may run beside each other; the lock serialises apt.
apt_install() {
  local missing=() p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ "${#missing[@]}" -gt 0 ] || return 0
  local sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  echo "apt: installing ${missing[*]}"
  "${sudo_cmd[@]}" flock /tmp/apt.lock apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" flock /tmp/apt.lock apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
