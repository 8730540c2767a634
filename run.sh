#!/usr/bin/env bash
# Quick start, command 1: set everything up and run the default rig.
# Extra arguments go to `moonpool run` (e.g. ./run.sh --seed 3 --out runs/demo).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
exec .venv/bin/moonpool run rigs/quickstart.toml "$@"
