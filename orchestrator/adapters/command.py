"""CommandAdapter: a component in any language, started from the rig's command line.

Call order: the rig loader checks the template (:func:`placeholders_in`) →
``build_adapters`` creates a :class:`CommandAdapter` (the command is expanded with
:func:`expand` and spawned) → the adapter is driven exactly like a
:class:`~.process.ProcessAdapter` (configure, describe, initialize, steps, terminate)
→ ``close()``.

A ``run = "command"`` component is a program that serves the component protocol
(docs/protocol.md) on the endpoint it is given (``{endpoint}``, an ``ipc://`` path
the orchestrator chooses) and exits after its session ends. The orchestrator
supervises it like a Python process component:

- own session, so its own process group; stdout and stderr to ``logs/NAME.log``;
- its death is noticed while a reply is awaited (``ComponentCrashed``, quoting the
  log's last lines);
- ``close()`` (every exit path of a run: end, failure, Ctrl-C, SIGTERM) sends
  Terminate, waits up to 2 s, then SIGTERM and SIGKILL to the **process group**, and
  SIGKILL to the group again once the leader is gone, so helpers it forked die too;
- the orchestrator killed by SIGKILL: the child was started with
  ``PR_SET_PDEATHSIG = SIGKILL`` (set between fork and exec; Linux keeps it across
  exec), so the kernel kills it. What it forked itself is not covered: a component
  should also end its session after ``peer_timeout_ns`` of silence and then exit,
  and may watch ``MOONPOOL_PARENT_PID`` (docs/protocol.md §6).

Placeholders in ``command`` and ``env`` values: ``{endpoint}``, ``{instance}``,
``{rig_dir}``, ``{seed}``, ``{parameters.NAME}`` (a scalar parameter the rig sets:
strings as written, booleans ``true``/``false``, numbers as TOML writes them);
``{{`` and ``}}`` are literal braces.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from moonpool.components.sdk.errors import ComponentCrashed

from .process import ProcessAdapter

FIXED_PLACEHOLDERS = ("endpoint", "instance", "rig_dir", "seed")
"""Placeholders every command may use; ``parameters.NAME`` besides."""


def placeholders_in(template: str) -> list[str]:
    """The placeholder names in ``template``, in order. ValueError (with a message
    for the user) on unbalanced braces, a format spec or a conversion."""
    names = []
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if spec or conversion:
            raise ValueError(f"placeholder {{{name}...}} has a format spec or conversion; "
                             "write it plainly, e.g. {endpoint}")
        if not name:
            raise ValueError("empty placeholder {}; name one (e.g. {endpoint}) or write "
                             "{{}} for literal braces")
        names.append(name)
    return names


def placeholder_problem(name: str, parameters: Mapping[str, Any]) -> str:
    """'' when ``name`` is a placeholder the rig can fill, else what is wrong."""
    if name in FIXED_PLACEHOLDERS:
        return ""
    if name.startswith("parameters."):
        param = name.removeprefix("parameters.")
        if param not in parameters:
            return (f"{{{name}}} names parameter '{param}', which the rig does not set; "
                    f"set it under [parameters] or remove the placeholder")
        if not isinstance(parameters[param], (str, bool, int, float)):
            return (f"{{{name}}}: parameter '{param}' is not a string, number or boolean, "
                    "so it cannot be written into a command line")
        return ""
    known = ", ".join(f"{{{n}}}" for n in FIXED_PLACEHOLDERS)
    return (f"unknown placeholder {{{name}}}; use {known} or {{parameters.NAME}} "
            "(write {{ and }} for literal braces)")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def expand(template: str, values: Mapping[str, Any]) -> str:
    """``template`` with its placeholders replaced (checked by the rig loader)."""
    out = []
    for literal, name, _, _ in string.Formatter().parse(template):
        out.append(literal)
        if name is not None:
            out.append(_text(values[name]))
    return "".join(out)


def _pdeathsig_hook():
    """A preexec_fn that asks Linux to SIGKILL the child when the orchestrator dies
    (None where prctl is unavailable). The libc function is looked up before fork."""
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the orchestrator died before prctl took effect
            os._exit(1)

    return hook


class CommandAdapter(ProcessAdapter):
    """A foreign program started from ``command`` (see the module docstring)."""

    placement = "command"

    def __init__(
        self,
        name: str,
        command: tuple[str, ...],
        endpoint: str,
        *,
        cwd: Path,
        env: Mapping[str, str],
        values: Mapping[str, Any],
        log_path: Path | None = None,
        **kwargs,
    ) -> None:
        """``command`` and ``env`` are the rig's templates, ``values`` the placeholders'
        values except ``endpoint`` (given)."""
        self.entry = ""
        self.log_path = log_path
        self._log = None
        filled = {**values, "endpoint": endpoint}
        argv = [expand(a, filled) for a in command]
        program = argv[0]
        if os.sep in program:
            path = Path(program)
            argv[0] = str(path if path.is_absolute() else cwd / path)
        else:
            argv[0] = shutil.which(program) or program
        self.argv = argv
        child_env = dict(os.environ)
        child_env.update({k: expand(v, filled) for k, v in env.items()})
        child_env["MOONPOOL_ENDPOINT"] = endpoint
        child_env["MOONPOOL_INSTANCE"] = name
        child_env["MOONPOOL_PARENT_PID"] = str(os.getpid())
        try:
            self._spawn(argv, env=child_env, cwd=cwd, preexec_fn=_pdeathsig_hook())
        except OSError as exc:
            raise ComponentCrashed(
                f"cannot start {argv[0]} (command of run = \"command\"): "
                f"{exc.strerror or exc}",
                component=name,
                fix=f"check components.{name}.command and cwd: the program must exist and "
                    "be executable (a relative path is taken from cwd, a bare name from PATH)",
            ) from exc
        super(ProcessAdapter, self).__init__(name, endpoint, **kwargs)


def command_values(component: Any, seed: int) -> dict[str, Any]:
    """The placeholders' values for a ``ComponentConfig`` (all but ``endpoint``)."""
    values: dict[str, Any] = {"instance": component.name, "rig_dir": str(Path(component.base_dir).resolve()),
                              "seed": seed}
    for name, value in component.parameters.items():
        values[f"parameters.{name}"] = value
    return values
