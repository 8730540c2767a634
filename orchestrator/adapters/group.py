"""Process groups: several components in one child process, stepped with one
message per instant.

On a small machine every ZeroMQ message costs tens of microseconds of CPU in each
process it crosses (docs/benchmarks.md), so eight tiny components in eight
processes spend most of a tick on messaging. A group hosts them in one process
(``serve --component a=ENTRY --component b=ENTRY``) behind one endpoint; each
request names its member in ``Request.instance`` and the steps due at an instant
go out as one ``StepBatch`` (docs/protocol.md). Results are the same bit for bit:
members are stepped in the order the execution gives, with the inputs it gives.

Call order (per member; the execution drives it like any adapter)::

    describe / configure / initialize       one request each, naming the member
    start_step(...)                         queued in the group's next batch
    flush()                                 sends the batch (once per group and instant)
    finish_step()                           waits for the batch result, takes its entry
    terminate / close                       the child exits when every member has terminated

A crash or hang of the child fails every member (the error names the member that
was waited on and the group); one member's error fails only that member.
"""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from moonpool.components.sdk.errors import (
    ComponentError,
    MoonpoolError,
    ProtocolError,
    error_from_wire,
    remote_text,
)
from moonpool.components.sdk.host import metrics_from_json
from moonpool.components.sdk.localroutes import LocalRoute
from moonpool.components.sdk.wire import K_ITEM, K_ITEM_BODY, K_STEP_BATCH, string_field, varint
from moonpool.v1 import lifecycle_pb2 as lc

from .base import Adapter, Sample, initialize_request
from .process import ProcessAdapter


def local_routes(rig: Any) -> list[LocalRoute]:
    """The connections a process group delivers itself: between two members of the
    same group under Jacobi, into an input no ``[[scenario]]`` overrides (the
    orchestrator must see such an input to change it). Under Gauss-Seidel a member's
    output is read within the same instant, where the execution orders the steps."""
    if rig.run.algorithm != "jacobi":
        return []
    group = {c.name: c.group for c in rig.components if c.placement == "process" and c.group}
    overridden = {(ev.component, ev.port) for ev in rig.scenarios if ev.port}
    return [LocalRoute(c.source, c.source_port, c.target, c.target_port, c.delay_ns)
            for c in rig.connections
            if group.get(c.source) is not None and group.get(c.source) == group.get(c.target)
            and (c.target, c.target_port) not in overridden]


class ProcessGroup:
    """The shared child process and connection of a group's members."""

    def __init__(self, name: str, conn: ProcessAdapter, members: list[str]) -> None:
        self.name = name
        self.conn = conn
        conn.fail_on_error = False
        conn.pipelined = True  # the execution may send the next batch before this one's result
        self.members = members
        # The batch being built, encoded by hand (components/sdk/wire.py): the fields of
        # its InstanceSteps, and its members in order.
        self._batch: list[bytes] | None = None
        self._order: list[str] = []
        self._frames: list[Any] = []
        self._timeout_s = 0.0
        # The batches sent and not answered yet, oldest first: (members in order, when
        # sent). The oldest one's result: per member, its samples or its Error (unpacked
        # in one go when the reply arrives), and the batch's round trip, ns.
        self._sent: deque[tuple[list[str], int]] = deque()
        self._results: dict[str, list[Sample] | lc.Error] | None = None
        self.compute_ns: dict[str, int] = {}  # member -> its StepResult.compute_ns (> 0)
        self.finished: dict[str, tuple[str, bool]] = {}  # member -> StepResult (finished, failed)
        self._elapsed_ns = 0
        self._open = set(members)
        self._instance_field = {m: string_field(K_ITEM, m) for m in members}

    @property
    def label(self) -> str:
        """How errors name the group: ``group g [a, b]``."""
        return f"group {self.name} [{', '.join(self.members)}]"

    def queue(self, member: str, t_ns: int, dt_ns: int, inputs: dict[str, Any],
              timeout_s: float, parameters: tuple[tuple[str, Any], ...] = ()) -> None:
        if self._batch is None:
            self._batch = []
            self._order = []
            self._frames = []
            self._timeout_s = 0.0
        step = self.conn.encoder.step(t_ns, dt_ns, inputs, self._frames, parameters)
        instance = self._instance_field.get(member) or string_field(K_ITEM, member)
        item = b"".join((instance, K_ITEM_BODY, varint(len(step)), step))
        self._order.append(member)
        self._batch += (K_ITEM, varint(len(item)), item)
        if timeout_s > self._timeout_s:
            self._timeout_s = timeout_s

    def flush(self) -> None:
        if self._batch is None:
            return
        batch, self._batch = b"".join(self._batch), None
        self.conn.send_encoded("step_batch", K_STEP_BATCH, batch, self._timeout_s, self._frames)
        self._sent.append((self._order, time.perf_counter_ns()))

    def result(self, member: str) -> tuple[list[Sample] | lc.Error, int]:
        """What ``member``'s step in the oldest unanswered batch gave (its samples, or
        its Error) and that batch's round trip, ns. Members are asked for in the order
        the batches were sent (the execution collects a connection's steps in order)."""
        if self._batch is not None and not self._sent:  # Gauss-Seidel, or no flush
            self.flush()
        if self._results is None:
            if not self._sent:
                raise ProtocolError(f"no batch is waiting for '{member}''s step",
                                    component=member, fix="this is a bug in the execution")
            order, t_sent = self._sent[0]
            reply, frames = self.conn.wait_reply()
            self._sent.popleft()
            self._elapsed_ns = time.perf_counter_ns() - t_sent
            self._results = self._unpack(reply.step_batch_result.results, frames, order)
        got = self._results.pop(member, None)
        if got is None:
            raise ProtocolError(f"the batch result has no entry for '{member}'",
                                component=member, fix="this is a bug in the group's server")
        if not self._results:
            self._results = None  # (the next result is the next batch's)
        return got, self._elapsed_ns

    def _unpack(self, results: Any, frames: list,
                order: list[str]) -> dict[str, list[Sample] | lc.Error]:
        """Every entry of a batch result at once (one loop, not a call chain per member).
        Entries come one per step, in batch order (docs/protocol.md §6a)."""
        if len(results) != len(order):
            raise ProtocolError(f"the batch result has {len(results)} entries for "
                                f"{len(order)} steps",
                                fix="this is a bug in the group's server")
        unpacked: dict[str, list[Sample] | lc.Error] = {}
        samples = self.conn._samples
        for member, entry in zip(order, results):
            if entry.instance != member:
                raise ProtocolError(f"the batch result names '{entry.instance}' where "
                                    f"'{member}' was stepped",
                                    fix="this is a bug in the group's server")
            if entry.WhichOneof("body") == "error":
                unpacked[member] = entry.error
                continue
            result = entry.result
            unpacked[member] = samples(result.outputs, frames)
            if result.compute_ns > 0:
                self.compute_ns[member] = result.compute_ns
            if result.finished:
                self.finished[member] = (remote_text(result.finished, 500), result.failed)
        return unpacked

    def release(self, member: str) -> None:
        self._open.discard(member)
        if not self._open:
            self.conn.close()


class GroupMember(Adapter):
    """One component of a process group (see the module docstring)."""

    placement = "process"

    def __init__(self, name: str, group: ProcessGroup, *, step_timeout_ns: int) -> None:
        super().__init__(name)
        self.group = group
        self.conn = group.conn
        self.step_timeout_s = step_timeout_ns * 1e-9
        self._failed = False
        self.error_reply = False

    @property
    def connection(self) -> ProcessAdapter:
        return self.conn

    @property
    def failed(self) -> bool:  # the child hung or died: every member failed
        return self._failed or self.conn.failed

    @failed.setter
    def failed(self, value: bool) -> None:
        self._failed = value

    def _relabel(self, exc: MoonpoolError) -> MoonpoolError:
        """A failure of the shared process (hang, crash) cannot be pinned on one member:
        name the group and all its members."""
        if exc.component in ("", self.conn.name):
            exc.component = self.group.label
            if exc.fix:
                exc.fix = "one of these components is at fault; " + exc.fix
        return exc

    def _call(self, body: str, payload: Any, timeout_s: float | None = None):
        try:
            return self.conn._call(body, payload, timeout_s or self.conn.setup_timeout_s,
                                   instance=self.name)
        except ComponentError as exc:  # the member answered with an Error
            self._failed = True
            self.error_reply = True
            if getattr(exc, "from_wire", False):  # the answer to a request for this member
                exc.component = self.name
            raise self._relabel(exc)
        except MoonpoolError as exc:  # the child hung or died: the connection failed
            raise self._relabel(exc)

    def describe(self) -> lc.Description:
        reply, _ = self._call("describe", lc.Describe())
        self.description = reply.description
        return self.description

    def configure(self, msg: lc.Configure) -> None:
        self._call("configure", msg)

    def initialize(self, start_time_ns: int,
                   inputs: dict[str, Any] | None = None) -> list[Sample]:
        reply, frames = self._call("initialize", initialize_request(start_time_ns, inputs))
        return self.conn._samples(reply.initialized.outputs, frames)

    def start_step(self, t_ns: int, dt_ns: int, inputs: dict[str, Any]) -> None:
        self.group.queue(self.name, t_ns, dt_ns, inputs, self.step_timeout_s,
                         self.take_parameters())

    def flush(self) -> None:
        try:
            self.group.flush()
        except MoonpoolError as exc:
            raise self._relabel(exc)

    def finish_step(self) -> list[Sample]:
        try:
            got, elapsed_ns = self.group.result(self.name)
        except MoonpoolError as exc:
            raise self._relabel(exc)
        self.times.add(elapsed_ns)  # a member's step time: its batch's round trip
        compute_ns = self.group.compute_ns.pop(self.name, 0)
        if compute_ns:  # its own step, as the group's server measured it
            self.compute.add(compute_ns)
        if type(got) is not list:  # the member answered with an Error
            self._failed = True
            self.error_reply = True
            raise error_from_wire(got, self.name)
        if self.name in self.group.finished:
            self.finished, self.finished_failed = self.group.finished.pop(self.name)
        return got

    def keepalive(self, now: float) -> None:
        self.conn.keepalive(now)

    def terminate(self, timeout_s: float | None = None) -> dict[str, Any]:
        reply, _ = self._call("terminate", lc.Terminate(), timeout_s)
        return metrics_from_json(reply.terminated.metrics_json, self.name)

    def close(self) -> None:
        self.group.release(self.name)

    @property
    def rejected(self) -> int:
        return self.conn.rejected if self.name == self.group.members[0] else 0
