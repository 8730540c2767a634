"""``moonpool calibrate thrusters``: fit each thruster's thrust-curve coefficients from
bollard-pull CSVs (docs/calibration-hydro.md (thrusters)).

Call order: ``CALIBRATE_THRUSTERS.add_arguments(parser)``, then
``CALIBRATE_THRUSTERS.run(args)`` → ``calibration.calibrate`` → report on stdout →
``calibration.write_profile`` to --out. Exit 0 done, 1 a fit that failed, 2 bad input
(message names the file and the fix).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..sdk import tomlfile
from ..sdk.commands import Command, run_fit
from ..sdk.errors import ParameterError
from . import calibration as cal


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("bollard", nargs="+", type=Path, metavar="BOLLARD.csv",
                   help="bollard-pull measurements (CSV: thruster, speed_radps, thrust_n)")
    p.add_argument("--profile", type=Path, required=True, metavar="P.toml",
                   help="the vehicle profile (its [[thrusters]] tables)")
    p.add_argument("--out", type=Path, required=True, metavar="FITTED.toml",
                   help="where to write the profile with the fitted coefficients")
    p.add_argument("--partial", action="store_true",
                   help="a measured thruster without forward (or reverse) samples keeps "
                        "that coefficient from the profile instead of being refused")


def _run(args: argparse.Namespace) -> int:
    return run_fit(lambda: _fit(args))


def _fit(args: argparse.Namespace) -> tuple[str, Path, str]:
    try:
        text = args.profile.read_text(encoding="utf-8")
        profile = tomlfile.loads(text)
    except (OSError, UnicodeDecodeError, tomlfile.TOMLDecodeError) as exc:
        raise ParameterError(f"{args.profile}: not a readable TOML profile ({exc})",
                             fix="give a file like "
                                 "fmus/hydrodynamics/profiles/bluerov2_heavy.toml") from exc
    try:
        cal.thrusters_from_profile(profile)
    except ParameterError as exc:
        raise ParameterError(f"{args.profile}: {exc.message}", fix=exc.fix) from None
    res = cal.calibrate(args.bollard, profile, args.partial)
    try:
        out = cal.write_profile(res, text, ", ".join(p.name for p in args.bollard))
    except ParameterError as exc:
        raise ParameterError(f"{args.profile}: {exc.message}", fix=exc.fix) from None
    return cal.format_report(res), args.out, out


CALIBRATE_THRUSTERS = Command("fit each thruster's thrust curve from bollard-pull CSVs",
                              _arguments, _run)
