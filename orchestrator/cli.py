"""The ``moonpool`` command.

    moonpool run RIG [--until S] [--seed N] [--out DIR] [--set K=V]... [--mode inproc|process]
                     [--realtime [FACTOR]]
    moonpool check RIG [--set K=V]... [--mode inproc|process] [--realtime [FACTOR]]
    moonpool serve ENTRY --bind ENDPOINT [--key SECRET --allow PUBLIC...] [--insecure]
    moonpool keys generate NAME [--dir DIR] [--force]
    moonpool describe ENTRY | --list
    moonpool fmu build [--force]
    moonpool localize DATASET [--method refraction|pinhole|both] [--json OUT] [--csv PATH]
    moonpool dataset pool OUT --locations N --images-per-location K [--seed S] [--set K=V]...
                          [--setup FILE] [--ideal]
    moonpool calibrate intrinsics IMAGES... --board checkerboard|charuco --cols N --rows M
                          --square-m S [--marker-m S] [--dictionary NAME] [--out setup.json]
    moonpool calibrate water SETUP FOLDER [--out setup.json]

Exit codes: 0 success, 1 a run that failed, 2 bad input (rig, flags, entry).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from datetime import datetime
from pathlib import Path

from google.protobuf import json_format

from moonpool.components.sdk.errors import EntryError, RigError, RigValidationError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 too; say how to get help
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _factor(text: str) -> float:
    """``--realtime`` value: a real-time factor (checked > 0 with the rig)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a real-time factor such as 1 or 0.5, got {text!r} (write the rig "
            "before the option: moonpool run RIG --realtime)"
        ) from None


_REALTIME_HELP = ("pace the run to the wall clock: FACTOR simulated seconds per second "
                  "(default 1; 0.5 = half speed); overrides run.realtime")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="moonpool", description="Co-simulation of underwater robots.")
    p.add_argument("--log-level", default="WARNING", help="DEBUG, INFO, WARNING (default), ERROR")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    r = sub.add_parser("run", help="run a rig")
    r.add_argument("rig", type=Path, help="rig file (TOML)")
    r.add_argument("--until", type=float, metavar="S", help="simulated seconds (overrides run.until)")
    r.add_argument("--seed", type=int, metavar="N", help="seed (overrides run.seed)")
    r.add_argument("--out", type=Path, metavar="DIR", help="output folder (default runs/RIG-TIME)")
    r.add_argument("--set", action="append", default=[], metavar="K=V", dest="overrides",
                   help="override a rig key, e.g. components.pid.parameters.kp=80 (repeatable)")
    r.add_argument("--mode", choices=["inproc", "process"],
                   help="run every component in-process or each in its own process")
    r.add_argument("--realtime", nargs="?", const=1.0, type=_factor, metavar="FACTOR",
                   help=_REALTIME_HELP)
    r.add_argument("--quiet", action="store_true", help="no progress bar and no table")

    c = sub.add_parser("check", help="validate a rig without running it; list every problem")
    c.add_argument("rig", type=Path)
    c.add_argument("--set", action="append", default=[], metavar="K=V", dest="overrides")
    c.add_argument("--mode", choices=["inproc", "process"])
    c.add_argument("--realtime", nargs="?", const=1.0, type=_factor, metavar="FACTOR",
                   help=_REALTIME_HELP)

    s = sub.add_parser("serve", help="host one component for a remote orchestrator")
    s.add_argument("entry", help="registered name, module:Class or file.py:Class")
    s.add_argument("--bind", required=True, metavar="ENDPOINT", help="e.g. tcp://*:5555")
    s.add_argument("--once", action="store_true", help="exit after one session")
    s.add_argument("--base-dir", metavar="DIR",
                   help="folder for relative file.py entries and file-path parameters "
                   "(default: the current folder)")
    from moonpool.components.sdk.serve import add_security_arguments

    add_security_arguments(s)

    k = sub.add_parser("keys", help="CURVE key pairs for components on other machines")
    ksub = k.add_subparsers(dest="keys_command", required=True, parser_class=_Parser)
    kg = ksub.add_parser("generate", help="write NAME.key (public) and NAME.key_secret (secret)")
    kg.add_argument("name", help="e.g. camera-pc or orchestrator")
    kg.add_argument("--dir", type=Path, default=Path("."), help="folder (default: here)")
    kg.add_argument("--force", action="store_true", help="replace an existing pair")

    f = sub.add_parser("fmu", help="FMU tools")
    fsub = f.add_subparsers(dest="fmu_command", required=True, parser_class=_Parser)
    fb = fsub.add_parser("build", help="(re)build the FMUs moonpool ships into fmus/build/")
    fb.add_argument("--force", action="store_true", help="rebuild even if up to date")
    fb.add_argument("--cc", help="C compiler (default: cc)")

    lo = sub.add_parser("localize", help="localize every image of a pool dataset and score it")
    lo.add_argument("dataset", type=Path, help="folder with setup.json, manifest.jsonl, images")
    lo.add_argument("--method", choices=["refraction", "pinhole", "both"], default="both")
    lo.add_argument("--json", type=Path, metavar="OUT", dest="json_out",
                    help='write {"refraction": {"horizontal_rmse_m", "p95_m", "n"}, ...} to OUT')
    lo.add_argument("--csv", type=Path, metavar="PATH",
                    help="per-image results (default: localize-DATASETNAME.csv here)")
    lo.add_argument("--quad-decimate", type=float, default=2.0, metavar="F",
                    help="apriltag quad_decimate (default 2; 1 for small tags, slower)")

    ds = sub.add_parser("dataset", help="generate datasets")
    dsub = ds.add_subparsers(dest="dataset_command", required=True, parser_class=_Parser)
    dp = dsub.add_parser("pool", help="render a pool localization dataset from the simulator")
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

    ca = sub.add_parser("calibrate", help="calibrate the pool camera (writes setup.json)")
    csub = ca.add_subparsers(dest="calibrate_command", required=True, parser_class=_Parser)
    ci = csub.add_parser("intrinsics", help="camera matrix and distortion from photos of a "
                         "checkerboard or ChArUco board taken in air")
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
    cw = csub.add_parser("water", help="camera pose and height above the water from tag "
                         "images at known depths (through refraction)")
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

    d = sub.add_parser("describe", help="print a component's ports and parameters")
    d.add_argument("entry", nargs="?", help="registered name, module:Class or file.py:Class")
    d.add_argument("--list", action="store_true", help="list the registered components")
    d.add_argument("--json", action="store_true", help="print the Description as JSON")
    return p


class Progress:
    """A one-line progress bar on a terminal (stderr)."""

    def __init__(self, until_ns: int, stream=sys.stderr) -> None:
        self.until_ns = until_ns
        self.stream = stream
        self.t0 = time.perf_counter()
        self.shown = False

    def __call__(self, t_ns: int) -> None:
        frac = min(max(t_ns / self.until_ns, 0.0), 1.0) if self.until_ns else 1.0
        wall = time.perf_counter() - self.t0
        rtf = t_ns * 1e-9 / wall if wall > 0 else 0.0
        width = 30
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        eta = wall * (1 - frac) / frac if frac > 0 else 0.0
        self.stream.write(
            f"\r[{bar}] {frac * 100:5.1f}%  t={t_ns * 1e-9:8.2f} s  {rtf:7.1f}x real time  ETA {eta:5.0f} s"
        )
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * 90 + "\r")
            self.stream.flush()


def _load(args) -> "object":
    from .rigfile import load_and_check

    return load_and_check(
        args.rig, args.overrides, until_s=getattr(args, "until", None),
        seed=getattr(args, "seed", None), mode=args.mode,
        realtime=getattr(args, "realtime", None),
    )


def _fresh_dir(base: Path) -> Path:
    """base, or base-2, base-3, ... if a run already wrote there (two runs in one second)."""
    out, k = base, 1
    while out.exists():
        k += 1
        out = base.with_name(f"{base.name}-{k}")
    return out


def cmd_run(args) -> int:
    from .run import run_rig
    from .summary import format_table

    try:
        rig = _load(args)
    except RigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    out = args.out or _fresh_dir(Path("runs") / f"{rig.name}-{datetime.now().strftime('%Y%m%d-%H%M%S')}")
    show = not args.quiet and sys.stderr.isatty()
    progress = Progress(rig.run.until_ns) if show else None
    if not args.quiet:
        pace = (f", real time x{float(rig.run.realtime):g} (overrun: {rig.run.overrun})"
                if rig.run.realtime is not None else "")
        print(f"running {rig.path} until {rig.run.until_ns * 1e-9:g} s (seed {rig.run.seed}"
              f"{pace}) -> {out}", file=sys.stderr)
    result = run_rig(rig, out, progress=progress)
    if progress is not None:
        progress.done()
    if not args.quiet:
        print(format_table(result.summary))
        print(f"outputs in {out}/ (summary.json, recording.mcap, plots/)")
    if not result.ok:
        print(f"error: run failed: {result.summary['error']}", file=sys.stderr)
    return result.exit_code


def cmd_check(args) -> int:
    try:
        rig = _load(args)
    except RigValidationError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_BAD_INPUT
    except RigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    pace = f", real time x{float(rig.run.realtime):g}" if rig.run.realtime is not None else ""
    print(f"{args.rig}: ok ({len(rig.components)} components, {len(rig.connections)} connections, "
          f"until {rig.run.until_ns * 1e-9:g} s, {rig.run.algorithm}{pace})")
    from moonpool.orchestrator.run import insecure_components

    insecure = insecure_components(rig)
    if insecure:
        print(f"WARNING: INSECURE: {', '.join(insecure)} reached over the network without "
              "authentication or encryption (insecure = true)", file=sys.stderr)
    return EXIT_OK


def cmd_serve(args) -> int:
    from moonpool.components.sdk import serve

    argv = [args.entry, "--bind", args.bind, "--log-level", args.log_level]
    if args.once:
        argv.append("--once")
    if args.base_dir:
        argv += ["--base-dir", args.base_dir]
    if args.key:
        argv += ["--key", args.key]
    for allowed in args.allow:
        argv += ["--allow", allowed]
    if args.insecure:
        argv.append("--insecure")
    return serve.main(argv)


def cmd_keys(args) -> int:
    from moonpool.components.sdk.errors import KeyFileError
    from moonpool.components.sdk.security import generate_keys, read_public_key

    try:
        public, secret = generate_keys(args.name, args.dir, force=args.force)
    except KeyFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"wrote {public} (public key {read_public_key(public).decode()}: give it to the "
          f"other side)\nwrote {secret} (secret, mode 0600: keep it on this machine)")
    return EXIT_OK


def cmd_describe(args) -> int:
    from moonpool.components.sdk.loading import load_entry, registered
    from moonpool.components.sdk.wire import describe_class, from_parameter_value

    if args.list or not args.entry:
        for name, target in sorted(registered().items()):
            print(f"{name:28s} {target}")
        return EXIT_OK
    try:
        desc = describe_class(load_entry(args.entry, Path.cwd()))
    except EntryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json_format.MessageToJson(desc, preserving_proto_field_name=True))
        return EXIT_OK
    print(f"{desc.kind}\n  {desc.description}\n")
    for title, ports in (("inputs", desc.inputs), ("outputs", desc.outputs)):
        print(f"{title}:")
        for p in ports:
            q = " (queued)" if p.queued else ""
            print(f"  {p.name:20s} {p.type}{q}  {p.description}")
        if not ports:
            print("  (none)")
    print("parameters:")
    for prm in desc.parameters:
        default = (
            "required" if prm.required
            else f"default {json.dumps(from_parameter_value(prm.default_value))}"
        )
        unit = f" [{prm.unit}]" if prm.unit else ""
        print(f"  {prm.name:20s} {default}{unit}  {prm.description}")
    if not desc.parameters:
        print("  (none)")
    return EXIT_OK


def cmd_fmu(args) -> int:
    import subprocess

    # The FMU sources live in the source checkout (fmus/), beside orchestrator/.
    script = Path(__file__).resolve().parent.parent / "fmus" / "build_fmus.py"
    if not script.exists():
        print("error: fmus/build_fmus.py not found; `moonpool fmu build` works from a source "
              "checkout installed with `pip install -e .`", file=sys.stderr)
        return EXIT_BAD_INPUT
    cmd = [sys.executable, str(script)] + (["--force"] if args.force else [])
    cmd += ["--cc", args.cc] if args.cc else []
    return subprocess.call(cmd)


def cmd_localize(args) -> int:
    from moonpool.components.sdk.errors import ParameterError
    from moonpool.components.localization import dataset

    methods = ("refraction", "pinhole") if args.method == "both" else (args.method,)
    csv_path = args.csv or Path(f"localize-{args.dataset.resolve().name}.csv")
    show = sys.stderr.isatty()

    def progress(k: int, n: int) -> None:
        if show:
            sys.stderr.write(f"\r{k}/{n} images")
            sys.stderr.flush()

    try:
        result = dataset.evaluate_dataset(
            args.dataset, methods, csv_path,
            dataset.DetectorOptions(quad_decimate=args.quad_decimate), progress)
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if show:
        sys.stderr.write("\r" + " " * 30 + "\r")
    print(dataset.format_report(result))
    if args.json_out:
        args.json_out.write_text(json.dumps(dataset.summary_json(result), indent=2) + "\n")
        print(f"summary in {args.json_out}")
    return EXIT_OK if any(st["n"] for st in result["methods"].values()) else EXIT_FAILED


def cmd_dataset(args) -> int:
    from moonpool.components.sdk.errors import ParameterError
    from moonpool.components.localization import dataset

    overrides = {"locations": args.locations, "images_per_location": args.images_per_location,
                 "seed": args.seed}
    for kv in args.overrides:
        key, sep, value = kv.partition("=")
        if not sep:
            print(f"error: --set {kv!r}: expected KEY=VALUE", file=sys.stderr)
            return EXIT_BAD_INPUT
        overrides[key.strip()] = value.strip()
    try:
        base = dataset.PoolDatasetConfig()
        cfg = dataset.config_from_overrides(base.ideal() if args.ideal else base, overrides)
        show = sys.stderr.isatty()

        def progress(k: int, n: int) -> None:
            if show:
                sys.stderr.write(f"\r{k}/{n} images")
                sys.stderr.flush()

        true = None
        if args.setup is not None:
            from moonpool.components.localization.pool_setup import load_setup

            true = load_setup(args.setup)
        info = dataset.generate_pool_dataset(args.out, cfg, true_setup=true, progress=progress)
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if show:
        sys.stderr.write("\r" + " " * 30 + "\r")
    print(f"wrote {info['images']} images ({cfg.locations} locations x {cfg.images_per_location}) "
          f"to {args.out}/ in {info['seconds']:.1f} s (seed {cfg.seed})")
    return EXIT_OK


def _clear_progress(show: bool) -> None:
    if show:
        sys.stderr.write("\r" + " " * 30 + "\r")
        sys.stderr.flush()


def cmd_calibrate(args) -> int:
    from moonpool.components.sdk.errors import ParameterError
    from moonpool.components.localization import calibration as cal

    show = sys.stderr.isatty()

    def progress(k: int, n: int) -> None:
        if show:
            sys.stderr.write(f"\r{k}/{n} images")
            sys.stderr.flush()

    try:
        if args.calibrate_command == "intrinsics":
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


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper(), logging.WARNING),
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    handler = {"run": cmd_run, "check": cmd_check, "serve": cmd_serve, "describe": cmd_describe,
               "fmu": cmd_fmu, "localize": cmd_localize, "dataset": cmd_dataset,
               "calibrate": cmd_calibrate, "keys": cmd_keys}
    return handler[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
