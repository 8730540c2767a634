"""The pool-localization subcommands of ``moonpool`` (registered as entry points in the
group ``moonpool.commands``; see ``moonpool.components.sdk.commands``)::

    moonpool localize DATASET [--method refraction|pinhole|both] [--json OUT] [--csv PATH]
    moonpool dataset pool OUT --locations N --images-per-location K [--seed S] [--set K=V]...
                          [--setup FILE] [--ideal]
    moonpool calibrate intrinsics IMAGES... --board checkerboard|charuco --cols N --rows M
                          --square-m S [--marker-m S] [--dictionary NAME] [--out setup.json]
    moonpool calibrate water SETUP FOLDER [--out setup.json]

Exit codes: 0 success, 1 a computation that failed, 2 bad input. docs/localization.md
describes the workflow.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..sdk.commands import Command, CommandGroup
from ..sdk.errors import ParameterError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def _progress(show: bool):
    def progress(k: int, n: int) -> None:
        if show:
            sys.stderr.write(f"\r{k}/{n} images")
            sys.stderr.flush()

    return progress


def _clear_progress(show: bool) -> None:
    if show:
        sys.stderr.write("\r" + " " * 30 + "\r")
        sys.stderr.flush()


# ------------------------------------------------------------------ localize


def _localize_arguments(lo: argparse.ArgumentParser) -> None:
    lo.add_argument("dataset", type=Path, help="folder with setup.json, manifest.jsonl, images")
    lo.add_argument("--method", choices=["refraction", "pinhole", "both"], default="both")
    lo.add_argument("--json", type=Path, metavar="OUT", dest="json_out",
                    help='write {"refraction": {"horizontal_rmse_m", "p95_m", "n"}, ...} to OUT')
    lo.add_argument("--csv", type=Path, metavar="PATH",
                    help="per-image results (default: localize-DATASETNAME.csv here)")
    lo.add_argument("--quad-decimate", type=float, default=2.0, metavar="F",
                    help="apriltag quad_decimate (default 2; 1 for small tags, slower)")


def _localize(args) -> int:
    from . import dataset

    methods = ("refraction", "pinhole") if args.method == "both" else (args.method,)
    csv_path = args.csv or Path(f"localize-{args.dataset.resolve().name}.csv")
    show = sys.stderr.isatty()
    try:
        result = dataset.evaluate_dataset(
            args.dataset, methods, csv_path,
            dataset.DetectorOptions(quad_decimate=args.quad_decimate), _progress(show))
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    _clear_progress(show)
    print(dataset.format_report(result))
    if args.json_out:
        args.json_out.write_text(json.dumps(dataset.summary_json(result), indent=2) + "\n")
        print(f"summary in {args.json_out}")
    return EXIT_OK if any(st["n"] for st in result["methods"].values()) else EXIT_FAILED


LOCALIZE = Command("localize every image of a pool dataset and score it",
                   _localize_arguments, _localize)

# ------------------------------------------------------------------ dataset pool


def _dataset_pool_arguments(dp: argparse.ArgumentParser) -> None:
    dp.add_argument("out", type=Path, help="new folder to write")
    dp.add_argument("--locations", type=int, default=170, metavar="N")
    dp.add_argument("--images-per-location", type=int, default=4, metavar="K")
    dp.add_argument("--seed", type=int, default=1, metavar="S")
    dp.add_argument("--set", action="append", default=[], metavar="K=V", dest="overrides",
                    help="change a generator option, e.g. rotation_deg=0.1 (repeatable; "
                         "see docs/localization.md)")
    dp.add_argument("--ideal", action="store_true",
                    help="no calibration error and no noise (geometry checks)")
    dp.add_argument("--setup", type=Path, metavar="FILE",
                    help="render with this setup.json (the true camera and tag layout; "
                         "default: the built-in pool rig)")


def _dataset_pool(args) -> int:
    from . import dataset

    overrides = {"locations": args.locations, "images_per_location": args.images_per_location,
                 "seed": args.seed}
    for kv in args.overrides:
        key, sep, value = kv.partition("=")
        if not sep:
            print(f"error: --set {kv!r}: expected KEY=VALUE", file=sys.stderr)
            return EXIT_BAD_INPUT
        overrides[key.strip()] = value.strip()
    show = sys.stderr.isatty()
    try:
        base = dataset.PoolDatasetConfig()
        cfg = dataset.config_from_overrides(base.ideal() if args.ideal else base, overrides)
        true = None
        if args.setup is not None:
            from .pool_setup import load_setup

            true = load_setup(args.setup)
        info = dataset.generate_pool_dataset(args.out, cfg, true_setup=true,
                                             progress=_progress(show))
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    _clear_progress(show)
    print(f"wrote {info['images']} images ({cfg.locations} locations x {cfg.images_per_location}) "
          f"to {args.out}/ in {info['seconds']:.1f} s (seed {cfg.seed})")
    return EXIT_OK


DATASET = CommandGroup("generate datasets")
DATASET_POOL = Command("render a pool localization dataset from the simulator",
                       _dataset_pool_arguments, _dataset_pool)

# ------------------------------------------------------------------ calibrate


def _intrinsics_arguments(ci: argparse.ArgumentParser) -> None:
    ci.add_argument("images", nargs="+", help="image files or folders (15-30 photos)")
    ci.add_argument("--board", choices=["checkerboard", "charuco"], required=True)
    ci.add_argument("--cols", type=int, required=True, metavar="N",
                    help="squares along the board's width (not inner corners)")
    ci.add_argument("--rows", type=int, required=True, metavar="M", help="squares along its height")
    ci.add_argument("--square-m", type=float, required=True, metavar="S",
                    help="edge of one square, m")
    ci.add_argument("--marker-m", type=float, metavar="S",
                    help="ChArUco: edge of one marker, m (default 0.75 x square)")
    ci.add_argument("--dictionary", metavar="NAME",
                    help="ChArUco: ArUco dictionary, e.g. DICT_5X5_100 (default: found from "
                         "the images)")
    ci.add_argument("--fix-k3", action="store_true", help="hold k3 at 0")
    ci.add_argument("--out", type=Path, default=Path("setup.json"), metavar="FILE",
                    help="setup.json to create or update (K, dist, image_size; default "
                         "./setup.json)")
    ci.add_argument("--json", type=Path, metavar="OUT", dest="json_out",
                    help="write the full report (per-image errors) as JSON")


def _water_arguments(cw: argparse.ArgumentParser) -> None:
    cw.add_argument("setup", type=Path, help="setup.json with K, dist and the tag layout")
    cw.add_argument("folder", type=Path, help="folder with manifest.jsonl and the images")
    cw.add_argument("--out", type=Path, metavar="FILE",
                    help="where to write the updated setup (default: SETUP itself)")
    cw.add_argument("--depth-sigma-m", type=float, default=0.002, metavar="S",
                    help="uncertainty of each image's depth, m (for the reported sigma; "
                         "default 0.002)")
    cw.add_argument("--quad-decimate", type=float, default=2.0, metavar="F",
                    help="apriltag quad_decimate (default 2; 1 for small tags)")
    cw.add_argument("--json", type=Path, metavar="OUT", dest="json_out",
                    help="write the full report (sigmas, per-image residuals) as JSON")


def _calibrate(args, which: str) -> int:
    from . import calibration as cal

    show = sys.stderr.isatty()
    progress = _progress(show)
    try:
        if which == "intrinsics":
            cal.check_output(args.out)
            board = cal.BoardSpec(args.board, args.cols, args.rows, args.square_m, args.marker_m,
                                  args.dictionary)
            res = cal.calibrate_intrinsics(cal.expand_images(args.images), board,
                                           cal.IntrinsicsOptions(fix_k3=args.fix_k3), progress)
            _clear_progress(show)
            print(cal.format_intrinsics_report(res))
            notes = cal.write_intrinsics(res, args.out)
        else:
            if args.out is not None:
                cal.check_output(args.out)
            opts = cal.WaterOptions(quad_decimate=args.quad_decimate,
                                    depth_sigma_m=args.depth_sigma_m)
            res = cal.calibrate_water(args.setup, args.folder, opts, progress)
            _clear_progress(show)
            print(cal.format_water_report(res))
            notes = cal.write_water(res, args.setup, args.out)
        if args.json_out:
            args.json_out.write_text(json.dumps(res.to_json(), indent=2) + "\n")
            notes.append(f"report in {args.json_out}")
    except ParameterError as exc:
        _clear_progress(show)
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except cal.CalibrationFailed as exc:
        _clear_progress(show)
        print(f"error: calibration failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for n in notes:
        print(n)
    return EXIT_OK


CALIBRATE = CommandGroup("calibrate: the pool camera (intrinsics, water), the vehicle's hydrodynamics (hydro)")
CALIBRATE_INTRINSICS = Command(
    "camera matrix and distortion from photos of a checkerboard or ChArUco board taken in air",
    _intrinsics_arguments, lambda args: _calibrate(args, "intrinsics"))
CALIBRATE_WATER = Command(
    "camera pose and height above the water from tag images at known depths (through "
    "refraction)", _water_arguments, lambda args: _calibrate(args, "water"))
