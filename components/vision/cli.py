"""``moonpool dataset deepsea`` (registered in the entry-point group ``moonpool.commands``;
see ``moonpool.components.sdk.commands``)::

    moonpool dataset deepsea OUT [--scene FILE] [--trajectory CSV | --line N0 E0 N1 E1]
        [--altitude M] [--frames K] [--water NAME] [--width W] [--height H] [--seed S]
        [--set KEY=VALUE]...

Exit codes: 0 success, 2 bad input. docs/deepsea-camera.md describes the output.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..sdk.commands import Command
from ..sdk.errors import ParameterError

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("out", type=Path, help="new folder to write")
    p.add_argument("--scene", type=Path, default=Path("scenes/trench_floor/scene.toml"),
                   help="scene file (default scenes/trench_floor/scene.toml)")
    p.add_argument("--trajectory", type=Path, metavar="CSV",
                   help="vehicle poses: t_s,north_m,east_m,down_m,roll_deg,pitch_deg,yaw_deg")
    p.add_argument("--line", type=float, nargs=4, metavar=("N0", "E0", "N1", "E1"),
                   default=[2.0, 3.0, 10.0, 3.0],
                   help="without --trajectory: a straight run between two points (m), the "
                        "camera --altitude above the seabed (default 2 3 10 3: over the starfish)")
    p.add_argument("--altitude", type=float, default=2.0, metavar="M")
    p.add_argument("--frames", type=int, default=10, metavar="K")
    p.add_argument("--water", default="jerlov_IB", metavar="NAME", help="water type")
    p.add_argument("--width", type=int, default=640)
    p.add_argument("--height", type=int, default=480)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                   help="any vision.camera parameter, value in JSON (e.g. bit_depth=12, "
                        "marine_snow=200); repeatable")


def _run(args) -> int:
    from . import dataset

    values = {"scene": args.scene, "water_type": args.water, "image_width": args.width,
              "image_height": args.height}
    for kv in args.overrides:
        key, sep, raw = kv.partition("=")
        if not sep:
            print(f"error: --set {kv!r}: expected KEY=VALUE", file=sys.stderr)
            return EXIT_BAD_INPUT
        try:
            v = json.loads(raw)
        except json.JSONDecodeError:
            v = raw
        values[key.strip()] = tuple(v) if isinstance(v, list) else v
    try:
        params = dataset.default_parameters(**values)
        if args.trajectory is not None:
            poses = dataset.read_trajectory(args.trajectory)
        else:
            from ..world.scene import Scene

            if args.frames < 1 or not args.altitude > 0:
                raise ParameterError("--frames must be >= 1 and --altitude > 0", fix="correct them")
            scene = Scene.load(params.scene)
            poses = dataset.line_trajectory(scene, args.line[:2], args.line[2:], args.altitude,
                                            args.frames, params.mount_xyz_m)
        show = sys.stderr.isatty()

        def progress(k, n):
            if show:
                sys.stderr.write(f"\r{k}/{n} frames")

        info = dataset.generate_deepsea_dataset(args.out, params, poses, args.seed, progress)
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"wrote {info['images']} frames with truth to {args.out}/ in {info['seconds']:.1f} s")
    return EXIT_OK


DATASET_DEEPSEA = Command("render a labelled deep-sea dataset (images, truth, poses, camera info)",
                          _arguments, _run)
