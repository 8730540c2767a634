"""Design of experiments: which runs a sweep makes.

Call order::

    spec = spec_from_file(path) | spec_from_args(rig, grid=..., random=..., ...)
    cases = make_cases(spec)          every case: index, point, replicate, values, seed
    case.overrides(spec)              the ``--set`` texts of that run

A sweep has **points** and **replicates**. The points are the Cartesian product of
the grid values (one point without a grid) times ``samples`` draws of the random
keys (one draw without random keys); every point is run ``seeds`` times. Case
``i = point · seeds + replicate``; its seed is a function of the sweep seed and
``i`` only (:func:`case_seed`), so adding workers, resuming or running the cases in
another order never changes a case.

Random keys: ``uniform(a, b)``, ``normal(μ, σ)``, ``loguniform(a, b)`` (log x
uniform on [ln a, ln b]), ``choice(v1, v2, …)``. With ``sampling = "lhs"`` the
draws of the continuous keys are a Latin hypercube (``scipy.stats.qmc.LatinHypercube``,
one stratum per sample and key) mapped through each distribution's inverse CDF;
``choice`` takes the stratum's value ⌊u·n⌋.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from moonpool.components.sdk import tomlfile
from moonpool.components.sdk.errors import RigError, RigFileError

DISTRIBUTIONS = ("uniform", "normal", "loguniform", "choice")
SAMPLINGS = ("random", "lhs")
KEEP = ("summaries", "all")


class SweepError(RigError):
    """A sweep that cannot be made (bad file, key, value or design): exit 2."""


@dataclass(frozen=True)
class Distribution:
    """How one random key is drawn."""

    kind: str
    """``uniform``, ``normal``, ``loguniform`` or ``choice``."""
    args: tuple[Any, ...]
    """(a, b) for uniform/loguniform, (μ, σ) for normal, the values for choice."""

    def draw(self, u: float) -> Any:
        """The value at quantile ``u`` in (0, 1) (inverse CDF)."""
        if self.kind == "uniform":
            a, b = self.args
            return a + (b - a) * u
        if self.kind == "loguniform":
            a, b = self.args
            return math.exp(math.log(a) + (math.log(b) - math.log(a)) * u)
        if self.kind == "normal":
            from scipy.stats import norm

            mu, sigma = self.args
            return float(mu + sigma * norm.ppf(u))
        return self.args[min(int(u * len(self.args)), len(self.args) - 1)]

    def text(self) -> str:
        return f"{self.kind}({', '.join(value_text(a) for a in self.args)})"


@dataclass(frozen=True)
class SweepSpec:
    """A whole sweep: the rig, what varies, how many runs."""

    rig: Path
    """The rig file every case runs."""
    grid: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    """(``--set`` key, its values) in order: the Cartesian product is the grid."""
    random: tuple[tuple[str, Distribution], ...] = ()
    """(``--set`` key, its distribution), drawn ``samples`` times."""
    samples: int = 1
    """Draws of the random keys per grid point (1 without random keys)."""
    sampling: str = "random"
    """``random`` (independent draws) or ``lhs`` (Latin hypercube)."""
    seeds: int = 1
    """Replicates of every point, each with its own seed."""
    seed: int = 0
    """The sweep seed: case seeds and random draws derive from it."""
    fixed: tuple[str, ...] = ()
    """``--set K=V`` texts applied to every case (before the swept keys)."""
    until_s: float | None = None
    """Simulated seconds of every run (overrides the rig's run.until)."""
    mode: str | None = None
    """``inproc`` or ``process`` for every component, as ``moonpool run --mode``."""
    source: str = ""
    """Where the spec came from (a sweep file, or ``command line``), for messages."""

    def keys(self) -> list[str]:
        return [k for k, _ in self.grid] + [k for k, _ in self.random]

    def identity(self) -> dict[str, Any]:
        """What makes two sweeps the same sweep (stored in DIR/sweep.json)."""
        return {
            "rig": str(self.rig.resolve()),
            "grid": [[k, [value_text(v) for v in vs]] for k, vs in self.grid],
            "random": [[k, d.text()] for k, d in self.random],
            "samples": self.samples, "sampling": self.sampling, "seeds": self.seeds,
            "seed": self.seed, "fixed": list(self.fixed), "until_s": self.until_s,
            "mode": self.mode,
        }


@dataclass(frozen=True)
class Case:
    """One run of a sweep."""

    index: int
    """Case number i = point · seeds + replicate."""
    point: int
    """Which combination of values."""
    replicate: int
    """Which of the point's seeds."""
    values: tuple[tuple[str, Any], ...]
    """(key, value) of every swept key for this case."""
    seed: int
    """The run's seed (:func:`case_seed`)."""
    name: str = field(default="")
    """The case folder's name, ``case-NNNN``."""

    def overrides(self, spec: SweepSpec) -> list[str]:
        return list(spec.fixed) + [f"{k}={value_text(v)}" for k, v in self.values]


def case_seed(sweep_seed: int, index: int) -> int:
    """The seed of case ``index``: the first 4 bytes (big-endian) of
    SHA-256("moonpool-sweep/{sweep_seed}/{index}") — independent of anything else."""
    digest = hashlib.sha256(f"moonpool-sweep/{sweep_seed}/{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def value_text(value: Any) -> str:
    """A value as the TOML text ``--set`` reads back to the same value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(value_text(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{json.dumps(k)} = {value_text(v)}" for k, v in value.items()) + "}"
    raise SweepError(f"cannot write {value!r} as a --set value",
                     fix="use numbers, strings, booleans, arrays or inline tables")


def parse_value(text: str) -> Any:
    """A ``--set``-style value: a TOML value, else the plain string."""
    try:
        return tomlfile.loads(f"v = {text}")["v"]
    except tomlfile.TOMLDecodeError:
        return text.strip()


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside brackets, braces and quotes (``[1, 2],[3, 4]`` is two)."""
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(text):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def parse_distribution(text: str, where: str) -> Distribution:
    """``uniform(0.02, 0.1)`` and the like (see the module docstring)."""
    t = text.strip()
    name, _, rest = t.partition("(")
    name = name.strip().lower().replace("-", "").replace("_", "")
    if not rest.endswith(")") or name not in DISTRIBUTIONS:
        raise SweepError(f"{where}: {text!r} is not a distribution",
                         fix="write uniform(a, b), normal(mean, std), loguniform(a, b) "
                         "or choice(v1, v2, ...)")
    args = [parse_value(a) for a in split_top(rest[:-1]) if a]
    return make_distribution(name, args, where)


def make_distribution(kind: str, args: Sequence[Any], where: str) -> Distribution:
    if kind == "choice":
        if not args:
            raise SweepError(f"{where}: choice() needs at least one value",
                             fix="list the values: choice(a, b, c)")
        return Distribution(kind, tuple(args))
    if len(args) != 2 or not all(isinstance(a, (int, float)) and not isinstance(a, bool)
                                 for a in args):
        raise SweepError(f"{where}: {kind} takes two numbers, got {list(args)!r}",
                         fix=f"write {kind}(a, b)")
    a, b = (float(x) for x in args)
    if kind in ("uniform", "loguniform") and not a < b:
        raise SweepError(f"{where}: {kind}({a:g}, {b:g}) needs a < b", fix="swap or widen the bounds")
    if kind == "loguniform" and a <= 0:
        raise SweepError(f"{where}: loguniform needs a > 0, got {a:g}", fix="use bounds above 0")
    if kind == "normal" and not b > 0:
        raise SweepError(f"{where}: normal(μ, σ) needs σ > 0, got {b:g}", fix="give a positive σ")
    return Distribution(kind, (a, b))


def _positive(value: Any, name: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SweepError(f"{where}: {name} must be an integer >= 1, got {value!r}",
                         fix=f"set {name} = 1 or more")
    return value


def _check_spec(spec: SweepSpec) -> SweepSpec:
    where = spec.source
    seen = set()
    for key in spec.keys():
        if key in seen:
            raise SweepError(f"{where}: key '{key}' is swept twice",
                             fix="give each key once (grid or random)")
        seen.add(key)
    for key, values in spec.grid:
        if not values:
            raise SweepError(f"{where}: the grid of '{key}' has no values (an empty grid "
                             "makes no runs)", fix=f"give at least one value: {key}=v1,v2")
    if spec.sampling not in SAMPLINGS:
        raise SweepError(f"{where}: sampling {spec.sampling!r} is not one of {SAMPLINGS}",
                         fix="use sampling = \"random\" or \"lhs\"")
    if spec.samples > 1 and not spec.random:
        raise SweepError(f"{where}: samples = {spec.samples} but no random keys",
                         fix="add random keys or drop samples")
    if spec.mode not in (None, "inproc", "process"):
        raise SweepError(f"{where}: mode {spec.mode!r} is not inproc or process",
                         fix="use mode = \"inproc\" or \"process\"")
    if not spec.rig.is_file():
        raise SweepError(f"{where}: rig file {spec.rig} not found", fix="check the rig path")
    return spec


_FILE_KEYS = {"rig", "seed", "seeds", "samples", "sampling", "until", "mode", "set", "grid",
              "random"}


def spec_from_file(path: str | Path) -> SweepSpec:
    """Read a sweep file (a ``[sweep]`` table; docs/sweeps.md). Paths are relative to it."""
    path = Path(path)
    where = str(path)
    try:
        data = tomlfile.loads(path.read_text())
    except OSError as exc:
        raise RigFileError(f"cannot read sweep file {path}: {exc.strerror}",
                           fix="check the path") from exc
    except tomlfile.TOMLDecodeError as exc:
        raise RigFileError(f"{path}: not valid TOML: {exc}", fix="fix the syntax") from exc
    table = data.get("sweep")
    if not isinstance(table, dict):
        raise SweepError(f"{where}: no [sweep] table", fix="see docs/sweeps.md for the format")
    unknown = sorted(set(table) - _FILE_KEYS) + [f"{k} (outside [sweep])" for k in data
                                                 if k != "sweep"]
    if unknown:
        raise SweepError(f"{where}: unknown key(s) in [sweep]: {', '.join(unknown)}",
                         fix=f"use only {', '.join(sorted(_FILE_KEYS))}")
    if not isinstance(table.get("rig"), str):
        raise SweepError(f"{where}: sweep.rig (the rig file) is missing", fix='rig = "path.toml"')
    grid = []
    for key, values in (table.get("grid") or {}).items():
        if not isinstance(values, list):
            values = [values]
        grid.append((key, tuple(values)))
    random = []
    for key, spec in (table.get("random") or {}).items():
        w = f"{where}: sweep.random.\"{key}\""
        if isinstance(spec, str):
            random.append((key, parse_distribution(spec, w)))
        elif isinstance(spec, dict) and isinstance(spec.get("dist"), str):
            kind = spec["dist"].lower()
            if kind not in DISTRIBUTIONS:
                raise SweepError(f"{w}: dist {kind!r} is not one of {DISTRIBUTIONS}",
                                 fix="use uniform, normal, loguniform or choice")
            names = {"uniform": ("low", "high"), "loguniform": ("low", "high"),
                     "normal": ("mean", "std"), "choice": ("values",)}[kind]
            extra = set(spec) - {"dist", *names}
            if extra:
                raise SweepError(f"{w}: unknown key(s) {sorted(extra)} for {kind}",
                                 fix=f"{kind} takes {', '.join(names)}")
            args = list(spec.get("values", [])) if kind == "choice" else [spec.get(n) for n in names]
            random.append((key, make_distribution(kind, args, w)))
        else:
            raise SweepError(f"{w}: expected \"uniform(a, b)\" or {{dist = ..., ...}}",
                             fix="see docs/sweeps.md")
    until = table.get("until")
    if until is not None:
        from ..timeparse import parse_duration_ns  # the rig's own duration syntax

        try:
            until = parse_duration_ns(until, key="sweep.until") / 1e9
        except (ValueError, TypeError, RigError) as exc:
            raise SweepError(f"{where}: sweep.until {until!r}: {exc}",
                             fix='write until = "60s" or a number of seconds') from exc
    fixed = table.get("set", [])
    if not isinstance(fixed, list) or not all(isinstance(s, str) and "=" in s for s in fixed):
        raise SweepError(f"{where}: sweep.set must be a list of \"KEY=VALUE\" texts",
                         fix='set = ["components.t1.parameters.count=1"]')
    rig = Path(table["rig"])
    if not rig.is_absolute():
        rig = path.parent / rig
    spec = SweepSpec(
        rig=rig, grid=tuple(grid), random=tuple(random),
        samples=_positive(table.get("samples", 1), "samples", where),
        sampling=table.get("sampling", "random"),
        seeds=_positive(table.get("seeds", 1), "seeds", where),
        seed=int(table.get("seed", 0)), fixed=tuple(fixed), until_s=until,
        mode=table.get("mode"), source=where,
    )
    return _check_spec(spec)


def spec_from_args(rig: Path, *, grid: Sequence[str] = (), random: Sequence[str] = (),
                   samples: int = 1, sampling: str = "random", seeds: int = 1, seed: int = 0,
                   fixed: Sequence[str] = (), until_s: float | None = None,
                   mode: str | None = None) -> SweepSpec:
    """The sweep of ``moonpool sweep RIG --grid K=v1,v2 --random K=dist(...) ...``."""
    where = "command line"
    g = []
    for text in grid:
        key, eq, values = text.partition("=")
        if not eq or not key.strip():
            raise SweepError(f"--grid {text!r}: expected KEY=v1,v2,...",
                             fix="e.g. --grid components.pid.parameters.kp=1,2,4")
        g.append((key.strip(), tuple(parse_value(v) for v in split_top(values) if v)))
    r = []
    for text in random:
        key, eq, dist = text.partition("=")
        if not eq or not key.strip():
            raise SweepError(f"--random {text!r}: expected KEY=dist(...)",
                             fix="e.g. --random components.vehicle.parameters.x=uniform(0,1)")
        r.append((key.strip(), parse_distribution(dist, f"--random {key.strip()}")))
    spec = SweepSpec(rig=Path(rig), grid=tuple(g), random=tuple(r),
                     samples=_positive(samples, "--samples", where), sampling=sampling,
                     seeds=_positive(seeds, "--seeds", where), seed=seed, fixed=tuple(fixed),
                     until_s=until_s, mode=mode, source=where)
    return _check_spec(spec)


def _draws(spec: SweepSpec, n_points: int) -> np.ndarray:
    """Quantiles u in (0, 1), shape (grid points · samples, random keys)."""
    n, d = n_points * spec.samples, len(spec.random)
    if d == 0:
        return np.zeros((n, 0))
    if spec.sampling == "lhs":
        from scipy.stats import qmc

        # One hypercube of `samples` strata per grid point, each seeded from the sweep.
        blocks = [qmc.LatinHypercube(d=d, seed=np.random.default_rng([spec.seed, p])).random(
            spec.samples) for p in range(n_points)]
        u = np.vstack(blocks)
    else:
        u = np.random.default_rng([spec.seed, 1]).random((n, d))
    return np.clip(u, 1e-12, 1 - 1e-12)


def make_cases(spec: SweepSpec) -> list[Case]:
    """Every case of the sweep, in index order (see the module docstring)."""
    combos = list(itertools.product(*[values for _, values in spec.grid]))
    u = _draws(spec, len(combos))
    cases = []
    point = 0
    for g, combo in enumerate(combos):
        for s in range(spec.samples):
            drawn = [(key, dist.draw(float(u[g * spec.samples + s, j])))
                     for j, (key, dist) in enumerate(spec.random)]
            values = tuple(zip([k for k, _ in spec.grid], combo)) + tuple(drawn)
            for rep in range(spec.seeds):
                i = point * spec.seeds + rep
                cases.append(Case(i, point, rep, values, case_seed(spec.seed, i),
                                  name=f"case-{i:04d}"))
            point += 1
    return cases
