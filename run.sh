#!/usr/bin/env bash
# Quick start, command 1: set everything up and run the default rig.
# Extra arguments go to `moonpool run` (e.g. ./run.sh --seed 3 --out runs/demo).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
# The default rig is the simulated pool lab: T1 station keeping (8 setpoints x 60 s of
# simulated time, a few minutes of wall time) closed through the overhead camera,
# the AprilTag localizer and the EKF (docs/tasks.md, docs/localization.md).
exec .venv/bin/moonpool run rigs/pool.toml "$@"
