"""Runs across real separate hosts: Linux network namespaces joined by veth pairs
(tests/support/netns.py). The orchestrator runs in namespace a; components are
served (`moonpool serve`, CURVE keys) in namespaces b and c, reached over the veth
links only. Skipped, with the reason, where namespaces cannot be made (not root).

- The pool rig with four of its components on the two other hosts gives the same
  digest as the single-process run.
- A link cut (`ip link set ... down`) mid-run is detected within the step timeout:
  the MCU bridge (safe_stop) sends zero thrust at once, the run ends with exit 1,
  summary.json names the cut-off component, the recording is readable, the served
  component ends its session by itself, and no process is left behind.
"""

from __future__ import annotations

import json
import sys
import time
import tomllib

import pytest

import netns
from conftest import ROOT, alive
from remote_hosts import make_keys, remote_overrides, serve, stop, wait_serving

pytestmark = pytest.mark.slow

CLI = [sys.executable, "-m", "moonpool.orchestrator.cli"]


@pytest.fixture(scope="module")
def hosts():
    reason = netns.unavailable()
    if reason:
        pytest.skip(f"network namespaces cannot be made here: {reason}")
    with netns.Hosts(["b", "c"]) as h:
        yield h


@pytest.fixture(scope="module")
def keys(tmp_path_factory):
    return make_keys(tmp_path_factory.mktemp("keys"), ["b", "c", "orchestrator"])


# -- determinism across hosts -----------------------------------------------------------

POOL = ["rigs/pool.toml", "--set", "components.t1.parameters.count=1", "--until", "4",
        "--set", "run.plots=false", "--quiet"]
PLACE = {"camera": ("b", "localization.camera"), "localizer": ("b", "localization.localizer"),
         "ekf": ("c", "localization.ekf"), "vehicle": ("c", "fmu")}


def test_pool_rig_across_hosts_gives_the_single_process_digest(hosts, keys, tmp_path):
    served = {name: serve(hosts, host, entry, 6100 + i, tmp_path / "logs", keys=keys)
              for i, (name, (host, entry)) in enumerate(PLACE.items())}
    try:
        single = hosts.run("a", [*CLI, "run", *POOL, "--out", str(tmp_path / "single")],
                           cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert single.returncode == 0, single.stderr
        wait_serving(*served.values())
        sets = []
        for name, (host, _) in PLACE.items():
            sets += remote_overrides(name, served[name].endpoint, keys, host)
        t0 = time.monotonic()
        dist = hosts.run("a", [*CLI, "run", *POOL, "--out", str(tmp_path / "dist"), *sets],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
        took = time.monotonic() - t0
    finally:
        stop(*served.values())
    assert dist.returncode == 0, dist.stderr
    one = json.loads((tmp_path / "single/summary.json").read_text())
    two = json.loads((tmp_path / "dist/summary.json").read_text())
    placements = {k: v["placement"] for k, v in two["components"].items()}
    assert [k for k, v in placements.items() if v == "remote"] == list(PLACE)
    assert "insecure" not in two
    print(f"\npool rig, 4 s: single process {one['loop_wall_time_s']:.2f} s, components on two "
          f"other hosts {two['loop_wall_time_s']:.2f} s ({took:.1f} s with start-up); "
          f"digest {two['digest'][:16]}")
    assert two["messages"] == one["messages"] and two["ticks"] == one["ticks"]
    assert two["digest"] == one["digest"]
    rig = tomllib.loads((ROOT / "rigs/pool.toml").read_text())
    assert set(PLACE) <= set(rig["components"])


# -- a cut link --------------------------------------------------------------------------

CUT_RIG = """
[run]
until = "60s"
heartbeat_interval = "0.2s"
peer_timeout = "1s"
safe_stop = ["mcu"]
plots = false

[components.pace]          # a child process in a that keeps the run near real time
entry = "faulty:Slow"
run = "process"
rate_hz = 50
[components.pace.parameters]
at_step = 0
sleep_s = 0.02
pid_file = "{pid_file}"

[components.push]
entry = "sources.constant_wrench"
rate_hz = 50
[components.push.parameters]
schedule = [[0.0, 0.0, 0.0, 40.0, 0.0, 0.0, 0.0]]

[components.allocator]
entry = "actuation.allocator"
rate_hz = 50
profile = "{root}/fmus/hydrodynamics/profiles/bluerov2_heavy.toml"

[components.mcu]
entry = "devices.mcu_bridge"
rate_hz = 50
profile = "{root}/fmus/hydrodynamics/profiles/bluerov2_heavy.toml"
[components.mcu.parameters]
port = "{port}"

[components.far]
run = "remote"
endpoint = "{endpoint}"
server_key = "{server_key}"
client_key = "{client_key}"
rate_hz = {far_rate}
step_timeout = "{step_timeout}"

[[connections]]
from = "push.wrench"
to = "allocator.wrench"
[[connections]]
from = "allocator.command"
to = "mcu.command"
"""
STEP_TIMEOUT_S = 1.0
HEARTBEAT_S, PEER_TIMEOUT_S = 0.2, 1.0


@pytest.mark.parametrize("far_rate", [50, 0.2], ids=["while-stepping", "while-idle"])
def test_a_cut_link_aborts_cleanly_within_the_timeout(hosts, keys, tmp_path, far_rate):
    """Cut while the component is stepped at every tick (the Step goes unanswered:
    StepTimeout after step_timeout), or while it waits for its next step 5 s away (the
    heartbeats go unanswered: ConnectionLost after peer_timeout)."""
    from moonpool.components.bridges.mcu_emulator import spawn
    from moonpool.orchestrator.recording import read_recording

    hosts.link_up("b")
    far = serve(hosts, "b", "faulty:Healthy", 6200, tmp_path / "logs", keys=keys, once=True)
    # The MCU's watchdog is long (5 s): a zero thrust within the step timeout can only
    # be the bridge's STOP at terminate, the safe-stop action.
    with spawn(watchdog=5.0, status_interval=0.02) as emu:
        rig = tmp_path / "cut.toml"
        rig.write_text(CUT_RIG.format(
            pid_file=tmp_path / "pace.pid", root=ROOT, port=emu.port, endpoint=far.endpoint,
            server_key=keys.public("b"), client_key=keys.secret("orchestrator"),
            step_timeout=f"{STEP_TIMEOUT_S}s", far_rate=far_rate))
        wait_serving(far)
        out = tmp_path / "out"
        with open(tmp_path / "orchestrator.log", "w") as log:
            orch = hosts.popen("a", [*CLI, "run", str(rig), "--out", str(out), "--quiet"],
                               cwd=ROOT, stdout=log, stderr=log)
        pushing = emu.wait_for(lambda e: e["event"] == "status"
                               and max(map(abs, e["thrust_setpoint_n"])) > 1.0, 60)
        assert pushing is not None, (tmp_path / "orchestrator.log").read_text()
        time.sleep(0.5)  # well into the run
        assert orch.poll() is None
        hosts.link_down("b")
        t_cut = time.monotonic()
        code = orch.wait(30)
        t_exit = time.monotonic()
        stop = emu.wait_for(lambda e: e["event"] == "stop" and e["t_mono"] > t_cut, 5)
    events = emu.history
    text = (tmp_path / "orchestrator.log").read_text()
    assert code == 1, text
    summary = json.loads((out / "summary.json").read_text())
    stepping = far_rate > 1
    timeout = STEP_TIMEOUT_S if stepping else HEARTBEAT_S + PEER_TIMEOUT_S
    print(f"\nlink cut ({'stepping' if stepping else 'idle'}): safe stop (zero thrust) "
          f"{stop['t_mono'] - t_cut:.3f} s after the cut, orchestrator exited "
          f"{t_exit - t_cut:.3f} s after it (declared timeout {timeout:g} s); error: "
          f"{summary['error']}")
    # Detected within the declared timeout, zero thrust at once, then a clean exit.
    assert stop is not None and stop["thrust_setpoint_n"] == [0.0] * 8
    assert stop["t_mono"] - t_cut <= timeout + 1.0  # measured: 1.005 s, 1.15 s
    assert not any(e.get("event") == "watchdog" for e in events)
    assert t_exit - t_cut <= timeout + 5.0
    assert summary["status"] == "failed" and summary["failed_component"] == "far"
    if stepping:
        assert f"no answer to step within {STEP_TIMEOUT_S:g} s (at {far.endpoint}" in \
            summary["error"], summary["error"]
    else:
        assert "no heartbeat answer for" in summary["error"] and far.endpoint in \
            summary["error"], summary["error"]
    assert summary["metrics"]["mcu"]["steps"] > 0  # it was terminated, metrics collected
    # The recording is readable and holds the run up to the cut.
    topics = {}
    for m in read_recording(out / "recording.mcap"):
        topics[m.topic] = topics.get(m.topic, 0) + 1
    assert topics["/far/count"] >= (10 if stepping else 1) and topics["/mcu/feedback"] > 10
    # No orphans: nothing left in the orchestrator's host; the served component ends its
    # session by itself (peer timeout 1 s) and, started with --once, exits.
    pace_pid = int((tmp_path / "pace.pid").read_text())
    assert not alive(pace_pid)
    assert hosts.pids("a") == []
    far.proc.wait(10)
    assert "no word from the orchestrator" in far.log.read_text()
    assert hosts.pids("b") == []
    hosts.link_up("b")
