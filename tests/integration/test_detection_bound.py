"""Detection between steps within the documented bound (issue 24, point 11).

docs/distributed.md: a component that falls silent between its steps is declared lost
within heartbeat_interval + peer_timeout (ConnectionLost). A Step that became due
while the heartbeat was unanswered used to restart the clock: the run then waited
for the step's own timeout instead (StepTimeout, measured up to 1.94 s against a
1.2 s bound in the network-namespace test, and here up to step_timeout later).

A real `Server` on a loopback port, in a thread, whose socket goes silent (answers
nothing more) after its second Step reply: the link cut, without a namespace."""

from __future__ import annotations

import time

from served import run_against, serving

from moonpool.v1 import lifecycle_pb2 as lc

HEARTBEAT_S, PEER_TIMEOUT_S, STEP_TIMEOUT_S = 0.2, 1.0, 5.0

RIG = f"""
[run]
until = "20s"
realtime = 1.0
heartbeat_interval = "{HEARTBEAT_S}s"
peer_timeout = "{PEER_TIMEOUT_S}s"
plots = false

[components.pace]
entry = "faulty:Healthy"
rate_hz = 50
[components.pace.parameters]
at_step = -1

[components.far]
run = "remote"
endpoint = "{{endpoint}}"
rate_hz = 1
step_timeout = "{STEP_TIMEOUT_S}s"
[components.far.parameters]
at_step = -1
"""


class _FallsSilent:
    """A rewrite: nothing is sent after the ``after``-th Step reply (and when the
    silence began is noted)."""

    def __init__(self, after: int) -> None:
        self.left, self.silent_since = after, None

    def __call__(self, reply: lc.Reply, frames: list) -> list | None:
        if self.silent_since is not None:
            return None
        if reply.WhichOneof("body") == "step_result":
            self.left -= 1
            if self.left == 0:
                self.silent_since = time.monotonic()
        return frames


def test_silence_between_steps_is_detected_by_the_heartbeat_not_the_next_step(tmp_path):
    from faulty import Healthy

    silent = _FallsSilent(after=2)
    with serving(Healthy, silent) as server:
        s = run_against(server, RIG, tmp_path)
        detected = time.monotonic()
    took = detected - silent.silent_since
    print(f"\nsilent between steps: run ended {took:.2f} s after the silence began "
          f"(bound heartbeat_interval + peer_timeout = {HEARTBEAT_S + PEER_TIMEOUT_S:g} s); "
          f"error: {s['error']}")
    assert s["status"] == "failed" and s["failed_component"] == "far", s
    # The heartbeat sent before the next Step (due 1 s after the silence began) is
    # what declares the loss; the Step's 5 s timeout never comes into it.
    assert "no heartbeat answer for" in s["error"], s["error"]
    assert s["sim_time_s"] < 1 + STEP_TIMEOUT_S  # (real time: the Step would end at >= 6 s)
