"""``moonpool import ssp SYSTEM.ssp [--out RIG.toml] [--rate HZ]``: an SSP system -> a rig.

Call order: ``moonpool`` builds the parser (``_arguments``), then calls ``_import_ssp``:
read the archive (``read_ssp``), extract its FMUs next to the rig (``RIG.fmus/``),
write the rig, print what was made. Exit 0, or 2 with the element and the fix.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..sdk.commands import Command, CommandGroup
from ..sdk.errors import MoonpoolError
from .ssd import read_ssp, rig_text


def _arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("ssp", type=Path, help="the .ssp archive (SystemStructure.ssd, FMUs, .ssv)")
    p.add_argument("--out", type=Path, default=None,
                   help="rig file to write (default: SYSTEM.toml beside the .ssp); the FMUs "
                        "are extracted to RIG.fmus/ beside it")
    p.add_argument("--rate", type=int, default=100,
                   help="communication rate of every FMU, Hz (SSP does not say; default 100)")
    p.add_argument("--force", action="store_true", help="overwrite an existing rig file")


def _import_ssp(args: argparse.Namespace) -> int:
    out: Path = args.out or args.ssp.with_suffix(".toml")
    try:
        if args.rate <= 0:
            raise MoonpoolError(f"--rate {args.rate} must be > 0", fix="give e.g. --rate 100")
        if out.exists() and not args.force:
            raise MoonpoolError(f"{out} exists", fix="give another --out, or --force to overwrite")
        system = read_ssp(args.ssp)
        fmu_dir = out.with_name(out.stem + ".fmus")
        text = rig_text(system, out.parent, fmu_dir, args.rate)
        out.write_text(text, encoding="utf-8")
    except MoonpoolError as exc:
        print(f"moonpool import ssp: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {out}: {len(system.components)} FMU components, "
          f"{len(system.connections)} connections, FMUs in {fmu_dir}/ "
          f"(check it with `moonpool check {out}`)")
    return 0


IMPORT = CommandGroup("import a system described in another format as a rig")
IMPORT_SSP = Command("turn an SSP system structure (.ssp: FMUs, connections, parameter sets) "
                     "into a rig", _arguments, _import_ssp)
