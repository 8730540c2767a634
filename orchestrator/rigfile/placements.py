"""What a component's placement adds: a remote endpoint and its CURVE keys, a
replay's recording.

A ``run = "remote"`` component is reached at an ``endpoint``, authenticated and
encrypted with ``server_key`` and ``client_key`` when it leaves the loopback
(docs/distributed.md); a ``run = "replay"`` component publishes a ``recording``,
which is read here (its summary and metadata only) to check it holds the component.
A key used by another placement than its own is a problem, except where a replay
ignores it (so that switching back is one edit).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from moonpool.components.sdk.errors import KeyFileError
from moonpool.components.sdk.security import (
    leaves_loopback,
    read_key_pair,
    read_public_server_key,
)

from ..rig import Schedule
from . import values
from .report import Report, kind_of
from .vocabulary import ENDPOINT_RE, NAME_RE


def endpoint_of(report: Report, key: str, spec: Mapping[str, Any], placement: str) -> str:
    """The endpoint of a remote component ('' otherwise or when bad)."""
    forms = '"tcp://HOST:PORT", "ipc://PATH" or "inproc://NAME"'
    if "endpoint" not in spec:
        if placement == "remote":
            report.add(
                f"{key}.endpoint",
                f"missing: a run = \"remote\" component needs the endpoint it is served at, "
                f"e.g. endpoint = \"tcp://10.0.0.2:5555\" ({forms})",
            )
        return ""
    if placement == "replay":  # a replay ignores it (switching back is one edit)
        return ""
    endpoint = spec["endpoint"]
    if placement != "remote":
        report.add(
            f"{key}.endpoint",
            f'is only used with run = "remote" (this component runs "{placement}"); '
            'remove it or set run = "remote"',
        )
        return ""
    if not isinstance(endpoint, str) or not (m := ENDPOINT_RE.match(endpoint)):
        report.add(f"{key}.endpoint", f"{endpoint!r} is not a ZeroMQ endpoint; write {forms}")
        return ""
    if m[1] is not None and not 0 < int(m[1]) < 65536:
        report.add(f"{key}.endpoint", f"port {m[1]} is out of range; use 1 to 65535")
        return ""
    return endpoint


def security_of(
    report: Report, key: str, spec: Mapping[str, Any], placement: str, endpoint: str,
    base_dir: Path,
) -> tuple[Path | None, Path | None, bool]:
    """server_key, client_key (paths of readable CURVE key files) and insecure.

    A remote tcp:// endpoint that leaves the loopback needs both keys, or an explicit
    ``insecure = true`` (docs/distributed.md)."""
    given = [k for k in ("server_key", "client_key", "insecure") if k in spec]
    if placement != "remote":
        for k in given:
            report.add(f"{key}.{k}", f'is only used with run = "remote" (this component runs '
                       f'"{placement}"); remove it or set run = "remote"')
        return None, None, False
    insecure = False
    if "insecure" in spec:
        insecure = bool(values.boolean(report, f"{key}.insecure", spec["insecure"]))
    paths: dict[str, Path | None] = {"server_key": None, "client_key": None}
    # Examples named after this rig's files: the folder of a key it gives, the component.
    given_key = next((spec[k] for k in ("server_key", "client_key")
                      if isinstance(spec.get(k), str) and spec[k].strip()), "")
    folder = str(Path(given_key).parent) if given_key and Path(given_key).parent != Path(".") else "keys"
    component = key.rpartition(".")[2]
    examples = {"server_key": f'"{folder}/{component}.key" (the public key of the machine '
                              f'serving {component}: `moonpool keys generate {component}` there)',
                "client_key": f'"{folder}/orchestrator.key_secret" (this side\'s secret key: '
                              '`moonpool keys generate orchestrator` here)'}
    for k in paths:
        if k not in spec:
            continue
        value = spec[k]
        if not isinstance(value, str) or not value.strip():
            report.add(f"{key}.{k}", f"expected the path of a key file, e.g. {examples[k]}, "
                       f"got {kind_of(value)} {value!r}")
            continue
        path = Path(value).expanduser()
        if not path.is_absolute():
            path = base_dir / path
        try:
            if k == "server_key":
                read_public_server_key(path)
            else:
                read_key_pair(path)
        except KeyFileError as exc:
            report.add(f"{key}.{k}", str(exc).replace(str(path), value))
            continue
        paths[k] = path
    has_keys = "server_key" in spec or "client_key" in spec
    if has_keys:
        for k in paths:
            if k not in spec:
                other = "client_key" if k == "server_key" else "server_key"
                report.add(f"{key}.{k}", f"missing: {other} is given, and CURVE needs both, "
                           f"e.g. {k} = {examples[k]}")
        if insecure:
            report.add(f"{key}.insecure", "contradicts server_key/client_key; remove insecure "
                       "(the keys make the connection secure) or the keys")
    elif endpoint and leaves_loopback(endpoint) and not insecure:
        report.add(
            f"{key}.endpoint",
            f"{endpoint} leaves this machine and the rig gives no keys: the connection would "
            "be neither authenticated nor encrypted; add server_key = "
            f"{examples['server_key']} and client_key = {examples['client_key']} "
            "(`moonpool keys generate NAME`, docs/distributed.md), or insecure = true on a "
            "trusted network",
        )
    return paths["server_key"], paths["client_key"], insecure


@dataclass
class ReplaySpec:
    """What the rig says about a replay (``recording``, ``source``) and what the
    recording says of the component (from its summary and metadata only)."""

    active: bool = False
    """The component is a replay."""
    path: Path | None = None
    source: str = ""
    readable: bool = False
    """The recording was read and holds the component (else a problem was reported)."""
    schedule: Schedule | None = None
    """The recorded schedule, when the recording states it."""


def replay_of(
    report: Report, key: str, name: str, spec: Mapping[str, Any], placement: str, base_dir: Path
) -> ReplaySpec:
    """``recording`` and ``source`` of a ``run = "replay"`` component, checked against
    the recording (which must exist, be MCAP and hold the component's topics)."""
    from ..adapters.replay import ReplayError, inspect_recording

    if placement != "replay":
        for k in ("recording", "source"):
            if k in spec:
                report.add(
                    f"{key}.{k}",
                    f'is only used with run = "replay" (this component runs "{placement}"); '
                    'remove it or set run = "replay"',
                )
        return ReplaySpec()
    out = ReplaySpec(active=True, source=name)
    if "source" in spec:
        source = spec["source"]
        if not isinstance(source, str) or not NAME_RE.match(source):
            report.add(
                f"{key}.source",
                f"expected the component's name in the recording (letters, digits, _ and -), "
                f"got {source!r}",
            )
            return out
        out.source = source
    if "recording" not in spec:
        report.add(
            f"{key}.recording",
            'missing: a run = "replay" component replays a recording; add recording = '
            '"runs/NAME/recording.mcap" (relative to the rig file\'s folder)',
        )
        return out
    value = spec["recording"]
    if not isinstance(value, str) or not value.strip():
        report.add(
            f"{key}.recording",
            f"expected the path of a run's recording.mcap, got {kind_of(value)} {value!r}",
        )
        return out
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    out.path = path
    if not path.is_file():
        report.add(
            f"{key}.recording",
            f"recording '{value}' does not exist"
            + (f" ({path})" if str(path) != value else "")
            + "; give the path of a run's recording.mcap, relative to the rig file's folder",
        )
        return out
    try:
        recorded = inspect_recording(path, out.source)
    except ReplayError as exc:
        where = f"{key}.source" if "source" in spec and "has no messages" in exc.message else (
            f"{key}.recording")
        report.add(where, f"{exc.message}; {exc.fix}" if exc.fix else exc.message)
        return out
    if recorded.initialize_messages is None:
        report.add(
            f"{key}.recording",
            f"recording '{value}' does not say which messages Initialize published (no "
            "moonpool.initialize metadata: the recorded run failed during setup, or another "
            "program wrote it); record the run again with this version of moonpool",
        )
        return out
    out.readable = True
    out.schedule = recorded.schedule
    return out


@dataclass(frozen=True)
class CommandSpec:
    """What the rig says about a ``run = "command"`` component."""

    command: tuple[str, ...] = ()
    """The program and its arguments, placeholders unexpanded."""
    cwd: Path | None = None
    """Its working directory (absolute, inside the rig's folder)."""
    env: tuple[tuple[str, str], ...] = ()
    """Environment variables (name, template)."""


def command_of(
    report: Report, key: str, spec: Mapping[str, Any], placement: str, base_dir: Path,
    parameters: Mapping[str, Any],
) -> CommandSpec:
    """``command``, ``cwd`` and ``env`` of a ``run = "command"`` component: a non-empty
    list of strings whose placeholders the rig can fill, a folder inside the rig's
    folder that exists, a table of strings."""
    from ..adapters.command import placeholder_problem, placeholders_in

    if placement != "command":
        for k in ("command", "cwd", "env"):
            if k in spec:
                report.add(f"{key}.{k}", f'is only used with run = "command" (this component '
                           f'runs "{placement}"); remove it or set run = "command"')
        return CommandSpec()
    example = '["./camera_node", "--endpoint", "{endpoint}"]'

    def templates_ok(where: str, text: str) -> bool:
        try:
            names = placeholders_in(text)
        except ValueError as exc:
            report.add(where, f"{text!r}: {exc}")
            return False
        for name in names:
            problem = placeholder_problem(name, parameters)
            if problem:
                report.add(where, f"{text!r}: {problem}")
                return False
        return True

    command: tuple[str, ...] = ()
    if "command" not in spec:
        report.add(f"{key}.command", f'missing: a run = "command" component needs the program '
                   f"to start and its arguments, e.g. command = {example}")
    else:
        value = spec["command"]
        if (not isinstance(value, list) or not value
                or not all(isinstance(a, str) for a in value) or not value[0].strip()):
            report.add(f"{key}.command", f"expected a non-empty list of strings, the program "
                       f"first, e.g. {example}; got {kind_of(value)} {value!r}")
        else:
            ok = all([templates_ok(f"{key}.command[{i}]", a) for i, a in enumerate(value)])
            if ok:
                command = tuple(value)
                if not any("{endpoint}" in a for a in value):
                    report.add(f"{key}.command", "no argument holds {endpoint}: the program "
                               "must be told where to serve; add it, e.g. "
                               f"{example}")
                    command = ()
    cwd = base_dir.resolve()
    if "cwd" in spec:
        value = spec["cwd"]
        if not isinstance(value, str) or not value.strip():
            report.add(f"{key}.cwd", f"expected a folder inside the rig's folder, e.g. "
                       f'"build", got {kind_of(value)} {value!r}')
        else:
            path = (base_dir / value).resolve()
            if path != cwd and cwd not in path.parents:
                report.add(f"{key}.cwd", f"'{value}' is outside the rig file's folder; give a "
                           "folder inside it (relative to the rig file)")
            elif not path.is_dir():
                report.add(f"{key}.cwd", f"'{value}' is not a folder ({path}); create it or "
                           "correct the path (relative to the rig file)")
            else:
                cwd = path
    env: list[tuple[str, str]] = []
    if "env" in spec:
        value = spec["env"]
        if not isinstance(value, dict):
            report.add(f"{key}.env", f'expected a table of NAME = "value", e.g. env = '
                       f'{{ CAMERA_ID = "0" }}, got {kind_of(value)} {value!r}')
        else:
            for name, text in value.items():
                if not isinstance(text, str):
                    report.add(f"{key}.env.{name}", f"expected a string, got {kind_of(text)} "
                               f"{text!r}; put the value in quotes")
                elif not name or "=" in name:
                    report.add(f"{key}.env.{name}", "is not an environment variable name")
                elif templates_ok(f"{key}.env.{name}", text):
                    env.append((name, text))
    return CommandSpec(command, cwd, tuple(env))
