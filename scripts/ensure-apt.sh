#!/usr/bin/env bash
# Installs Debian packages when a command they provide is missing (root with apt-get only);
# otherwise says what is left out. Fails under CI (`CI` set), where the tests that need the
# command would otherwise be skipped; elsewhere it never fails. COMMAND may be a file path
# (a data package): then the file must exist.
#   scripts/ensure-apt.sh COMMAND PACKAGE... -- WHAT_USES_IT
cmd=$1; shift
pkgs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do pkgs+=("$1"); shift; done
shift || true
why=${*:-the tests}
if command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/games/$cmd" ] || [ -x "/usr/sbin/$cmd" ]; then
  exit 0
fi
case $cmd in
  /*) [ -e "$cmd" ] && exit 0 ;;
esac
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "installing ${pkgs[*]} (apt-get) for $why" >&2
  if [ ! -e /tmp/.ensure-apt-updated ]; then
    apt-get update -qq >/dev/null 2>&1 && touch /tmp/.ensure-apt-updated
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1 \
    || { echo "warning: could not install ${pkgs[*]}; $why will go without it" >&2; failed=1; }
else
  echo "warning: $cmd missing and apt-get unavailable (or not root); $why will go without it" >&2
  failed=1
fi
if [ -n "${failed:-}" ] && [ -n "${CI:-}" ]; then
  echo "error: under CI every test must run: $cmd is needed by $why" >&2
  exit 1
fi
exit 0
