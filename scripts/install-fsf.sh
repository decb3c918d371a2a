#!/usr/bin/env bash
# Installs Debian's fairy-stockfish when it is missing (root with apt-get only): the external
# engine of the tests' cross-checks and of the default run's evaluation anchor. Never fails.
if command -v fairy-stockfish >/dev/null 2>&1 || [ -x /usr/games/fairy-stockfish ]; then
  exit 0
fi
if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "installing fairy-stockfish (apt-get)" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fairy-stockfish >/dev/null) \
    || echo "warning: could not install fairy-stockfish; it is left out where it is used" >&2
else
  echo "warning: fairy-stockfish missing and apt-get unavailable; it is left out where it is used" >&2
fi
exit 0
