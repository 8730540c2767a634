"""The MCU bridge against the MCU emulator over a real pseudo-terminal, each in its own
process: commands reach the ESCs and telemetry comes back; the bridge zeroes thrust
when it terminates; when the bridge's process is SIGKILLed the emulator's watchdog
zeroes thrust; malformed frames in either direction are counted and never acted on;
a lost link fails the bridge naming the port.

Timing: only safety deadlines are asserted, with wide margins (watchdog 0.2 s, zero
thrust asserted within 2 s); the measured figures are printed (pytest -s)."""

from __future__ import annotations

import math
import os
import random
import signal
import time
import tomllib

import pytest
from conftest import ROOT
from moonpool.components.sdk import wire
from moonpool.components.bridges.mcu_bridge import McuBridge, McuLink
from moonpool.components.bridges.mcu_emulator import spawn
from moonpool.components.bridges.serial_protocol import (
    MsgId,
    NackReason,
    SetSpeeds,
    encode_frame,
)
from moonpool.components.sdk.errors import ParameterError, PortError, StepFailed
from moonpool.components.sdk.host import ComponentHost
from moonpool.orchestrator.adapters.base import Sample
from moonpool.orchestrator.adapters.process import ProcessAdapter
from moonpool.v1 import lifecycle_pb2 as lc
from moonpool.v1 import vehicle_pb2

pytestmark = pytest.mark.slow

PROFILE = tomllib.loads((ROOT / "fmus/hydrodynamics/profiles/bluerov2_heavy.toml").read_text())
C_FORWARD = PROFILE["thrusters"][0]["c_forward"]
WATCHDOG_S = 0.2
PERIOD_NS = 10_000_000
ENTRY = "moonpool.components.bridges.mcu_bridge:McuBridge"


def _configure_msg(**params) -> lc.Configure:
    return lc.Configure(instance_name="mcu", seed=0, period_ns=PERIOD_NS, parameters=[
        lc.NamedParameter(name=k, value=wire.to_parameter_value(v)) for k, v in params.items()])


def _command(force_n: float) -> Sample:
    msg = vehicle_pb2.ThrusterCommand(force_n=[force_n] * 8)
    return Sample("command", msg.DESCRIPTOR.full_name, wire.serialize(msg))


def _bridge_process(tmp_path, port: str, **params) -> ProcessAdapter:
    adapter = ProcessAdapter("mcu", ENTRY, f"ipc://{tmp_path}/mcu.sock", base_dir=tmp_path,
                             log_path=tmp_path / "mcu.log", step_timeout_ns=5_000_000_000,
                             setup_timeout_ns=20_000_000_000, peer_timeout_ns=30_000_000_000)
    adapter.configure(_configure_msg(port=port, profile=PROFILE, **params))
    adapter.describe()
    adapter.initialize(0)
    return adapter


def _drive(adapter: ProcessAdapter, force_n: float, steps: int, port: str = "feedback",
           k0: int = 0) -> list:
    """Steps k0, k0 + 1, ... at ~100 Hz of wall clock; the decoded messages of one port."""
    out = []
    for k in range(k0, k0 + steps):
        adapter.start_step(k * PERIOD_NS, PERIOD_NS, {"command": _command(force_n)})
        out += [s.message() for s in adapter.finish_step() if s.port == port]
        time.sleep(0.01)
    return out


def test_commands_reach_the_escs_and_telemetry_comes_back(tmp_path):
    with spawn(watchdog=WATCHDOG_S, status_interval=0.02) as emu:
        adapter = _bridge_process(tmp_path, emu.port, reply_wait_s=0.05)
        try:
            feedback = _drive(adapter, 20.0, 40)
            wrench = _drive(adapter, 20.0, 3, port="wrench", k0=40)[-1]
            status = emu.latest()
            t_term = time.monotonic()
            metrics = adapter.terminate()
        finally:
            adapter.close()
        want = math.sqrt(20.0 / C_FORWARD)  # 231.8 rad/s
        assert status["setpoints_radps"] == pytest.approx([want] * 8, abs=0.06)
        assert len(feedback) >= 30
        last = feedback[-1]
        assert len(last.thrusters) == 8
        for th in last.thrusters:
            assert th.validity.valid
            assert th.speed_radps == pytest.approx(want, rel=0.02)  # 40 steps >> 5 tau
            assert th.force_n == pytest.approx(20.0, rel=0.04)
            assert th.current_a > 1.0 and 10.0 < th.voltage_v < 16.0
        # The wrench of eight measured 20 N thrusts: the Heavy's vertical four push -Z, the
        # vectored four cancel in X, Y and yaw.
        assert wrench.header.frame_id == "body"
        assert wrench.force_n.z == pytest.approx(-80.0, rel=0.04)
        assert abs(wrench.force_n.x) < 1.0 and abs(wrench.force_n.y) < 1.0
        # Terminate sent STOP: set-points zero at once, not after the watchdog.
        stop = emu.wait_for(lambda e: e["event"] == "stop" and e["counters"]["stops"] == 2, 2.0)
        assert stop is not None, "no STOP from the bridge at terminate"
        assert stop["thrust_setpoint_n"] == [0.0] * 8
        assert stop["counters"]["watchdog_trips"] == 0
        print(f"\ncommand -> telemetry over the pty: p50 {metrics['reply_latency_ms_p50']:.3f} ms, "
              f"p99 {metrics['reply_latency_ms_p99']:.3f} ms, max "
              f"{metrics['reply_latency_ms_max']:.3f} ms ({metrics['commands_sent']} commands); "
              f"STOP reached the emulator {stop['t_mono'] - t_term:.3f} s after terminate")
        assert metrics["frames_dropped"] == 0 and metrics["telemetry_received"] >= 40


def test_watchdog_zeroes_thrust_when_the_bridge_process_is_killed(tmp_path):
    with spawn(watchdog=WATCHDOG_S, status_interval=0.02) as emu:
        adapter = _bridge_process(tmp_path, emu.port)
        try:
            _drive(adapter, 30.0, 25)
            before = emu.latest()
            assert min(before["thrust_setpoint_n"]) > 29.0
            os.kill(adapter.proc.pid, signal.SIGKILL)
            t_kill = time.monotonic()
            fired = emu.wait_for(lambda e: e["event"] == "watchdog", 5.0)
            spun_down = emu.wait_for(
                lambda e: e["event"] == "status" and max(map(abs, e["thrust_n"])) < 0.3, 5.0)
        finally:
            adapter.close()
        assert adapter.proc.returncode == -signal.SIGKILL
        assert fired is not None, "the emulator's watchdog never fired"
        assert fired["thrust_setpoint_n"] == [0.0] * 8 and fired["setpoints_radps"] == [0.0] * 8
        zero_after = fired["t_fired"] - t_kill
        print(f"\nbridge SIGKILLed: thrust set-points zero {zero_after * 1e3:.1f} ms after the kill "
              f"({fired['silent_s'] * 1e3:.1f} ms after the last command; watchdog "
              f"{WATCHDOG_S * 1e3:.0f} ms); rotors below 1 % thrust "
              f"{spun_down['t_mono'] - t_kill:.2f} s after the kill")
        assert zero_after <= 2.0  # safety deadline (expected: <= 0.2 s)
        assert fired["silent_s"] >= WATCHDOG_S  # it did not fire early either
        assert spun_down is not None


def test_malformed_frames_to_the_mcu_are_counted_and_never_acted_on():
    with spawn(watchdog=5.0, status_interval=0.02, telemetry_period=0.0) as emu:
        link = McuLink(emu.port, component="test", link_timeout_s=1.0)
        link.open()
        try:
            link.handshake(2.0)
            ok = link.send_speeds([10.0] * 8)
            assert link.wait_reply(ok, 1.0)
            write = link.ser.write
            bad = SetSpeeds((300.0,) * 8).encode()
            good_frame = encode_frame(MsgId.SET_SPEEDS, 100, bad)
            # bad CRC
            write(good_frame[:-1] + bytes([good_frame[-1] ^ 0x01]))
            # a payload byte damaged, CRC of the original
            damaged = bytearray(good_frame)
            damaged[6] ^= 0x40
            write(bytes(damaged))
            # truncated, then silence: the emulator abandons it after its frame timeout
            write(good_frame[:9])
            time.sleep(0.15)
            # an impossible length (LEN > 200)
            write(bytes([0xA5, 0xF0, 7, MsgId.SET_SPEEDS]) + b"\x00" * 10)
            # random bytes (seeded; start bytes included)
            rng = random.Random(7)
            write(bytes(rng.choice((0xA5, rng.randrange(256))) for _ in range(400)))
            time.sleep(0.15)
            # good CRC, unusable content: NACKed, counted, not acted on
            write(encode_frame(MsgId.SET_SPEEDS, 101, bad[:-1]))          # bad length
            write(encode_frame(MsgId.SET_SPEEDS, 102, SetSpeeds((300.0,) * 4).encode()))
            write(encode_frame(0x42, 103, b"\x01\x02"))                    # unknown id
            # a synchronisation point: the emulator still answers
            link.info = None
            link.send(MsgId.GET_INFO)
            deadline = time.monotonic() + 2.0
            while link.info is None and time.monotonic() < deadline:
                time.sleep(0.01)
            assert link.info is not None, "the emulator stopped answering after the garbage"
            nacks = [emu.wait_for(lambda e: e["event"] == "nack", 2.0) for _ in range(3)]
            status = emu.latest()
            assert link.stop(1.0)  # its TELEMETRY reply carries the MCU's counters
        finally:
            link.close()
        final = emu.stop()
    assert all(n is not None for n in nacks)
    assert [n["reason"] for n in nacks] == [NackReason.BAD_LENGTH, NackReason.BAD_COUNT,
                                           NackReason.UNKNOWN_MESSAGE]
    assert [n["seq"] for n in nacks] == [101, 102, 103]
    c = final["counters"]
    print(f"\nemulator counters after the injected frames: {c}")
    # never acted on: the only command applied is the first, 10 rad/s
    assert c["commands_applied"] == 1
    assert status["setpoints_radps"] == [10.0] * 8
    assert max(status["speeds_radps"]) <= 10.0 + 1e-6
    # counted: 2 bad CRC + 1 truncated + 1 bad length at least (random bytes add more)
    assert c["bad_crc"] >= 2 and c["truncated"] >= 1 and c["bad_length"] >= 1
    assert c["dropped"] >= 4 and c["garbage_bytes"] > 0
    assert c["rx_rejected"] == 3
    # the host sees the MCU's counters in its telemetry
    assert link.latest.telemetry.rx_rejected == 3
    assert link.latest.telemetry.rx_dropped >= 4


def _host(port: str, **params) -> ComponentHost:
    host = ComponentHost(McuBridge())
    host.configure(_configure_msg(port=port, profile=PROFILE, **params))
    return host


def test_malformed_telemetry_is_counted_and_never_acted_on():
    # Every 3rd TELEMETRY is damaged (channel 0 speed forged to 3000 rad/s, CRC of the
    # original) and followed by random bytes: the bridge must drop it and resync.
    with spawn(watchdog=WATCHDOG_S, corrupt_every=3) as emu:
        host = _host(emu.port, reply_wait_s=0.02)
        host.initialize(0)
        cmd = vehicle_pb2.ThrusterCommand(force_n=[15.0] * 8)
        speeds = []
        for k in range(60):
            for out in host.step(k * PERIOD_NS, PERIOD_NS, {"command": cmd}):
                if out.port == "feedback":
                    speeds += [th.speed_radps for th in out.message.thrusters]
            time.sleep(0.005)
        metrics = host.terminate()
        final = emu.stop()
    print(f"\nbridge metrics with corrupted telemetry: dropped {metrics['frames_dropped']}, "
          f"garbage bytes {metrics['garbage_bytes']}, received {metrics['telemetry_received']}; "
          f"emulator corrupted {final['counters']['tx_corrupted']}")
    assert final["counters"]["tx_corrupted"] >= 10
    assert metrics["frames_dropped"] >= final["counters"]["tx_corrupted"]
    assert metrics["telemetry_received"] >= 20
    assert len(speeds) >= 8 * 20
    assert max(speeds) <= math.sqrt(15.0 / C_FORWARD) + 0.1  # never the forged 3000 rad/s


def test_a_lost_link_fails_the_step_naming_the_port():
    with spawn(watchdog=WATCHDOG_S) as emu:
        host = _host(emu.port, link_timeout_s=0.3)
        host.initialize(0)
        cmd = vehicle_pb2.ThrusterCommand(force_n=[5.0] * 8)
        host.step(0, PERIOD_NS, {"command": cmd})
        os.kill(emu.pid, signal.SIGKILL)
        emu.proc.wait(5)
        t0 = time.monotonic()
        with pytest.raises(StepFailed) as info:
            for k in range(1, 500):
                host.step(k * PERIOD_NS, PERIOD_NS, {"command": cmd})
                time.sleep(0.01)
        print(f"\nlink loss detected {time.monotonic() - t0:.3f} s after the emulator died: "
              f"{info.value}")
        assert emu.port in str(info.value)
        assert time.monotonic() - t0 < 5.0
        host.terminate()


def test_a_missing_port_is_refused_at_configure_naming_it(tmp_path):
    # Before anything is opened: check_parameters, which `moonpool check` runs too.
    port = str(tmp_path / "ttyMISSING0")
    with pytest.raises(ParameterError) as info:
        _host(port)
    assert port in str(info.value) and "mcu_emulator" in info.value.fix


def test_a_channel_count_mismatch_fails_initialize_and_stops():
    with spawn(watchdog=WATCHDOG_S, thrusters=6) as emu:
        host = _host(emu.port)
        with pytest.raises(StepFailed, match="6 thrusters, the profile has 8"):
            host.initialize(0)
        host.terminate()
        final = emu.stop()
    assert final["counters"]["commands_applied"] == 0


def test_a_fault_in_a_step_zeroes_thrust_at_once():
    # A command the bridge cannot use (3 forces for 8 thrusters): STOP before the error.
    with spawn(watchdog=WATCHDOG_S, status_interval=0.02) as emu:
        host = _host(emu.port)
        host.initialize(0)
        good = vehicle_pb2.ThrusterCommand(force_n=[10.0] * 8)
        for k in range(10):
            host.step(k * PERIOD_NS, PERIOD_NS, {"command": good})
            time.sleep(0.01)
        running = emu.latest()
        t_fault = time.monotonic()
        with pytest.raises(PortError, match="this vehicle has 8 thrusters"):
            host.step(10 * PERIOD_NS, PERIOD_NS,
                      {"command": vehicle_pb2.ThrusterCommand(force_n=[1.0] * 3)})
        stop = emu.wait_for(lambda e: e["event"] == "stop" and e["t_mono"] > t_fault, 2.0)
        host.terminate()
    assert min(running["thrust_setpoint_n"]) > 9.0
    assert stop is not None and stop["thrust_setpoint_n"] == [0.0] * 8
    assert stop["counters"]["watchdog_trips"] == 0  # zeroed by the bridge, not the watchdog
    print(f"\nfault -> STOP at the emulator in {(stop['t_mono'] - t_fault) * 1e3:.2f} ms")
