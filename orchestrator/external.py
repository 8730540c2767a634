"""Driving an execution from outside: the caller makes one component's steps.

Call order::

    run = ExternalRun(rig, "controller", observe=["vehicle.state", "t1.setpoint"])
    run.input_types, run.output_types       the ports, known after construction
    t_ns, inputs = run.start()              setup, then execute until the external
                                            component's first step: the messages it
                                            receives there ({"vehicle.state": msg, ...})
    got = run.step({"wrench": msg})         that step's outputs; execute until the
                                            next step of the external component:
                                            (t_ns, inputs), or None once run.until is
                                            reached
    run.close()                             shutdown (metrics, digest); always call it

The component named in the rig (``controller``) is replaced by an
:class:`ExternalComponent` at the same schedule and the same place in the order: its
outputs (the replaced component's configured output ports, same names and types)
feed the rig's connections unchanged; its inputs are the output ports listed in
``observe`` (any component's; the connections that fed the replaced component are
dropped). Everything else is the rig: the same adapters, execution, algorithm and
message stream, so for the same rig, seed and outputs handed in, the digest
(``run.digest``) is the same in every run.

How: the execution runs in a thread of its own, and the external component's step
hands its inputs to the caller and waits for its outputs; exactly one of the two
threads works at any time, so nothing races. (Components in-process are therefore
stepped off the main thread: their step timeout is not enforced by SIGALRM.)
Used by the Gymnasium environment ``moonpool.gym`` (docs/gym.md).
"""

from __future__ import annotations

import dataclasses
import queue
import shutil
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from moonpool.components.sdk import wire
from moonpool.components.sdk.component import Component, Port
from moonpool.components.sdk.errors import MoonpoolError, RigValidationError, Problem
from moonpool.components.sdk.loading import load_entry

from .adapters.inprocess import InProcessAdapter
from .execution import Execution, configure_message
from .rig import ComponentConfig, ConnectionConfig, Rig

_END = object()


class ExternalComponent(Component):
    """A component whose steps are made by the caller of :class:`ExternalRun`
    (subclassed per run with its ``inputs`` and ``outputs``)."""

    def __init__(self, to_caller: queue.Queue, from_caller: queue.Queue) -> None:
        self._to, self._from = to_caller, from_caller

    def step(self, t_ns: int, dt_ns: int, inputs: Mapping[str, Any]) -> Mapping[str, Any]:
        self._to.put((t_ns, dict(inputs)))
        outputs = self._from.get()
        if outputs is _END:
            raise _Stopped()
        return outputs


class _Stopped(BaseException):
    """The caller closed the run before its end (unwinds the execution thread)."""


def describe_configured(rig: Rig, names: Sequence[str]) -> dict[str, Any]:
    """The Description of each named component configured with its rig parameters
    (its configured ports), made in-process and closed again."""
    out = {}
    for name in names:
        cfg = rig.component(name)
        if not cfg.entry:
            raise RigValidationError([Problem(str(rig.path), f"components.{name}",
                                              f"'{name}' has no entry to describe")])
        a = InProcessAdapter(name, load_entry(cfg.entry, cfg.base_dir)(),
                             step_timeout_ns=cfg.step_timeout_ns, base_dir=cfg.base_dir)
        try:
            a.configure(configure_message(rig, cfg))
            out[name] = a.describe()
        finally:
            a.close()
    return out


class ExternalRun:
    """One execution of ``rig`` with component ``name`` stepped by the caller
    (see the module docstring)."""

    def __init__(self, rig: Rig, name: str, observe: Sequence[str],
                 descriptions: Mapping[str, Any] | None = None) -> None:
        names = [c.name for c in rig.components]
        problems = []
        if name not in names:
            problems.append(Problem(str(rig.path), "components", f"no component '{name}' to "
                                    f"replace (components: {names})"))
        refs = []
        for ref in observe:
            comp, _, port = ref.partition(".")
            if comp not in names or not port or comp == name:
                problems.append(Problem(str(rig.path), "observe", f"{ref!r} is not COMPONENT.PORT "
                                        f"of another component (components: {names})"))
            refs.append((comp, port))
        if problems:
            raise RigValidationError(problems)
        self.rig, self.name = rig, name
        need = sorted({name, *[c for c, _ in refs]})
        descriptions = dict(descriptions or {})
        missing = [n for n in need if n not in descriptions]
        descriptions.update(describe_configured(rig, missing))
        self.descriptions = descriptions
        outs = {p.name: p.type for p in descriptions[name].outputs}
        self.output_types: dict[str, str] = outs
        self.input_types: dict[str, str] = {}
        for comp, port in refs:
            ports = {p.name: p.type for p in descriptions[comp].outputs}
            if port not in ports:
                problems.append(Problem(str(rig.path), "observe", f"'{comp}' has no output "
                                        f"'{port}' (outputs: {sorted(ports)})"))
                continue
            self.input_types[f"{comp}.{port}"] = ports[port]
        if problems:
            raise RigValidationError(problems)
        self._refs = refs
        self._thread: threading.Thread | None = None
        self.digest: str | None = None
        self.metrics: dict[str, Any] = {}
        self.error: BaseException | None = None
        self.time_ns = 0

    def _wired(self) -> Rig:
        """The rig with the external component in ``name``'s place."""
        rig, name = self.rig, self.name
        cfg = rig.component(name)
        ext = dataclasses.replace(cfg, entry="external", placement="inproc", parameters={},
                                  group="", endpoint="")
        comps = tuple(ext if c.name == name else c for c in rig.components)
        conns = [c for c in rig.connections if c.target != name]
        conns += [ConnectionConfig(comp, port, name, _port_name(comp, port))
                  for comp, port in self._refs]
        return dataclasses.replace(rig, components=comps, connections=tuple(conns))

    def _component(self, to_caller: queue.Queue, from_caller: queue.Queue) -> ExternalComponent:
        ins = tuple(Port(_port_name(c, p), wire.message_class(self.input_types[f"{c}.{p}"]),
                         f"{c}.{p}") for c, p in self._refs)
        outs = tuple(Port(p, wire.message_class(t), f"{self.name}.{p} (external)")
                     for p, t in self.output_types.items())
        cls = type(f"External_{self.name}", (ExternalComponent,),
                   {"inputs": ins, "outputs": outs, "__doc__": "external steps"})
        return cls(to_caller, from_caller)

    def start(self) -> tuple[int, dict[str, Any]] | None:
        """Set up and execute until the external component's first step."""
        if self._thread is not None:
            raise RuntimeError("ExternalRun.start() called twice; make a new ExternalRun")
        self._to: queue.Queue = queue.Queue()
        self._from: queue.Queue = queue.Queue()
        self._thread = threading.Thread(target=self._execute, name=f"moonpool-{self.name}",
                                        daemon=True)
        self._thread.start()
        return self._next()

    def _execute(self) -> None:
        from .run import RunObserver, build_adapters, wired_rig

        rig = self._wired()
        sock_dir = Path(tempfile.mkdtemp(prefix="moonpool-ext-"))
        adapters = {}
        execution = None
        observer = RunObserver(None)
        ok = False
        try:
            others = dataclasses.replace(rig, components=tuple(
                c for c in rig.components if c.name != self.name))
            adapters = build_adapters(others, sock_dir, None)
            adapters[self.name] = InProcessAdapter(
                self.name, self._component(self._to, self._from),
                step_timeout_ns=rig.component(self.name).step_timeout_ns)
            execution = Execution(wired_rig(rig), adapters, observer)
            execution.setup()
            execution.run()
            ok = True
        except _Stopped:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            self.error = exc
        finally:
            try:
                if execution is not None:
                    execution.shutdown(ok)
                    self.metrics = execution.metrics
                    self.time_ns = execution.time_ns
                else:
                    for a in adapters.values():
                        a.close()
            finally:
                shutil.rmtree(sock_dir, ignore_errors=True)
                self.digest = observer.digest.hexdigest()
                self._to.put(_END)

    def _next(self) -> tuple[int, dict[str, Any]] | None:
        got = self._to.get()
        if got is _END:
            self._thread.join()
            if self.error is not None:
                err, self.error = self.error, None
                raise err
            return None
        t_ns, inputs = got
        self.time_ns = t_ns
        return t_ns, {f"{c}.{p}": inputs[_port_name(c, p)] for c, p in self._refs
                      if _port_name(c, p) in inputs}

    def step(self, outputs: Mapping[str, Any]) -> tuple[int, dict[str, Any]] | None:
        """Hand the current step's outputs; execute until the next step (see the
        module docstring). A component's failure is raised here (a MoonpoolError)."""
        if self._thread is None or not self._thread.is_alive():
            raise RuntimeError("ExternalRun.step() without a running execution")
        self._from.put(dict(outputs))
        return self._next()

    def close(self) -> None:
        """Stop the execution if it still runs (components terminated, closed)."""
        if self._thread is not None and self._thread.is_alive():
            self._from.put(_END)
            while self._to.get() is not _END:
                self._from.put(_END)
            self._thread.join()
        self._thread = None if self._thread is None else self._thread


def _port_name(component: str, port: str) -> str:
    return f"{component}__{port}"


__all__ = ["ExternalComponent", "ExternalRun", "describe_configured", "MoonpoolError"]
