"""A hypothesis fuzz of rig files and ``--set`` values through the CLI (issue 24): every
answer of `moonpool check` and `moonpool run` is an exit code 0, 1 or 2, with a message
when it is not 0, and never a traceback (tests/support/rigfuzz.py generates them).

The CLI runs in this process (``cli.main``, as the console script calls it), so 1,000+
rigs take seconds; a rig `check` accepts is run when cheap (in-process, <= 5,000
steps). Longer campaigns: ``scripts/fuzz_cli.py --examples N``. Derandomized, so CI
sees the same examples every time; the printed count says how many ran."""

from __future__ import annotations

import logging

from hypothesis import HealthCheck, given, settings
from rigfuzz import cli_round, fuzz_folder, rig_texts, sets

EXAMPLES = 1100
SEEN = {"rigs": 0, "runs": 0, "codes": {}}


def _check(results) -> None:
    for argv, code, said in results:
        SEEN["codes"][code] = SEEN["codes"].get(code, 0) + 1
        assert code in (0, 1, 2), (argv, code, said)
        assert "Traceback" not in said, (argv, said)
        if code != 0:
            assert said.strip(), (argv, code, "exit without a message")


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(text=rig_texts(), overrides=sets)
def _fuzz(folder, text, overrides):
    results = cli_round(text, overrides, folder)
    SEEN["rigs"] += 1
    SEEN["runs"] += len(results) - 1
    _check(results)


def test_rig_files_and_set_values_never_give_a_traceback(tmp_path):
    logger = logging.getLogger("moonpool")
    level = logger.level
    logger.setLevel(logging.CRITICAL)  # only the CLI's own output (restored after)
    try:
        _fuzz(fuzz_folder(tmp_path))
    finally:
        logger.setLevel(level)
    print(f"\n{SEEN['rigs']} rig files with --set values checked, {SEEN['runs']} run; "
          f"exit codes {dict(sorted(SEEN['codes'].items()))}")
    assert SEEN["rigs"] >= 1000
