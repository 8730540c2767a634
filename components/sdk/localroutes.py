"""Local routes: the messages between members of one process group, delivered by the
group's server itself instead of by the orchestrator.

Call order (``serve --component a=... --component b=... --local-route a.out>b.in@0``)::

    router = LocalRouter(routes)          per session
    router.deliver(a, outputs, visible)   after a's Initialize (visible = start) and after
                                          each step of a (visible = the step's end)
    router.inputs(b, host, t)             before b's step at t (and b's Initialize, when
                                          b takes its inputs at t0): PortValue-like
                                          items for host.decode_inputs

The rules are the execution's (orchestrator/execution.py, ``_gather``) for a Jacobi
rig: a message becomes visible at the end of the step that produced it (an Initialize
output at the start time), and reaches the input ``delay`` ns later; an ordinary input
holds the latest message that has reached it, a queued input receives every message
since its previous step, in order. The orchestrator still receives, checks, records
and hashes every output in the same order, so the stream and its digest do not depend
on who delivered them (docs/architecture.md, process groups). With these routes the
orchestrator need not wait for a group's batch result before sending the next one
(docs/protocol.md §6a).
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ParameterError

_TEXT = re.compile(r"^([^.>@\s]+)\.([^>@\s]+)>([^.>@\s]+)\.([^>@\s]+)@(\d+)$")


@dataclass(frozen=True)
class LocalRoute:
    """One connection inside a process group."""

    source: str
    """The producing member (its instance name)."""
    source_port: str
    """Its output port."""
    target: str
    """The consuming member."""
    target_port: str
    """Its input port."""
    delay_ns: int = 0
    """The connection's delay, ns (``delay`` in the rig)."""

    def text(self) -> str:
        """The command-line form, ``SOURCE.PORT>TARGET.PORT@DELAY_NS``."""
        return f"{self.source}.{self.source_port}>{self.target}.{self.target_port}@{self.delay_ns}"

    @classmethod
    def parse(cls, text: str) -> LocalRoute:
        m = _TEXT.match(text)
        if m is None:
            raise ParameterError(f"--local-route {text!r} is not SOURCE.PORT>TARGET.PORT@DELAY_NS",
                                 fix="e.g. --local-route vehicle.state>sensor.state@0")
        return cls(m[1], m[2], m[3], m[4], int(m[5]))


class _Value:
    """A message on its way to a local input, shaped as the PortValue that
    ``ComponentHost.decode_inputs`` reads (port, type, payload, attachment index)."""

    __slots__ = ("port", "type", "payload", "attachment", "data")

    def __init__(self, port: str, type_name: str, payload: bytes, data: Any) -> None:
        self.port = port
        self.type = type_name
        self.payload = payload
        self.attachment = 0
        self.data = data  # the attachment's bytes, or None


class LocalRouter:
    """The local routes of one session of a group's server (see the module docstring)."""

    def __init__(self, routes: Iterable[LocalRoute]) -> None:
        # (source, port) -> [(queue of the target input, delay)]
        self._from: dict[tuple[str, str], list[tuple[deque, int]]] = {}
        # target -> [(port, queue)], and per target input the message it holds
        self._into: dict[str, list[tuple[str, deque]]] = {}
        self._held: dict[tuple[str, str], _Value | None] = {}
        for r in routes:
            q: deque = deque()
            self._from.setdefault((r.source, r.source_port), []).append((q, r.delay_ns))
            self._into.setdefault(r.target, []).append((r.target_port, q))
            self._held[(r.target, r.target_port)] = None

    def targets(self, member: str) -> bool:
        """Whether ``member`` has inputs delivered here."""
        return member in self._into

    def deliver(self, member: str, outputs: Sequence[Any], visible_ns: int) -> None:
        """Queue ``member``'s outputs (host Outputs) for the inputs they feed."""
        if not self._from:
            return
        for out in outputs:
            routes = self._from.get((member, out.port))
            if routes:
                value = _Value("", out.type_name, out.payload, out.attachment)
                for q, delay in routes:
                    q.append((visible_ns + delay, value))

    def inputs(self, member: str, queued: set[str], t_ns: int,
               attachments: list, held_only: bool = False) -> list[_Value]:
        """What reaches ``member``'s local inputs by ``t_ns``: every message of a queued
        input (``queued``: its queued ports), the held one of an ordinary input. Their
        attachments are appended to ``attachments`` and numbered accordingly.
        ``held_only`` (Initialize): the held ones only; a queued input's messages stay
        for the first step."""
        out: list[_Value] = []
        held = self._held
        for port, q in self._into.get(member, ()):
            if port in queued:
                if held_only:
                    continue
                while q and q[0][0] <= t_ns:
                    out.append(self._for(port, q.popleft()[1], attachments))
            else:
                key = (member, port)
                while q and q[0][0] <= t_ns:
                    held[key] = q.popleft()[1]
                if held[key] is not None:
                    out.append(self._for(port, held[key], attachments))
        return out

    @staticmethod
    def _for(port: str, value: _Value, attachments: list) -> _Value:
        v = _Value(port, value.type, value.payload, value.data)
        if value.data is not None:
            attachments.append(value.data)
            v.attachment = len(attachments)
        return v
