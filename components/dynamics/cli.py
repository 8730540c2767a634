"""``moonpool calibrate hydro``: fit added mass and damping per axis from trial CSVs
(docs/calibration-hydro.md).

Call order: ``CALIBRATE_HYDRO.add_arguments(parser)``, then ``CALIBRATE_HYDRO.run(args)``
→ ``calibration.calibrate`` → report on stdout → ``calibration.write_profile`` to --out.
Exit 0 done, 1 a fit that failed, 2 bad input (message names the file and the fix).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..sdk.commands import Command, run_fit
from ..sdk import tomlfile
from ..sdk.errors import ParameterError
from . import calibration as cal


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("trials", nargs="+", type=Path, metavar="TRIAL.csv|TRIAL.mcap",
                   help="single-axis trials (CSV: t, tau_X..tau_N, u..r; or moonpool "
                        "recordings)")
    p.add_argument("--profile", type=Path, required=True, metavar="P.toml",
                   help="the vehicle profile (rigid-body terms, starting values)")
    p.add_argument("--out", type=Path, required=True, metavar="FITTED.toml",
                   help="where to write the fitted profile")
    p.add_argument("--holdout", type=int, default=1, metavar="N",
                   help="held-out trials per axis for the replay NRMSE (default 1)")
    p.add_argument("--wrench-topic", default=cal.WRENCH_TOPIC, metavar="TOPIC",
                   help=f"MCAP trials: the applied wrench (default {cal.WRENCH_TOPIC})")
    p.add_argument("--state-topic", default=cal.STATE_TOPIC, metavar="TOPIC",
                   help=f"MCAP trials: the body velocities (default {cal.STATE_TOPIC})")


def _run(args: argparse.Namespace) -> int:
    return run_fit(lambda: _fit(args))


def _fit(args: argparse.Namespace) -> tuple[str, Path, str]:
    try:
        text = args.profile.read_text(encoding="utf-8")
        profile = tomlfile.loads(text)["parameters"]
    except (OSError, tomlfile.TOMLDecodeError, KeyError) as exc:
        raise ParameterError(f"{args.profile}: not a readable profile with a [parameters] "
                             f"table ({exc})", fix="give a file like "
                             "fmus/hydrodynamics/profiles/bluerov2_heavy.toml") from exc
    if args.holdout < 0:
        raise ParameterError("--holdout must be >= 0", fix="give 0, 1, 2 …")
    res = cal.calibrate(args.trials, profile, args.holdout,
                        wrench_topic=args.wrench_topic, state_topic=args.state_topic)
    return cal.format_report(res), args.out, cal.write_profile(res, text, args.profile.stem)


CALIBRATE_HYDRO = Command("fit added mass and damping per axis from single-axis trials",
                          _arguments, _run)
