"""The execution: a multi-rate, fixed-step master over int64-nanosecond time.

Call order::

    execution = Execution(rig, adapters, observer)
    execution.setup()        configure every component, describe it (its configured
                             ports), check the wiring, initialize (initial outputs
                             are visible at t = 0)
    execution.run(progress)  step until rig.run.until_ns (a rig's [[scenario]] applied
                             by the Manipulator, orchestrator/scenario.py)
    execution.shutdown(ok)   terminate (when ok) and close every adapter; collect metrics

Time model (DESIGN.md "Time"): component c is stepped at its schedule's instants
t_k = offset + round(k·1e9/rate); the step at t_k advances it to t_{k+1}. The master
time T runs through the union of all instants; the components due at T are stepped
there, and only there, so nothing drifts. Components with the same schedule (rate
and offset) form a cohort: the master keeps one entry per cohort in its queue of
next instants and advances a cohort's time once per step, whatever its size.

Algorithms, for the components due at the same T:

- **Jacobi** (parallel): every due component reads the inputs visible at T; all are
  put to work at once (remote ones first), and their outputs become visible at
  T + dt_c (the end of their own step). Outputs are collected in rig order, so the
  stream never depends on which reply came back first.
- **Gauss-Seidel** (ordered): due components are stepped one after another in
  ``run.order`` (default: rig order); outputs are visible at T immediately, so a
  chain sensor -> controller -> vehicle adds no step of delay.

A connection may add a delay d: a message visible at V reaches the input at V + d.
An ordinary input holds the latest message delivered (sample and hold); a queued
input receives every message delivered since its previous step, in order.

Every produced message is handed to the observer (recorder and digest) in the
order it is produced, with log time = the instant it becomes visible. That order
is fixed by (T, component order, port order), hence deterministic.

**Collected when needed.** A step of a component in another process (``process``,
``remote``, a process group) is sent and then left to run: its reply is collected
only when something needs it: a consumer gathering inputs at a time when the
step's messages have been delivered (visible time + connection delay <= its time),
the component's own next step (or another step on the same connection), the end of
the run, or its step timeout. Meanwhile the orchestrator goes on with other
instants, so a slow step (a camera rendering for 9 ms at 30 Hz) spans ticks instead
of delaying every one of them, whenever the rig leaves it time (under Jacobi always
a whole period; under Gauss-Seidel when its consumers come later, e.g. through an
offset or a delay). In real-time mode replies are also collected while the pacer
waits for a deadline. Nothing about the results changes: inputs are fixed when a
step is sent, a message reaches an input at the same simulation time, and the
observer receives every message in the same order as if each step were collected
at once (a step sent and not yet collected holds its place in the stream; what
follows it is handed over when it is collected). After a failure the stream ends
before the first step that was not collected, as if the run had stopped there.
A remote component's step time (summary.json) is from sending the step to
collecting its reply.
"""

from __future__ import annotations

import heapq
import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import zmq
from google.protobuf.message import DecodeError

from moonpool.components.sdk import wire
from moonpool.components.sdk.errors import (
    MoonpoolError,
    PortError,
    Problem,
    RigValidationError,
    SimulationError,
)
from moonpool.v1 import lifecycle_pb2 as lc

from .adapters.base import Adapter, Sample
from .recording import recorded_class
from .rig import Rig
from .scenario import Manipulator

log = logging.getLogger("moonpool.execution")


def configure_message(rig: Rig, cfg: Any) -> lc.Configure:
    """The Configure a component of ``rig`` (its ComponentConfig ``cfg``) receives."""
    msg = lc.Configure(
        instance_name=cfg.name,
        seed=rig.run.seed,
        period_ns=cfg.schedule.nominal_period_ns,
        peer_timeout_ns=rig.run.peer_timeout_ns,
    )
    for key, value in cfg.parameters.items():
        msg.parameters.add(name=key, value=wire.to_parameter_value(value))
    return msg


class Observer(Protocol):
    """Sees every message of the execution, in the canonical order."""

    def add_topic(self, topic: str, type_name: str, extra_schemas: bytes = b"") -> int: ...

    def write(self, channel_id: int, log_time_ns: int, payload: bytes, attachment: Any = None) -> None: ...


def t0_input_warnings(rig: Rig, descriptions: Mapping[str, Any]) -> list[str]:
    """What a component that takes its inputs at t0 (``Description.initial_inputs``, an
    FMU in initialization mode) will not get: components are initialized in rig order,
    so an input fed by another such component listed later has no t0 value; and a
    cycle of such components is an algebraic loop at t0, which moonpool does not solve
    (each is initialized with the others' outputs as far as the order makes them)."""
    order = {c.name: i for i, c in enumerate(rig.components)}
    takes = {n for n, d in descriptions.items() if d.initial_inputs}
    out: list[str] = []
    edges: dict[str, set[str]] = {}
    for c in rig.connections:
        if c.target not in takes or c.delay_ns:
            continue
        edges.setdefault(c.source, set()).add(c.target)
        if c.source in takes and order[c.source] > order[c.target]:
            out.append(f"components.{c.target}: its input {c.target_port} has no value at t0 "
                       f"({c.source} is initialized after it; connection {c}) — list "
                       f"{c.source} before {c.target} in the rig if {c.target} needs it at t0")
    # cycles through components that take t0 inputs: algebraic loops at t0
    seen: set[tuple[str, ...]] = set()

    def walk(start: str, node: str, path: list[str]) -> None:
        for nxt in sorted(edges.get(node, ())):
            if nxt == start:
                cyc = path[path.index(min(path)):] + path[:path.index(min(path))]
                if tuple(cyc) not in seen:
                    seen.add(tuple(cyc))
                    out.append("algebraic loop at t0: " + " -> ".join(cyc + [cyc[0]])
                               + " all take their inputs at t0; moonpool initializes them in "
                               "rig order and does not iterate the loop (break it with a "
                               "connection delay, or make one of them not feed through)")
            elif nxt in takes and nxt not in path:
                walk(start, nxt, path + [nxt])

    for n in sorted(takes):
        walk(n, n, [n])
    return out


@dataclass
class _Input:
    """An input port of one component, fed by at most one connection."""

    port: str
    queued: bool
    queue: deque = field(default_factory=deque)  # (deliver_time_ns, Sample)
    held: Sample | None = None


@dataclass
class _Slot:
    """Execution state of one component."""

    index: int
    name: str
    adapter: Adapter
    schedule: Any
    inputs: dict[str, _Input] = field(default_factory=dict)
    # output port -> list of (target input, delay_ns)
    routes: dict[str, list[tuple[_Input, int]]] = field(default_factory=dict)
    channels: dict[str, int] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    # output port -> (observer channel, type name, routes): one lookup per message
    outs: dict[str, tuple[int, str, list[tuple[_Input, int]]]] = field(default_factory=dict)
    remote: bool = False  # stepped by another process (sent first under Jacobi)
    # (source slot, delay) of every connection into this slot from a remote one
    feeders: list[tuple["_Slot", int]] = field(default_factory=list)

    t_now: int = 0
    t_next: int = 0
    cohort: "_Cohort | None" = None  # the slots stepped at the same instants (set by Execution)

    def __post_init__(self) -> None:
        self.t_now = self.schedule.instant(0)
        self.t_next = self.schedule.instant(1)
        self.remote = self.adapter.placement != "inproc"
        self.conn_id = id(self.adapter.connection)  # its connection (a group's is shared)

    @property
    def steps(self) -> int:
        """Steps taken (whole ticks: a tick that failed part-way is not counted)."""
        return self.cohort.steps if self.cohort is not None else 0


class _Cohort:
    """The slots with the same schedule (rate and offset): stepped at the same instants,
    so the execution keeps one heap entry and one advance per cohort, not per slot.
    ``members`` are in stepping order (rank)."""

    __slots__ = ("id", "rank", "members", "k", "steps", "t_now", "t_next", "_num", "_p",
                 "_den", "_offset")

    def __init__(self, cid: int, members: list[_Slot], rank: int) -> None:
        self.id = cid
        self.rank = rank  # the first member's rank: orders cohorts due at the same time
        self.members = members
        self.k = 0
        self.steps = 0
        schedule = members[0].schedule
        self.t_now = schedule.instant(0)
        self.t_next = schedule.instant(1)
        # Schedule.instant's integer formula with its constants taken out of the
        # Fraction once (advance() runs at every instant).
        p, q = schedule.rate_hz.numerator, schedule.rate_hz.denominator
        self._num, self._p, self._den = 2 * 1_000_000_000 * q, p, 2 * p
        self._offset = schedule.offset_ns
        for s in members:
            s.cohort = self

    def advance(self) -> None:
        """Move every member to the next instant of the schedule (computed once)."""
        self.k = k = self.k + 1
        self.steps += 1
        self.t_now = t_now = self.t_next
        self.t_next = t_next = self._offset + ((k + 1) * self._num + self._p) // self._den
        for s in self.members:
            s.t_now = t_now
            s.t_next = t_next


class _Hole:
    """A step sent and not collected yet: its place in the message stream, and when
    its messages become visible."""

    __slots__ = ("slot", "visible_ns", "end_ns", "deadline", "rows", "request", "taken")

    def __init__(self, slot: _Slot, visible_ns: int, deadline: float) -> None:
        self.slot = slot
        self.visible_ns = visible_ns
        self.end_ns = slot.t_next  # the end of the step (the slot advances before collection)
        self.deadline = deadline  # time.monotonic() after which it is overdue
        self.rows: list | None = None  # the observer writes, once collected
        self.request = slot.adapter.connection.last_request_id  # its request (a group's batch)
        self.taken = False  # collected, or being collected


class Execution:
    """Steps the components of one rig (see the module docstring)."""

    def __init__(self, rig: Rig, adapters: dict[str, Adapter], observer: Observer) -> None:
        self.rig = rig
        self.adapters = adapters
        self.observer = observer
        self.slots = [
            _Slot(i, c.name, adapters[c.name], c.schedule) for i, c in enumerate(rig.components)
        ]
        self.by_name = {s.name: s for s in self.slots}
        if rig.run.algorithm == "gauss-seidel":
            order = rig.run.order or tuple(c.name for c in rig.components)
            self._rank = {name: i for i, name in enumerate(order)}
        else:
            self._rank = {s.name: s.index for s in self.slots}
        # The slots that share a schedule step together: one cohort each, in rank order.
        same: dict[tuple[Any, int], list[_Slot]] = {}
        for s in sorted(self.slots, key=lambda s: self._rank[s.name]):
            same.setdefault((s.schedule.rate_hz, s.schedule.offset_ns), []).append(s)
        self.cohorts = [_Cohort(i, members, self._rank[members[0].name])
                        for i, members in enumerate(same.values())]
        self.time_ns = 0
        self.ticks = 0
        self.finished: tuple[str, int, str, bool] | None = None
        """(component, time ns, why, failed) of the step that ended the simulation
        (StepResult.finished, .failed): the run stops after that instant."""
        # Real-time mode (orchestrator/realtime.py): called with each tick's time
        # before anything is stepped; it waits for the tick's wall-clock deadline.
        self.pace: Callable[[int], None] | None = None
        self.messages = 0
        self.metrics: dict[str, Any] = {}
        self._remote = [s.adapter for s in self.slots if s.adapter.placement != "inproc"]
        # Heartbeats go per connection: the members of a process group share one.
        self._connections = list({id(c): c for c in (a.connection for a in self._remote)}.values())
        # cohort id, or a tuple of them (several due at one instant) -> that tick's
        # (due slots in rank order, remote sends, in-process slots, cohorts)
        self._plans: dict[Any, tuple[list, list, list, list]] = {}
        # Where _publish hands messages: the observer, or (while stepping other
        # processes under Jacobi) a list written out once the next instant's steps
        # have been sent, so hashing and recording overlap with the components' work
        # instead of delaying their next step. The order is the same.
        self._write = observer.write
        self._observer_idle = getattr(observer, "idle", None)
        self._pending: list[Any] = []  # write arguments (tuples) and _Holes, in order
        # slot index -> its steps sent and not collected yet, oldest first (one; two for
        # a member of a pipelined process group)
        self._holes: dict[int, list[_Hole]] = {}
        # (while _prepare tells waits apart: each hole it collects, and whether its
        # reply was in when the collection began)
        self._collect_log: list[tuple[_Hole, bool]] | None = None
        self._busy: dict[int, list[_Hole]] = {id(c): [] for c in self._connections}
        """id(connection) -> its steps sent and not collected, in order"""
        self._pipelined = ({id(c) for c in self._connections if getattr(c, "pipelined", False)}
                           if rig.run.algorithm == "jacobi" else set())
        """id(connection) of the process groups whose next batch may be sent before the
        previous one is answered (two in flight; Jacobi only)"""
        self._first_deadline = float("inf")  # no step sent is overdue before this
        self._due: list[_Slot] = []  # the components due at the current tick
        self._waiting: set[int] = set()  # id(connection) whose reply is being waited for
        self._sweep_s = rig.run.heartbeat_interval_ns * 0.25e-9
        self._next_sweep = 0.0
        self.manipulator: Manipulator | None = None  # the rig's [[scenario]], if any
        self.local_connections: list[Any] = []
        """The rig's connections delivered inside a process group (adapters/group.py)."""
        self.shutdown_failed: str | None = None
        """The first component whose Terminate failed in :meth:`shutdown` (no answer,
        an Error, metrics that do not parse), for summary.json's failed_component."""

    # -- setup -------------------------------------------------------------------

    def setup(self) -> None:
        # Configure first: a component's ports may depend on its parameters (an FMU's
        # come from its mapping), and Describe after Configure gives the configured ones.
        for s in self.slots:
            s.adapter.configure(configure_message(self.rig, self.rig.component(s.name)))
        descriptions = {s.name: s.adapter.describe() for s in self.slots}
        self._wire(descriptions)
        if self.rig.scenarios:
            self.manipulator = Manipulator(self.rig, descriptions, self.observer.add_topic,
                                           {s.name: s.index for s in self.slots})
        for a in self._connections:
            a.idle = self._idle
        self.t0_warnings = t0_input_warnings(self.rig, descriptions)
        for w in self.t0_warnings:
            log.warning("%s", w)
        for s in self.slots:
            t0 = s.t_now
            if descriptions[s.name].initial_inputs:  # e.g. an FMU: inputs in initialization mode
                self._publish(s, s.adapter.initialize(t0, self._held(s, t0)), t0)
            else:
                self._publish(s, s.adapter.initialize(t0), t0)

    def _wire(self, descriptions: dict[str, lc.Description]) -> None:
        """Check connections against what the components say they are; build routes."""
        problems = []
        file = str(self.rig.path)
        for s in self.slots:
            d = descriptions[s.name]
            for p in d.inputs:
                s.inputs[p.name] = _Input(p.name, p.queued)
            for p in d.outputs:
                s.routes[p.name] = []
                s.types[p.name] = p.type
                s.channels[p.name] = self.observer.add_topic(
                    f"/{s.name}/{p.name}", p.type, d.extra_schemas
                )
        connected: set[int] = set()
        # Connections inside a process group that its server delivers (the routes its
        # child was started with, group.py): checked here like any other, then neither
        # routed nor gathered by the execution.
        local = {(r.source, r.source_port, r.target, r.target_port, r.delay_ns)
                 for a in self._connections for r in getattr(a, "local_routes", ())}

        def who(name: str) -> str:  # a remote component: where, and what answered there
            a = self.by_name[name].adapter
            if a.placement != "remote":
                return f"'{name}'"
            return f"'{name}' (served at {a.endpoint} as {descriptions[name].kind or '?'})"

        for i, c in enumerate(self.rig.connections):
            key = f"connections[{i}]"
            src, dst = self.by_name[c.source], self.by_name[c.target]
            outs = {p.name: p for p in descriptions[c.source].outputs}
            ins = {p.name: p for p in descriptions[c.target].inputs}
            if c.source_port not in outs:
                problems.append(Problem(file, key + ".from", f"{who(c.source)} has no output "
                                        f"'{c.source_port}' (outputs: {sorted(outs)})"))
                continue
            if c.target_port not in ins:
                problems.append(Problem(file, key + ".to", f"{who(c.target)} has no input "
                                        f"'{c.target_port}' (inputs: {sorted(ins)})"))
                continue
            if outs[c.source_port].type != ins[c.target_port].type:
                problems.append(Problem(
                    file, key, f"{c}: output type {outs[c.source_port].type} of "
                    f"{who(c.source)} does not match input type {ins[c.target_port].type} of "
                    f"{who(c.target)}"))
                continue
            if outs[c.source_port].attachment and not ins[c.target_port].attachment:
                problems.append(Problem(
                    file, key, f"{c}: output '{c.source_port}' of {who(c.source)} carries "
                    f"attachments (e.g. image pixels) but input '{c.target_port}' of "
                    f"{who(c.target)} does not take them: declare the input with "
                    "attachment=True (Port(..., attachment=True); PortSpec.attachment)"))
                continue
            target = dst.inputs[c.target_port]
            if id(target) in connected:
                problems.append(Problem(file, key + ".to", f"input {c.target}.{c.target_port} "
                                        "is already connected; an input takes one connection"))
                continue
            connected.add(id(target))
            if (c.source, c.source_port, c.target, c.target_port, c.delay_ns) in local:
                del dst.inputs[c.target_port]
                self.local_connections.append(c)
            else:
                src.routes[c.source_port].append((target, c.delay_ns))
        if problems:
            raise RigValidationError(problems)
        for s in self.slots:
            attached = {p.name for p in descriptions[s.name].outputs if p.attachment}
            s.outs = {p: (s.channels[p], s.types[p], s.routes[p],
                          self._parser(s, p, descriptions[s.name]) if s.remote else None,
                          p in attached)
                      for p in s.routes}
        for c in self.rig.connections:
            src = self.by_name[c.source]
            if src.remote and c not in self.local_connections:
                self.by_name[c.target].feeders.append((src, c.delay_ns))

    @staticmethod
    def _parser(s: _Slot, port: str, description: lc.Description) -> Any:
        """The message class the outputs of ``port`` of another process are checked
        with: moonpool's, else the one its Description's extra_schemas declare."""
        try:
            return recorded_class(s.types[port], bytes(description.extra_schemas))
        except PortError as exc:
            raise PortError(
                f"output '{port}' has type {s.types[port]}, which neither moonpool nor the "
                f"component's Description.extra_schemas declares ({exc.message})",
                component=s.name,
                fix="put the .proto file defining the type (and its imports) into "
                    "Description.extra_schemas (docs/protocol.md, Describe)") from exc

    # -- stepping ------------------------------------------------------------------

    def _idle(self) -> None:
        """Run while waiting on a slow component: keep the others alive (and let the
        observer write out what it holds, e.g. the recorder's open chunk)."""
        now = time.monotonic()
        if self._observer_idle is not None:
            self._observer_idle(now)
        if self._holes:
            self._sweep(now)
        for a in self._connections:
            a.keepalive(now)

    def _defer(self, channel: int, log_time_ns: int, payload: bytes, attachment: Any) -> None:
        self._pending.append((channel, log_time_ns, payload, attachment))

    def _write_pending(self) -> None:
        """Hand the deferred messages to the observer, in the order they were published,
        up to the first step that has not been collected."""
        pending = self._pending
        write = self.observer.write
        n = 0
        for item in pending:
            if item.__class__ is _Hole:
                if item.rows is None:
                    break
                for args in item.rows:
                    write(*args)
            else:
                write(*item)
            n += 1
        if n == len(pending):
            pending.clear()
        else:
            del pending[:n]

    def _hole(self, s: _Slot, visible_ns: int) -> None:
        """``s``'s step was sent: it holds its place in the stream until collected."""
        deadline = time.monotonic() + s.adapter.step_timeout_s
        hole = _Hole(s, visible_ns, deadline)
        outstanding = self._holes.get(s.index)
        if outstanding is None:
            self._holes[s.index] = [hole]
        else:
            outstanding.append(hole)
        self._busy[s.conn_id].append(hole)
        self._pending.append(hole)
        if deadline < self._first_deadline:
            self._first_deadline = deadline

    def _collect(self, hole: _Hole) -> None:
        """Wait for a sent step's reply and deliver its messages (routes and stream)."""
        if hole.taken:
            return  # collected meanwhile (while waiting for another reply)
        hole.taken = True
        s = hole.slot
        log = self._collect_log
        if log is not None:
            log.append((hole, self._reply_in(hole)))
        outstanding = self._holes[s.index]
        if len(outstanding) == 1:
            del self._holes[s.index]
        else:
            outstanding.remove(hole)
        conn = s.conn_id
        busy = self._busy[conn]
        if busy[0] is hole:
            del busy[0]
        else:
            busy.remove(hole)
        self._waiting.add(conn)
        try:
            samples = s.adapter.finish_step()
        finally:
            self._waiting.discard(conn)
        rows: list = []
        self._publish(s, samples, hole.visible_ns, hole.end_ns, rows)
        hole.rows = rows

    def _sweep(self, now: float) -> None:
        """Collect the steps whose replies have arrived (without waiting), at most every
        quarter of the heartbeat interval: a component that has answered is watched by
        heartbeats again, so a cut link is noticed within the peer timeout, not only
        when its step is needed."""
        if now < self._next_sweep:
            return
        self._next_sweep = now + self._sweep_s
        for conn in {id(c): c for c in self._busy_connections()}.values():
            if id(conn) in self._waiting:
                continue
            if conn.reply_ready():
                self._collect_oldest(self._busy.get(id(conn)))

    def _need(self, s: _Slot, t: int) -> None:
        """Collect what ``s`` needs before its step at ``t``: sent steps on its
        connection (one request at a time; a pipelined process group under Jacobi may
        have one batch unanswered when the next is sent), and those of its sources
        whose messages reach it by ``t``."""
        busy = self._busy.get(s.conn_id)
        if busy:
            if s.conn_id in self._pipelined:
                last = busy[-1].request
                while busy and busy[0].request != last:
                    self._collect(busy[0])
            else:
                while busy:
                    self._collect(busy[0])
        holes = self._holes
        for src, delay in s.feeders:
            outstanding = holes.get(src.index)
            if outstanding is not None:
                for hole in reversed(outstanding):  # the newest whose messages reach s by t
                    if hole.visible_ns + delay <= t:
                        self._collect_through(hole)
                        break

    def _busy_connections(self) -> list[Any]:
        """The connections with steps sent and not collected."""
        return [h[0].slot.adapter.connection for h in self._holes.values()]

    def _collect_through(self, hole: _Hole) -> None:
        """Collect ``hole`` and the steps sent before it on its connection (replies
        come in the order the requests went)."""
        busy = self._busy[hole.slot.conn_id]
        while busy and busy[0] is not hole and busy[0].request < hole.request:
            self._collect(busy[0])
        self._collect(hole)

    def _collect_oldest(self, busy: list[_Hole] | None) -> None:
        """Collect the steps of the oldest request on a connection (whose reply is in)."""
        if busy:
            first = busy[0].request
            while busy and busy[0].request == first:
                self._collect(busy[0])

    def _prepare(self, paced: bool = True) -> str | None:
        """Collect what the steps due at this tick need from earlier ticks (their
        sources' messages delivered by now, their processes' previous steps); the
        pacer calls it before the deadline, so waiting here makes the tick late.

        ``paced``: returns the step it waited for longest ("camera's step of t = … s,
        waited … ms"), for the pacer's overrun message, or None when it waited for
        none: nothing was outstanding, or every reply it collected was in already
        when its collection began (only collecting them took time; after a late wake-up that is
        the machine's lateness, not a step still running). A pipelined group's later
        batch, collected after the one in flight, counts as waited for."""
        t = self.time_ns
        if not self._holes:
            return None
        if not paced:
            for s in self._due:
                self._need(s, t)
            return None
        longest, what = 0.0, None
        clock = time.monotonic
        log = self._collect_log = []
        try:
            for s in self._due:
                del log[:]
                t0 = clock()
                self._need(s, t)
                waited = clock() - t0
                for h, was_in in reversed(log):  # the last one it had to wait for
                    if not was_in:
                        if waited > longest:
                            longest = waited
                            what = (f"{h.slot.name}'s step ending at t = "
                                    f"{h.end_ns * 1e-9:.6f} s, waited for "
                                    f"{waited * 1e3:.3f} ms")
                        break
        finally:
            self._collect_log = None
        return what

    @staticmethod
    def _reply_in(hole: _Hole) -> bool:
        """Whether the reply ``hole``'s collection needs is in already (read without
        waiting, and kept for the collection): its request was answered before (a
        process group's batch, collected for an earlier member), or its reply has
        arrived. A request queued behind the one in flight is not in."""
        conn = hole.slot.adapter.connection
        rid = conn.in_flight_request
        if rid is None or hole.request < rid:
            return True
        return hole.request == rid and conn.reply_ready()

    def collect_all(self) -> None:
        """Collect every step sent and not collected yet, in stream order."""
        for item in list(self._pending):
            if item.__class__ is _Hole and item.rows is None:
                self._collect_through(item)

    def _collect_overdue(self, now: float) -> None:
        """Collect (and so fail on) steps past their timeout that nobody needed yet."""
        if now <= self._first_deadline:  # (a bound: the earliest of the steps sent so far)
            return
        for hole in [h for hs in self._holes.values() for h in hs if now > h.deadline]:
            self._collect_through(hole)
        self._first_deadline = min((h.deadline for hs in self._holes.values() for h in hs),
                                   default=float("inf"))

    def wait(self, seconds: float) -> str | None:
        """Sleep for ``seconds`` (the pacer's sleep), collecting the replies of sent
        steps as they arrive: their messages are routed during the slack, and their
        step times are the time to the reply, not to the next tick that needs it.
        Returns, when collecting a reply carried it past its end, what it collected
        and how long that took (for the pacer's overrun message), else None."""
        end = time.monotonic() + seconds
        while self._holes:
            left = end - time.monotonic()
            if left <= 0:
                return None
            conns = list({id(c): c for c in self._busy_connections()}.values())
            # A reply read already by ``reply_ready`` and not taken is no longer in its
            # socket: collect it without polling. (Every reader now collects at once
            # — prepare since b4ce593 — so this guards the invariant, at one attribute
            # read per connection and wait.)
            got = [c for c in conns if c.reply_read]
            if not got:
                poller = zmq.Poller()
                for conn in conns:
                    poller.register(conn.sock, zmq.POLLIN)
                ready = dict(poller.poll(left * 1000))
                if not ready or time.monotonic() > end:
                    # Woken after its end (the machine woke this thread late): what came
                    # in is collected by the tick's prepare, where a reply that is in is
                    # no step still running.
                    return None
                got = [c for c in conns if c.sock in ready]
            for conn in got:
                if conn.reply_ready():  # not just a heartbeat answer
                    busy = self._busy.get(id(conn))
                    names = [h.slot.name for h in busy or () if h.request == busy[0].request]
                    t0 = time.monotonic()
                    self._collect_oldest(busy)
                    done = time.monotonic()
                    if done > end:  # (the rest is collected when the tick needs it)
                        return (f"collecting {' and '.join(names)}'s reply while waiting took "
                                f"{(done - t0) * 1e3:.3f} ms")
        left = end - time.monotonic()
        if left > 0:
            time.sleep(left)
        return None

    def _publish(self, slot: _Slot, samples: list[Sample], visible_ns: int,
                 end_ns: int | None = None, rows: list | None = None) -> None:
        """Route ``samples`` and hand them to the observer (or, given ``rows``, append
        their observer writes there: a collected step's place in the stream)."""
        if self.finished is not None:  # a component ended the simulation: nothing after it
            if (slot.t_next if end_ns is None else end_ns) > self.finished[1]:
                return
        write = self._write
        append = None if rows is None else rows.append
        outs = slot.outs
        remote = slot.remote
        if remote and len(samples) > len(outs):  # at most one value per port (protocol §4)
            slot.adapter.failed = True
            raise SimulationError(
                f"sent {len(samples)} output values for {len(outs)} output port(s)",
                component=slot.name, fix="send at most one value per output port per step")
        for sample in samples:
            out = outs.get(sample.port)
            if out is None or out[1] != sample.type_name:
                self._bad_output(slot, samples, sample, (
                    f"produced a message on undeclared output '{sample.port}'" if out is None
                    else f"produced a message on output '{sample.port}' as "
                         f"{sample.type_name}, declared {out[1]}"),
                    "send only the declared ports and types")
            if sample.attachment is not None and not out[4]:
                self._bad_output(slot, samples, sample, (
                    f"sent an attachment on output '{sample.port}', which does not carry "
                    "attachments (its Description says attachment = false)"),
                    "send attachments only on ports declared with attachment = true")
            if remote:
                # Untrusted bytes from another process: parsed (the decoded message kept
                # for in-process consumers) before anything records or routes them,
                # Initialize outputs as well as Step outputs.
                try:
                    sample._message = out[3].FromString(sample.payload)
                except (DecodeError, RuntimeError, ValueError) as exc:
                    self._bad_output(slot, samples, sample, (
                        f"sent an output '{sample.port}' that is not a valid "
                        f"{sample.type_name} ({exc})"),
                        f"send {sample.type_name} serialized by protobuf")
            if append is None:
                write(out[0], visible_ns, sample.payload, sample.attachment)
            else:
                append((out[0], visible_ns, sample.payload, sample.attachment))
            for target, delay in out[2]:
                target.queue.append((visible_ns + delay, sample))
        self.messages += len(samples)
        if slot.adapter.finished and self.finished is None:
            self.finished = (slot.name, slot.t_next if end_ns is None else end_ns,
                             slot.adapter.finished, slot.adapter.finished_failed)

    def _bad_output(self, slot: _Slot, samples: list[Sample], sample: Sample, what: str,
                    fix: str) -> None:
        """Fail the run on a message ``slot`` should not have sent, naming the sender
        (not the consumer that would have choked on it); nothing of it is recorded."""
        self.messages += samples.index(sample)
        slot.adapter.failed = True
        raise SimulationError(what, component=slot.name, fix=fix)

    def _plan(self, key: Any) -> tuple[list, list, list, list]:
        """A tick's plan (cached per set of due cohorts, ``key``): the due slots in
        rank order; under Jacobi the remote ones in order, each with whether to flush
        its connection after it (after the last due member of a process group, so a
        group's batch leaves while the next group's is still being built), then the
        in-process ones; and the cohorts, to advance after the tick."""
        cohorts = [self.cohorts[i] for i in (key if key.__class__ is tuple else (key,))]
        rank = self._rank
        due = sorted((s for c in cohorts for s in c.members), key=lambda s: rank[s.name])
        remote = [s for s in due if s.remote]
        last = {id(s.adapter.connection): s for s in remote}
        sends = [(s, last[id(s.adapter.connection)] is s) for s in remote]
        plan = self._plans[key] = (due, sends, [s for s in due if not s.remote], cohorts)
        return plan

    @staticmethod
    def _gather(slot: _Slot, t_ns: int) -> dict[str, Any]:
        inputs: dict[str, Any] = {}
        for name, inp in slot.inputs.items():
            q = inp.queue
            if inp.queued:
                got = []
                while q and q[0][0] <= t_ns:
                    got.append(q.popleft()[1])
                inputs[name] = got
            else:
                while q and q[0][0] <= t_ns:
                    inp.held = q.popleft()[1]
                if inp.held is not None:
                    inputs[name] = inp.held
        return inputs

    @staticmethod
    def _held(slot: _Slot, t_ns: int) -> dict[str, Any]:
        """The held inputs visible at ``t_ns``, for Initialize: a queued input's messages
        stay queued for the first step (as for a component without initial inputs)."""
        inputs: dict[str, Any] = {}
        for name, inp in slot.inputs.items():
            if not inp.queued:
                q = inp.queue
                while q and q[0][0] <= t_ns:
                    inp.held = q.popleft()[1]
                if inp.held is not None:
                    inputs[name] = inp.held
        return inputs

    def run(self, progress: Callable[[int], None] | None = None) -> None:
        """Step until ``rig.run.until_ns``. Raises SimulationError / ComponentError."""
        until = self.rig.run.until_ns
        heap = [(c.t_now, c.rank, c.id) for c in self.cohorts]
        heapq.heapify(heap)
        jacobi = self.rig.run.algorithm == "jacobi"
        if self._remote:
            self._write = self._defer
        try:
            self._loop(until, heap, jacobi, progress)
            self.collect_all()
        finally:
            self.end_stream()
        self.time_ns = until if self.finished is None else min(until, self.finished[1])

    def end_stream(self) -> None:
        """Hand the observer the messages held back, up to the first step not collected
        (the end of ``run``; or a run ended from another thread while its main thread is
        stuck in a component's native code, orchestrator/adapters/inprocess.py)."""
        self._write = self.observer.write
        self._write_pending()

    def _loop(self, until: int, heap: list, jacobi: bool,
              progress: Callable[[int], None] | None) -> None:
        has_remote = bool(self._remote)
        connections = self._connections
        gather, publish, need = self._gather, self._publish, self._need
        manipulator = self.manipulator
        if manipulator is not None:  # scenario: overridden input fields replaced
            plain, override = gather, manipulator.override

            def gather(s: _Slot, t: int) -> dict[str, Any]:
                return override(s.index, plain(s, t))
        hole = self._hole
        heappop, heappush = heapq.heappop, heapq.heappush
        plans = self._plans
        last_progress = time.monotonic()
        while heap and heap[0][0] < until and self.finished is None:
            t = heap[0][0]
            key = heappop(heap)[2]  # the due cohorts: one id, or a tuple of them
            if heap and heap[0][0] == t:
                key = [key]
                while heap and heap[0][0] == t:
                    key.append(heappop(heap)[2])
                key = tuple(key)
            due, sends, local, cohorts = plans.get(key) or self._plan(key)
            self.time_ns = t
            self._due = due
            if self.pace is not None:
                self.pace(t, self._prepare if has_remote else None)
            elif has_remote:
                self._prepare(False)
            finished = self.finished
            if finished is not None and (t >= finished[1] if jacobi else t > finished[1]):
                # A step collected just now ended the simulation at or before this instant:
                # nothing stepped here could be published (Jacobi: visible after the end),
                # and a component that asked to end must not be stepped past it (a
                # pipelined group's next batch may have gone out before its reply came).
                break
            if manipulator is not None:  # this tick's scenario changes, recorded first
                manipulator.tick(t, due, self._write)
            if jacobi:
                # Collect what this instant needs; put remote components to work (a
                # process group's batch is sent as soon as its last due member is in
                # it); hand over the messages collected so far while they work;
                # compute in-process ones. Each remote step holds its place in the
                # stream (rig order) until collected, at the latest at its next step.
                for s, flush in sends:
                    s.adapter.start_step(t, s.t_next - t, gather(s, t))
                    if flush:
                        s.adapter.flush()
                if self._pending:
                    self._write_pending()
                if not sends:  # all in-process: published in order as they are stepped
                    for s in local:  # (visible at t_next > t: no input of this instant sees them)
                        publish(s, s.adapter.step(t, s.t_next - t, gather(s, t)), s.t_next)
                else:
                    results = {}
                    for s in local:
                        results[s.index] = s.adapter.step(t, s.t_next - t, gather(s, t))
                    for s in due:  # heap order == rank == index for Jacobi
                        if s.remote:
                            hole(s, s.t_next)
                        else:
                            publish(s, results[s.index], s.t_next)
            else:
                for s in due:  # heap order == Gauss-Seidel rank
                    if has_remote:
                        need(s, t)  # the steps of this instant earlier in the order
                    if s.remote:
                        s.adapter.start_step(t, s.t_next - t, gather(s, t))
                        s.adapter.flush()
                        hole(s, t)
                    else:
                        publish(s, s.adapter.step(t, s.t_next - t, gather(s, t)), t)
                if self._pending:
                    self._write_pending()
            for c in cohorts:
                c.advance()
                heappush(heap, (c.t_now, c.rank, c.id))
            self.ticks += 1
            if has_remote or progress is not None:
                now = time.monotonic()
                if has_remote:
                    if self._holes:
                        self._collect_overdue(now)
                        self._sweep(now)
                    for a in connections:
                        a.keepalive(now)
                if progress is not None and now - last_progress > 0.2:
                    last_progress = now
                    progress(t)

    # -- shutdown ------------------------------------------------------------------

    def shutdown(self, ok: bool) -> list[str]:
        """Terminate (healthy components, when ``ok`` or to salvage metrics) and close all.
        Returns the problems met on the way (they do not raise).

        After a failure (``ok`` false) the components of ``run.safe_stop`` are terminated
        first, in that order (the safe-stop actions: an MCU bridge zeroes the thrust),
        and every healthy component's Terminate waits at most its step timeout (at
        least 1 s): the run ends promptly even when more of its peers are cut off."""
        problems = []
        slots = self.slots
        first = [] if ok else [self.by_name[n] for n in self.rig.run.safe_stop]
        if first:
            slots = first + [s for s in slots if s.name not in self.rig.run.safe_stop]
        for s in slots:
            a = s.adapter
            if not a.failed:
                timeout_s = None
                if not ok:
                    cfg = self.rig.component(s.name)
                    timeout_s = min(cfg.setup_timeout_ns, max(cfg.step_timeout_ns, 10**9)) * 1e-9
                try:
                    metrics = a.terminate(timeout_s)
                    if metrics:
                        self.metrics[s.name] = metrics
                except MoonpoolError as exc:
                    problems.append(str(exc))
                    if self.shutdown_failed is None:
                        self.shutdown_failed = s.name
                    log.warning("terminate failed: %s", exc)
            elif getattr(a, "error_reply", False):
                # It failed but answered (an Error reply): it is alive, so tell it the
                # session is over ("Terminate once, also after a failure"), briefly.
                try:
                    a.terminate(timeout_s=1.0)
                except MoonpoolError:
                    pass
        for s in self.slots:
            s.adapter.close()
        return problems
