#!/usr/bin/env bash
# Quick start, command 2: set everything up and run the test suite.
# Extra arguments go to pytest (e.g. ./test.sh tests/unit -x).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh --dev
exec .venv/bin/python -m pytest "$@"
