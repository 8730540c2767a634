#!/usr/bin/env bash
# Build the FMUs moonpool ships into fmus/build/ (hydrodynamics-fmi3.fmu,
# hydrodynamics-fmi2.fmu) with the machine's C compiler. Incremental: does nothing
# when the FMUs are newer than their sources. Options: --force, --cc CC.
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
[ -x "$py" ] || py=python3
exec "$py" fmus/build_fmus.py "$@"
