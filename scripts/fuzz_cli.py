#!/usr/bin/env python3
"""A longer fuzz campaign than the test's: rig files and --set values through
`moonpool check` (and `moonpool run` when cheap), random seeds.

    .venv/bin/python scripts/fuzz_cli.py [--examples 20000] [--seed N]

Prints every failure (a traceback, an exit code other than 0/1/2, an exit without a
message) with the rig text and the flags, then the counts; exit 1 if any failed.
tests/support/rigfuzz.py has the generators (tests/unit/test_cli_fuzz.py runs 1,100).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    from hypothesis import HealthCheck, given, seed, settings
    from rigfuzz import cli_round, fuzz_folder, rig_texts, sets

    logging.getLogger("moonpool").setLevel(logging.CRITICAL)
    counts: dict[int, int] = {}
    failures: list[str] = []
    seen = [0, 0]
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="moonpool-fuzz-") as tmp:
        folder = fuzz_folder(Path(tmp))

        @settings(max_examples=args.examples, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(text=rig_texts(), overrides=sets)
        def campaign(text, overrides):
            try:
                results = cli_round(text, overrides, folder)
            except Exception as exc:  # noqa: BLE001 - a traceback: what we look for
                failures.append(f"EXCEPTION {type(exc).__name__}: {exc}\n--set {overrides}\n{text}")
                return
            seen[0] += 1
            seen[1] += len(results) - 1
            for argv, code, said in results:
                counts[code] = counts.get(code, 0) + 1
                if code not in (0, 1, 2) or "Traceback" in said or (code and not said.strip()):
                    failures.append(f"{argv[0]} exit {code}\n--set {overrides}\n{said}\n{text}")

        if args.seed is not None:
            campaign = seed(args.seed)(campaign)
        campaign()
    for f in failures[:20]:
        print("-" * 72, f, sep="\n")
    print(f"{seen[0]} rig files checked, {seen[1]} run, in {time.monotonic() - t0:.0f} s; "
          f"exit codes {dict(sorted(counts.items()))}; {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
