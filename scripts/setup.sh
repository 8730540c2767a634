#!/usr/bin/env bash
# Set up a development environment in .venv: Python >= 3.11, the moonpool package
# (editable) and its dependencies; with --dev also the test and code-generation
# tools. Idempotent: does nothing when pyproject.toml has not changed since the
# last successful setup.
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
[ "${1:-}" = "--dev" ] && extras="[dev]"

find_python() {
  for py in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
    [ -n "$py" ] || continue
    if command -v "$py" >/dev/null 2>&1 &&
       "$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' 2>/dev/null; then
      echo "$py"; return 0
    fi
  done
  return 1
}

if [ ! -x .venv/bin/python ]; then
  py=$(find_python) || { echo "error: moonpool needs Python >= 3.11 (set PYTHON=/path/to/python3.11)" >&2; exit 2; }
  echo "setup: creating .venv with $("$py" --version)" >&2
  "$py" -m venv .venv || { echo "error: '$py -m venv' failed; install the venv module (Debian: apt-get install python3-venv)" >&2; exit 2; }
fi

stamp=".venv/.moonpool-setup${extras}"
want=$(cat pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "setup: installing moonpool${extras} and its dependencies into .venv" >&2
  .venv/bin/python -m pip install --quiet --upgrade pip >&2
  # setuptools prints a "!!" warning block on every editable install (its meta path
  # finder, harmless here: the package folders are mapped explicitly); leave it out,
  # keep everything else pip says (pipefail keeps pip's exit status).
  .venv/bin/python -m pip install --quiet -e ".${extras}" 2>&1 \
    | awk '/BuildBackendWarning: Editable installation/ {skip = 1}
           !skip {print}
           skip && /with strategy, WheelFile/ {skip = 0}' >&2
  echo "$want" > "$stamp"
fi
# The FMUs moonpool ships (fmus/build/*.fmu), rebuilt only when their sources change.
if [ -x scripts/build-fmus.sh ]; then scripts/build-fmus.sh >&2; fi
# The C loops (components/world/embree_packets.c: the ray engine's packets;
# components/localization/pool_trace.c: the pool camera's pixels), compiled once per
# source version; done here so that no test or run pays for it.
.venv/bin/python -m moonpool.components.world.native >&2
.venv/bin/python -m moonpool.components.localization.pool_loops >&2
