# Sourced by setup parts. Installs Debian packages that are missing, as root or via sudo, non-interactively;
# parts may run beside each other, so a lock serialises apt.
#   apt_install_groups GROUP...  every package of those groups in scripts/system-packages.txt (the one list)
#   apt_install PKG...           named packages (only for the list's own readers)
SIGHTFLOW_PACKAGE_LIST="${SIGHTFLOW_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/scripts/system-packages.txt"

apt_packages_of() {
  # Prints the packages of the given groups, one a line, comments and blank lines skipped.
  local groups=" $* "
  sed -e 's/#.*//' "$SIGHTFLOW_PACKAGE_LIST" | while read -r group pkg _; do
    [ -n "${pkg:-}" ] && [[ "$groups" == *" $group "* ]] && echo "$pkg"
  done
  return 0
}

apt_install() {
  local missing=() p
  for p in "$@"; do dpkg -s "$p" 2>/dev/null | grep -q '^Status: install ok installed' || missing+=("$p"); done
  [ "${#missing[@]}" -gt 0 ] || return 0
  local sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  echo "apt: installing ${missing[*]}"
  "${sudo_cmd[@]}" flock /tmp/apt.lock apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" flock /tmp/apt.lock apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

apt_install_groups() {
  local pkgs
  mapfile -t pkgs < <(apt_packages_of "$@")
  [ "${#pkgs[@]}" -gt 0 ] || { echo "apt: no packages for groups $* in $SIGHTFLOW_PACKAGE_LIST" >&2; return 1; }
  apt_install "${pkgs[@]}"
}
