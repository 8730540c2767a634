"""Hypothesis strategies for rig files and ``--set`` values, and one CLI round through
them: ``moonpool check`` and, for a rig it accepts that is cheap to run, ``moonpool run``
(tests/unit/test_cli_fuzz.py; scripts/fuzz_cli.py for long runs).

A rig is the tiny quickstart rig below (three in-process components, 0.05 s) with a
few mutations drawn from the rig vocabulary (orchestrator/rigfile/vocabulary.py):
a key set to a value of any kind (numbers at the edges of their range, NaN and
infinities, strings that are nearly durations or paths, deep arrays, tables), a key
removed, an unknown key added, a table replaced by a scalar; or the TOML text itself
cut or spliced with random characters. ``--set`` values are KEY=TEXT pairs, TEXT drawn
the same way or as raw text.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from moonpool.orchestrator.rigfile.vocabulary import COMPONENT_KEYS, CONNECTION_KEYS, RUN_KEYS, TOP_KEYS

BASE: dict[str, Any] = {
    "name": "tiny",
    "run": {"until": "0.05s", "seed": 1, "algorithm": "gauss-seidel",
            "order": ["sensor", "pid", "vehicle"], "plots": False},
    "components": {
        "vehicle": {"entry": "quickstart.vehicle", "rate_hz": 100,
                    "parameters": {"initial_depth_m": 0.5}},
        "sensor": {"entry": "quickstart.pressure", "rate_hz": 50,
                   "parameters": {"noise_pa": 50.0}},
        "pid": {"entry": "quickstart.depth_pid", "rate_hz": 50,
                "parameters": {"setpoints_m": [1.0, 3.0], "hold_s": 10.0}},
    },
    "connections": [{"from": "vehicle.state", "to": "sensor.state"},
                    {"from": "sensor.pressure", "to": "pid.pressure"},
                    {"from": "pid.wrench", "to": "vehicle.wrench"}],
}
NAMES = ("vehicle", "sensor", "pid")
PARAMETERS = ("initial_depth_m", "noise_pa", "setpoints_m", "hold_s", "mass_kg", "kp", "x")

# -- values ---------------------------------------------------------------------------

_EDGE_NUMBERS = [0, -1, 1, 2**31 - 1, 2**31, 2**63 - 1, -(2**63), 2**64, 10**400, 1e-300,
                 1e-9, -1e-9, 1e300, 1.7976931348623157e308, -0.0, math.inf, -math.inf,
                 math.nan]
_WORDS = ["", " ", "1s", "-1s", "0s", "1e400s", "1e-400s", "10 ms", "2min", "1ns", "period",
          "nan", "inf", "jacobi", "gauss-seidel", "inproc", "process", "remote", "replay",
          "command", "quickstart.vehicle", "no.such", "x:Y", "a.py:B", "../../etc/passwd",
          "/dev/null", "tcp://127.0.0.1:1", "ipc:///nonexistent/x", "vehicle.state",
          "sensor.pressure", "pid.wrench", "vehicle", "\x1b[31mred", "line\nbreak", "é\u202e",
          "*", "x" * 300]

scalars = st.one_of(
    st.sampled_from(_EDGE_NUMBERS),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.sampled_from(_WORDS),
    st.text(max_size=20),
)


def _deep(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.sampled_from(_WORDS[:20] + ["a", "b"]), inner,
                                            max_size=3)),
    max_leaves=8,
) | st.sampled_from([_deep(40), _deep(70), _deep(300), [[]], {}, [1, "a"], [math.nan]])

# -- rig mutations ----------------------------------------------------------------------

_PATHS = ([("name",), ("description",)] + [("run", k) for k in RUN_KEYS]
          + [("components", n, k) for n in NAMES for k in COMPONENT_KEYS]
          + [("components", n, "parameters", p) for n in NAMES for p in PARAMETERS]
          + [("connections", i, k) for i in range(3) for k in CONNECTION_KEYS]
          + [(k,) for k in TOP_KEYS] + [("plots",), ("scenario",), ("run",), ("components",),
                                         ("components", "vehicle"), ("unknown_key",),
                                         ("run", "no_such_key"), ("components", "new"),
                                         ("components", "new", "entry")])


def _apply(rig: dict, mutation: tuple) -> None:
    kind, path, value = mutation
    value = copy.deepcopy(value)  # (a sampled value is one object: never share or grow it)
    node: Any = rig
    for part in path[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            if kind != "set" or not isinstance(node, dict):
                return
            node[part] = {}
            node = node[part]
    last = path[-1]
    if isinstance(node, dict) and isinstance(last, str):
        if kind == "set":
            node[last] = value
        else:
            node.pop(last, None)
    elif isinstance(node, list) and isinstance(last, int) and last < len(node):
        if kind == "set":
            node[last] = value
        else:
            del node[last]


mutations = st.tuples(st.sampled_from(["set", "set", "set", "delete"]), st.sampled_from(_PATHS),
                      values)


def toml_text(value: Any, table: str = "") -> str:
    """TOML for a rig dict (tables, arrays of tables, inline values); a minimal emitter
    for the fuzz only: it writes what TOML can hold (and NaN/inf, which TOML has)."""
    lines: list[str] = []
    subs: list[tuple[str, dict]] = []
    arrays: list[tuple[str, list]] = []
    for key, v in value.items():
        name = _key(key)
        if isinstance(v, dict) and v and all(isinstance(k, str) for k in v):
            subs.append((f"{table}.{name}" if table else name, v))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            arrays.append((f"{table}.{name}" if table else name, v))
        else:
            lines.append(f"{name} = {_inline(v)}")
    out = "\n".join(lines) + "\n"
    for name, v in subs:
        out += f"\n[{name}]\n" + toml_text(v, name)
    for name, items in arrays:
        for item in items:
            out += f"\n[[{name}]]\n" + toml_text(item, name)
    return out


def _key(key: Any) -> str:
    text = str(key)
    return text if text.replace("_", "a").replace("-", "a").isalnum() and text.isascii() \
        else json.dumps(text)


def _inline(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(_inline(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_key(k)} = {_inline(x)}" for k, x in v.items()) + "}"
    return json.dumps(str(v))


@st.composite
def rig_texts(draw: Callable) -> str:
    """A rig file's text: the base rig mutated, or its text cut and spliced."""
    rig = json.loads(json.dumps(BASE))
    for mutation in draw(st.lists(mutations, min_size=0, max_size=3)):
        _apply(rig, mutation)
    text = toml_text(rig)
    if draw(st.integers(0, 9)) == 0:  # raw damage to the text
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.text(max_size=12)) + text[at + draw(st.integers(0, 8)):]
    return text


set_keys = st.sampled_from(["run." + k for k in RUN_KEYS]
                           + [f"components.{n}.{k}" for n in NAMES for k in COMPONENT_KEYS]
                           + [f"components.{n}.parameters.{p}" for n in NAMES
                              for p in PARAMETERS]
                           + ["name", "connections", "run", "components.new.entry", "x",
                              "components..x", ".", "run.", "components.vehicle"])
set_values = st.one_of(values.map(_inline), st.text(max_size=30), st.sampled_from(_WORDS))
sets = st.lists(st.tuples(set_keys, set_values).map(lambda kv: f"{kv[0]}={kv[1]}"),
                max_size=3)

# -- one round through the CLI ------------------------------------------------------------

MAX_STEPS = 5_000
"""A rig `check` accepts is also run when its steps are this few and it stays in this
process (no realtime pacing, no spawned or remote component): the run part is bounded."""


def _cheap(rig_path: Path, overrides: list[str]) -> bool:
    from moonpool.orchestrator.rigfile import load_and_check

    rig = load_and_check(rig_path, overrides, until_s=0.05)
    if rig.run.realtime is not None or any(c.placement != "inproc" for c in rig.components):
        return False
    steps = sum(float(c.schedule.rate_hz) * 0.05 for c in rig.components)
    return steps <= MAX_STEPS and all(c.step_timeout_ns >= 10**8 for c in rig.components)


def cli_round(text: str, overrides: list[str], folder: Path) -> list[tuple[list[str], int, str]]:
    """Write the rig, `check` it, and `run` it if accepted and cheap; the CLI in this
    process (``moonpool.orchestrator.cli.main``). Returns (argv, exit code, stderr +
    stdout) per command. Any exception escaping the CLI propagates (a traceback)."""
    from moonpool.orchestrator.cli import main

    rig = folder / "rig.toml"
    rig.write_text(text, encoding="utf-8", errors="surrogatepass")
    flags = [x for kv in overrides for x in ("--set", kv)]
    done = []
    argv = ["check", str(rig), *flags]
    code, said = _call(main, argv)
    done.append((argv, code, said))
    if code == 0 and _cheap(rig, overrides):
        argv = ["run", str(rig), *flags, "--until", "0.05", "--quiet", "--force",
                "--out", str(folder / "out"), "--set", "run.plots=false"]
        code, said = _call(main, argv)
        done.append((argv, code, said))
    return done


def _call(main: Callable, argv: list[str]) -> tuple[int, str]:
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: exit 2 with its message
            code = exc.code if isinstance(exc.code, int) else 1
    return code, err.getvalue() + out.getvalue()


def fuzz_folder(base: Path) -> Path:
    base.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("MPLBACKEND", "Agg")
    return base
