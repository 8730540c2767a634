"""The ``[components.NAME]`` tables: entry, placement, schedule, timeouts, parameters.

What a component's placement adds (a remote endpoint and its CURVE keys, a replay's
recording) is checked in :mod:`.placements`; ``profile = "FILE.toml"`` is read by
:mod:`.reading`. Keys and defaults come from :data:`.vocabulary.COMPONENT`.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from pathlib import Path
from typing import Any

from ..rig import ComponentConfig, Schedule
from . import values
from .placements import ReplaySpec, endpoint_of, replay_of, security_of
from .reading import read_profile
from .report import Report, kind_of
from .vocabulary import COMPONENT, MODES, NAME_RE, PLACEMENTS

_DEFAULTS = ComponentConfig(name="_", entry="", placement="inproc", schedule=Schedule(Fraction(1)))
_PLACEHOLDER_SCHEDULE = Schedule(Fraction(1))


def component_names(table: Any) -> list[str]:
    """Names declared under [components] (valid or not), for reference checks."""
    return list(table) if isinstance(table, dict) else []


def components(
    report: Report, table: Any, base_dir: Path, mode: str | None
) -> list[ComponentConfig]:
    """Every [components.NAME] table, in file order (validly named ones only)."""
    if mode is not None and mode not in MODES:
        report.add(
            "--mode",
            f"'{mode}' is not a mode; use --mode inproc or --mode process "
            "(or leave it out to run each component where the rig says)",
        )
        mode = None
    if table is None or table == {}:
        report.add(
            "components",
            "the rig has no components; add a [components.NAME] table with an entry "
            "and a rate_hz or period",
        )
        return []
    if not isinstance(table, dict):
        report.add("components", f"expected tables [components.NAME], got {kind_of(table)}")
        return []
    out = []
    for name, spec in table.items():
        key = f"components.{name}"
        valid_name = _component_name(report, key, name)
        if not isinstance(spec, dict):
            report.add(
                key,
                f"expected a table [components.{name}] with entry and rate_hz or period, "
                f"got {kind_of(spec)}",
            )
            continue
        component = _component(report, key, name, spec, base_dir, mode)
        if valid_name:
            out.append(component)
    return out


def _component_name(report: Report, key: str, name: str) -> bool:
    if NAME_RE.match(name):
        return True
    report.add(
        key,
        f"'{name}' is not a valid component name; use letters, digits, '_' and '-', "
        "starting with a letter or '_' (e.g. depth_pid)",
    )
    return False


def _component(
    report: Report, key: str, name: str, spec: Mapping[str, Any], base_dir: Path, mode: str | None
) -> ComponentConfig:
    """One component table (placeholders where a value is bad)."""
    d = _DEFAULTS

    def get(k: str) -> Any:
        return COMPONENT.value(spec, k)

    values.check_keys(report, key, spec, COMPONENT.names, f"[{key}]")
    placement = values.choice(report, f"{key}.run", get("run"), PLACEMENTS) or "inproc"
    entry = _entry(report, key, spec, placement)
    endpoint = endpoint_of(report, key, spec, placement)
    replay = replay_of(report, key, name, spec, placement, base_dir)
    schedule = _schedule(report, key, spec, replay)
    step_timeout = values.duration(
        report, f"{key}.step_timeout", get("step_timeout"), positive=True
    )
    setup_timeout = values.duration(
        report, f"{key}.setup_timeout", get("setup_timeout"), positive=True
    )
    parameters = get("parameters")
    if not isinstance(parameters, dict):
        report.add(
            f"{key}.parameters",
            f"expected a table [{key}.parameters] of name = value, got {kind_of(parameters)}",
        )
        parameters = {}
    group = _group(report, key, spec, placement)
    server_key, client_key, insecure = (
        security_of(report, key, spec, placement, endpoint, base_dir) if mode is None
        else (None, None, False))  # --mode runs every component here: no connection to secure
    if "profile" in spec:
        parameters = read_profile(report, f"{key}.profile", spec["profile"], base_dir, parameters)
    if mode is not None and placement != "replay":  # a replay stays one under --mode
        group = ""  # --mode: every component on its own (in-process, or one process each)
        if placement == "remote" and not entry:
            report.add(
                f"{key}.entry",
                f"--mode {mode} runs every component here, but remote component '{name}' has "
                "no entry; add entry = \"...\" naming its class, or run without --mode",
            )
        placement, endpoint = mode, ""
    return ComponentConfig(
        name=name,
        entry=entry,
        placement=placement,  # type: ignore[arg-type]
        schedule=schedule or _PLACEHOLDER_SCHEDULE,
        parameters=parameters,
        endpoint=endpoint,
        group=group,
        step_timeout_ns=step_timeout or d.step_timeout_ns,
        setup_timeout_ns=setup_timeout or d.setup_timeout_ns,
        base_dir=base_dir,
        recording=replay.path,
        source=replay.source if replay.source != name else "",
        server_key=server_key,
        client_key=client_key,
        insecure=insecure,
    )


def _entry(report: Report, key: str, spec: Mapping[str, Any], placement: str) -> str:
    """The entry text ('' when absent or bad)."""
    forms = '"quickstart.vehicle", "package.module:Class" or "file.py:Class"'
    if "entry" not in spec:
        if placement not in ("remote", "replay"):
            report.add(
                f"{key}.entry",
                f"missing: say what to run, e.g. entry = {forms} "
                "(only a run = \"remote\" or \"replay\" component may leave it out)",
            )
        return ""
    entry = spec["entry"]
    if not isinstance(entry, str) or not entry.strip():
        report.add(f"{key}.entry", f"expected a non-empty string like {forms}, got {entry!r}")
        return ""
    return entry.strip()


def _group(report: Report, key: str, spec: Mapping[str, Any], placement: str) -> str:
    """The process group ('' when absent or bad)."""
    if "group" not in spec or placement == "replay":  # a replay ignores it (switching back)
        return ""
    group = spec["group"]
    if placement != "process":
        report.add(
            f"{key}.group",
            f'is only used with run = "process" (this component runs "{placement}"); '
            'remove it or set run = "process"',
        )
        return ""
    if not isinstance(group, str) or not NAME_RE.match(group):
        report.add(
            f"{key}.group",
            f"expected a group name like \"sensors\" (letters, digits, _ and -), got {group!r}",
        )
        return ""
    return group


def _schedule(
    report: Report, key: str, spec: Mapping[str, Any], replay: ReplaySpec | None = None
) -> Schedule | None:
    """Schedule from exactly one of rate_hz / period, plus offset. A replay without
    either takes the recorded schedule (and offset, unless the rig gives one)."""
    offset = values.duration(
        report, f"{key}.offset", COMPONENT.value(spec, "offset"), positive=False
    )
    has_rate, has_period = "rate_hz" in spec, "period" in spec
    if has_rate and has_period:
        report.add(
            f"{key}.period",
            "give either rate_hz or period, not both; remove one of them",
        )
        return None
    if not (has_rate or has_period) and replay is not None and replay.active:
        if replay.schedule is not None:
            if "offset" in spec and offset is not None:
                return Schedule(replay.schedule.rate_hz, offset)
            return replay.schedule
        if replay.readable:
            report.add(
                f"{key}.rate_hz",
                "missing: the recording does not say how often this component was stepped; "
                'give its rate_hz = 100 or period = "10ms"',
            )
        return None
    if not (has_rate or has_period):
        report.add(
            f"{key}.rate_hz",
            'missing: say how often to step it with rate_hz = 100 or period = "10ms"',
        )
        return None
    if has_rate:
        rate = values.rate(report, f"{key}.rate_hz", spec["rate_hz"])
    else:
        period = values.duration(report, f"{key}.period", spec["period"], positive=True)
        rate = Fraction(1_000_000_000, period) if period else None
    if rate is None or offset is None:
        return None
    return Schedule(rate_hz=rate, offset_ns=offset)
