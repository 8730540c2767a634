"""ReplayAdapter: a component replaced by the messages it published in a recording.

Rig: ``run = "replay"`` and ``recording = "runs/hil/recording.mcap"`` (relative to the
rig file's folder); ``source = "NAME"`` when the component had another name in the
recording. Nothing runs: the adapter reads the recording's messages on the topics
``/{source}/{port}`` and publishes them, **byte for byte**, at the simulation times
they were recorded at, so every component downstream receives exactly the inputs
it received in the recorded run (DESIGN.md: a HIL session replayed offline with the
device replaced by its recording).

- **Ports.** Its outputs are the recorded topics of ``source``, with their recorded
  types (schemas from the file, so types moonpool does not know work too). It has no
  inputs: a replay ignores what it would have been sent, and the run leaves
  connections into it unwired (their sources still run and are recorded).
- **When.** A recorded message's log time is the simulation time it became visible.
  The replay publishes it when its own schedule makes outputs visible at that time:
  the recording's Initialize outputs (the first messages of the file, counted by the
  ``moonpool.initialize`` metadata record) at Initialize; every other message in the
  step whose outputs become visible at its log time (Jacobi: the step that *ends*
  there; Gauss-Seidel: the step that *starts* there). A message recorded at the
  start time that no step can publish (Jacobi) is published at Initialize. Messages
  of one instant keep their recorded order. So the replay must be stepped at (a
  superset of) the recorded instants: by default it uses the recorded schedule
  (``component/NAME`` metadata); a message that falls between two of its instants
  fails the run (``moonpool check`` finds it first).
- **Bytes.** Payloads and attachments are the recorded bytes: ``header.source``
  stays the recorded name, sequence numbers are the recorded ones.
- **End.** After the recording's last message the replay publishes nothing (consumers
  hold the last value); this is logged once.

The recording is streamed, never loaded whole (a camera's images may be gigabytes).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2

from moonpool.components.sdk import wire
from moonpool.components.sdk.errors import ComponentError, MoonpoolError, SimulationError
from moonpool.v1 import lifecycle_pb2 as lc

from ..recording import (
    COMPONENT_METADATA,
    INITIALIZE_METADATA,
    RecordedMessage,
    RecordingInfo,
    component_topics,
    read_recording,
    recording_info,
)
from ..rig import Schedule
from .base import Adapter, Sample

log = logging.getLogger("moonpool.replay")

KIND = "moonpool.orchestrator.adapters.replay:ReplayAdapter"
"""The ``kind`` of a replay's Description."""


class ReplayError(ComponentError):
    """A recording that cannot be replayed as asked (raised at setup)."""


@dataclass(frozen=True)
class RecordedComponent:
    """What a recording holds of one component (:func:`inspect_recording`)."""

    path: Path
    source: str
    """The component's name in the recording."""
    ports: dict[str, str]
    """Output port -> full type name, in port-name order."""
    schemas: dict[str, bytes]
    """Type name -> schema (FileDescriptorSet) for each port type."""
    schedule: Schedule | None
    """The schedule it was stepped on (``component/NAME`` metadata), if recorded."""
    initialize_messages: int | None
    """How many messages of the whole recording Initialize published, if recorded."""
    not_recorded: tuple[str, ...] = ()
    """Output ports the recorded run left out of the recording (run.record_exclude):
    a replay has nothing to publish on them."""
    attached: frozenset[str] = frozenset()
    """Output ports whose recorded messages carry attachments (a ``#data`` channel)."""


def inspect_recording(
    path: Path, source: str, *, info: RecordingInfo | None = None
) -> RecordedComponent:
    """What ``path`` recorded of component ``source``; ReplayError (with the fix) when
    the file is not a readable recording or holds nothing of ``source``."""
    try:
        info = info or recording_info(path)
    except MoonpoolError as exc:
        raise ReplayError(exc.message, fix=exc.fix) from exc
    topics = component_topics(info.topics, source)
    if not topics and not info.metadata.get(COMPONENT_METADATA + source, {}).get("not_recorded"):
        names = ", ".join(info.components()) or "none"
        raise ReplayError(
            f"recording {path} has no messages of a component '{source}' (no /{source}/PORT "
            f"topics; it recorded: {names})",
            fix="name the recorded component with source = \"...\", or give the recording "
                "of a run that had it",
        )
    ports = {t[len(source) + 2:]: info.topics[t] for t in topics}
    meta = info.metadata.get(INITIALIZE_METADATA, {})
    try:
        initialize = int(meta["messages"]) if "messages" in meta else None
    except ValueError:
        initialize = None
    skipped = info.metadata.get(COMPONENT_METADATA + source, {}).get("not_recorded", "")
    return RecordedComponent(
        path=Path(path), source=source, ports=ports,
        attached=frozenset(p for p in ports if f"/{source}/{p}" in info.attached),
        schemas={t: info.schemas[t] for t in ports.values() if t in info.schemas},
        schedule=recorded_schedule(info, source), initialize_messages=initialize,
        not_recorded=tuple(p for p in skipped.split(",") if p),
    )


def recorded_schedule(info: RecordingInfo, source: str) -> Schedule | None:
    """The schedule ``source`` was stepped on, from its ``component/NAME`` metadata
    (``rate_hz`` exact, ``offset_ns``), or None when the recording does not say."""
    meta = info.metadata.get(COMPONENT_METADATA + source, {})
    try:
        if "rate_hz" in meta:
            return Schedule(Fraction(meta["rate_hz"]), int(meta.get("offset_ns", "0")))
    except (ValueError, ZeroDivisionError):
        return None
    return None


def publication_time(algorithm: str, t_ns: int, dt_ns: int) -> int:
    """When the outputs of a step from t to t + dt become visible."""
    return t_ns + dt_ns if algorithm == "jacobi" else t_ns


def publishes_at(schedule: Schedule, t_ns: int) -> bool:
    """Whether a replay on ``schedule`` can publish at ``t_ns``: exactly at its instants,
    under either algorithm (Gauss-Seidel: at the start of each step; Jacobi: at the end
    of each step, and at the start time through Initialize)."""
    if t_ns < schedule.offset_ns:
        return False
    p, q = schedule.rate_hz.numerator, schedule.rate_hz.denominator
    k = (t_ns - schedule.offset_ns) * p // (1_000_000_000 * q)  # instant(k) <= t_ns, about
    return any(schedule.instant(j) == t_ns for j in (k - 1, k, k + 1) if j >= 0)


def first_misfit(
    recorded: RecordedComponent, schedule: Schedule, until_ns: int
) -> RecordedMessage | None:
    """The first recorded message (before ``until_ns`` plus one step) that a replay on
    ``schedule`` could not publish at its recorded time, or None if all fit.
    Reads the recording's messages (not kept)."""
    topics = {f"/{recorded.source}/{p}" for p in recorded.ports}
    n_init = recorded.initialize_messages or 0
    limit = until_ns + (1_000_000_000 * schedule.rate_hz.denominator) // schedule.rate_hz.numerator + 1
    stream = read_recording(recorded.path)
    try:
        for index, m in enumerate(stream):
            if index < n_init or m.topic not in topics:
                continue
            if m.log_time_ns > limit:
                return None
            if not publishes_at(schedule, m.log_time_ns):
                return m
    finally:
        stream.close()
    return None


class _Timeline:
    """The recorded messages of one component in publication order, streamed:
    ``initial`` (published at Initialize), then ``take(p)`` per step."""

    def __init__(self, recorded: RecordedComponent, start_ns: int, jacobi: bool) -> None:
        self.recorded = recorded
        self._topics = {f"/{recorded.source}/{p}": p for p in recorded.ports}
        self._all = read_recording(recorded.path)
        self._mine = self._select(self._all)
        self._next: tuple[int, RecordedMessage] | None = None
        self.last_time_ns: int | None = None
        self.ended = False
        n_init = recorded.initialize_messages
        if n_init is None:
            raise ReplayError(
                f"recording {recorded.path} does not say which messages Initialize published "
                f"(no {INITIALIZE_METADATA} metadata: the recorded run failed during setup, or "
                "it was made by another program)",
                fix="record the run again with this version of moonpool",
            )
        self.initial: list[RecordedMessage] = []
        self._advance()
        while self._next is not None and self._next[0] < n_init:
            self.initial.append(self._pop())
        for m in self.initial:
            if m.log_time_ns != start_ns:
                raise ReplayError(
                    f"the recorded Initialize outputs of '{recorded.source}' are at "
                    f"t={m.log_time_ns} ns, but the replay starts at t={start_ns} ns",
                    fix="give the replay the recorded offset (or leave rate_hz, period and "
                        "offset out to use the recorded schedule)",
                )
        if jacobi:  # no Jacobi step makes outputs visible at the start time
            while self._next is not None and self._next[1].log_time_ns == start_ns:
                self.initial.append(self._pop())

    def _select(self, stream: Iterator[RecordedMessage]) -> Iterator[tuple[int, RecordedMessage]]:
        topics = self._topics
        for index, m in enumerate(stream):
            if m.topic in topics:
                yield index, m

    def _advance(self) -> None:
        self._next = next(self._mine, None)
        if self._next is None:
            self.ended = True

    def _pop(self) -> RecordedMessage:
        assert self._next is not None
        m = self._next[1]
        self.last_time_ns = m.log_time_ns
        self._advance()
        return m

    def take(self, visible_ns: int) -> list[RecordedMessage]:
        """The messages to publish with outputs visible at ``visible_ns``. Raises
        SimulationError for a message recorded before it (off this schedule)."""
        out = []
        while self._next is not None:
            t = self._next[1].log_time_ns
            if t > visible_ns:
                break
            if t < visible_ns:
                m = self._next[1]
                raise SimulationError(
                    f"the recorded message on {m.topic} at t={t} ns falls between the "
                    f"replay's instants (its outputs become visible at t={visible_ns} ns "
                    "next): it was recorded on another schedule",
                    fix="step the replay at the recorded rate and offset (leave rate_hz, "
                        "period and offset out to use the recorded schedule)",
                )
            out.append(self._pop())
        return out

    def close(self) -> None:
        self._mine.close()
        self._all.close()


class ReplayAdapter(Adapter):
    """Publishes a component's recorded outputs (module docstring). It is stepped in
    the orchestrator's process, like an in-process component (``placement``)."""

    placement = "inproc"

    def __init__(
        self,
        name: str,
        recording: Path,
        source: str = "",
        *,
        algorithm: str,
        schedule: Schedule | None = None,
    ) -> None:
        super().__init__(name)
        self.schedule = schedule
        """The replay's own schedule (compared with the recorded one, for the log)."""
        self.recording = Path(recording)
        self.source = source or name
        self.algorithm = algorithm
        self._jacobi = algorithm == "jacobi"
        self._recorded: RecordedComponent | None = None
        self._timeline: _Timeline | None = None
        self._pending: int | None = None
        self.replayed = 0
        """Messages published so far."""
        self._told_end = False

    def _inspect(self) -> RecordedComponent:
        if self._recorded is None:
            try:
                self._recorded = inspect_recording(self.recording, self.source)
            except ReplayError as exc:
                exc.component = self.name
                self.failed = True
                raise
        return self._recorded

    def configure(self, msg: lc.Configure) -> None:
        self._inspect()

    def describe(self) -> lc.Description:
        rec = self._inspect()
        desc = lc.Description(
            kind=KIND,
            description=f"replay of '{rec.source}' from {rec.path}",
            protocol_version=wire.PROTOCOL_VERSION,
        )
        for port, type_name in rec.ports.items():
            desc.outputs.add(name=port, direction=lc.PORT_DIRECTION_OUTPUT, type=type_name,
                             description=f"recorded /{rec.source}/{port}",
                             attachment=port in rec.attached)
        extra = _merged_schemas(
            rec.schemas[t] for t in rec.ports.values()
            if not t.startswith("moonpool.v1.") and t in rec.schemas
        )
        if extra:
            desc.extra_schemas = extra
        self.description = desc
        return desc

    def initialize(self, start_time_ns: int, inputs: Any = None) -> list[Sample]:
        recorded = self._inspect().schedule
        if self.schedule is not None and recorded is not None and recorded != self.schedule:
            log.warning(
                "replay '%s' is stepped at %g Hz (offset %d ns) but '%s' was recorded at %g Hz "
                "(offset %d ns): its messages are published only if they fall on the replay's "
                "instants (the run fails otherwise)", self.name, float(self.schedule.rate_hz),
                self.schedule.offset_ns, self.source, float(recorded.rate_hz), recorded.offset_ns)
        try:
            self._timeline = _Timeline(self._inspect(), start_time_ns, self._jacobi)
        except MoonpoolError as exc:
            exc.component = self.name
            self.failed = True
            raise
        return self._samples(self._timeline.initial)

    def start_step(self, t_ns: int, dt_ns: int, inputs: dict[str, Any]) -> None:
        self._pending = publication_time(self.algorithm, t_ns, dt_ns)

    def finish_step(self) -> list[Sample]:
        assert self._pending is not None and self._timeline is not None
        visible, self._pending = self._pending, None
        t0 = time.perf_counter_ns()
        try:
            messages = self._timeline.take(visible)
        except MoonpoolError as exc:
            exc.component = self.name
            self.failed = True
            raise
        if self._timeline.ended and not self._told_end and not messages:
            self._told_end = True
            last = self._timeline.last_time_ns
            log.warning("replay '%s': the recording ends at t=%.6f s; nothing more is "
                        "published after it", self.name, (last or 0) * 1e-9)
        samples = self._samples(messages)
        self.times.add(time.perf_counter_ns() - t0)
        return samples

    def _samples(self, messages: list[RecordedMessage]) -> list[Sample]:
        ports = self._inspect().ports
        skip = len(self.source) + 2
        out = [Sample(m.topic[skip:], m.type_name or ports[m.topic[skip:]], m.payload,
                      m.attachment) for m in messages]
        self.replayed += len(out)
        return out

    def terminate(self, timeout_s: float | None = None) -> dict[str, Any]:
        self.close()
        return {"replayed_messages": float(self.replayed)}

    def close(self) -> None:
        if self._timeline is not None:
            self._timeline.close()
            self._timeline = None


def _merged_schemas(sets: Any) -> bytes:
    """One FileDescriptorSet with the files of several (each file once)."""
    merged = descriptor_pb2.FileDescriptorSet()
    seen: set[str] = set()
    for data in sets:
        for f in descriptor_pb2.FileDescriptorSet.FromString(data).file:
            if f.name not in seen:
                seen.add(f.name)
                merged.file.add().CopyFrom(f)
    return wire.serialize(merged) if merged.file else b""
