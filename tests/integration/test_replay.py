"""Record and replay (orchestrator/adapters/replay.py): a component replaced by the
messages it published in a recording gives its consumers exactly the same inputs, so
their outputs are the same, byte for byte; `moonpool check` names what is wrong."""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path

import pytest

from conftest import RIGS, moonpool
from replay_sources import RIG as JACOBI_RIG
from moonpool.orchestrator.recording import (
    component_topics,
    digest_of_recording,
    read_recording,
    recording_info,
)
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig

pytestmark = pytest.mark.slow


def _run(rig_path: Path, out: Path, *overrides: str, **kw):
    rig = load_and_check(rig_path, ["run.plots=false", *overrides], **kw)
    result = run_rig(rig, out)
    assert result.ok, result.summary["error"]
    return result.summary, out / "recording.mcap"


def _downstream_digest(recording: Path, *components: str) -> str:
    topics = recording_info(recording).topics
    wanted = [t for c in components for t in component_topics(topics, c)]
    assert wanted, f"no topics of {components} in {recording}"
    return digest_of_recording(recording, wanted)


def test_replayed_sensor_reproduces_the_downstream_stream(tmp_path):
    """The quickstart loop (Gauss-Seidel, sensor -> pid -> vehicle), its pressure sensor
    replaced by a replay of a first run: the pid and vehicle publish exactly the same
    messages, although the replay run's seed differs (a live sensor would then differ)."""
    original, rec = _run(RIGS / "quickstart.toml", tmp_path / "a", until_s=2, seed=3)
    text = (RIGS / "quickstart.toml").read_text()
    replay_rig = tmp_path / "replay.toml"
    replay_rig.write_text(text.replace(
        'entry = "quickstart.pressure"\n',
        f'entry = "quickstart.pressure"\nrun = "replay"\nrecording = "{rec}"\n', 1))
    replayed, rec2 = _run(replay_rig, tmp_path / "b", until_s=2, seed=4)
    live4, rec3 = _run(RIGS / "quickstart.toml", tmp_path / "c", until_s=2, seed=4)

    assert replayed["components"]["sensor"]["placement"] == "replay"
    assert replayed["components"]["sensor"]["steps"] == original["components"]["sensor"]["steps"]
    assert replayed["metrics"]["sensor"]["replayed_messages"] == 100
    down = _downstream_digest(rec, "pid", "vehicle")
    assert _downstream_digest(rec2, "pid", "vehicle") == down
    assert _downstream_digest(rec3, "pid", "vehicle") != down  # the seed matters live
    # The replayed messages are the recorded bytes, at the recorded times and in the
    # recorded order: the whole stream is identical.
    assert _downstream_digest(rec2, "sensor") == _downstream_digest(rec, "sensor")
    assert replayed["digest"] == original["digest"] != live4["digest"]


@pytest.mark.parametrize("algorithm", ["jacobi", "gauss-seidel"])
def test_replay_under_another_name_multi_rate_with_attachments(tmp_path, algorithm):
    """A 30 Hz camera with an offset, image attachments, an Initialize output and a
    sparse port; consumers at other rates (one queued, one through a delay). Replayed
    under another name (``source``), with another seed: same downstream messages."""
    rig = tmp_path / "live.toml"
    rig.write_text(JACOBI_RIG.format(algorithm=algorithm))
    original, rec = _run(rig, tmp_path / "a")
    replay = tmp_path / "replay.toml"
    replay.write_text(
        JACOBI_RIG.format(algorithm=algorithm)
        .replace("[components.camera]", "[components.cam2]")
        .replace("camera.", "cam2.")
        .replace('entry = "replay_sources:Camera"\nrate_hz = 30\noffset = "5ms"\n',
                 f'run = "replay"\nrecording = "{rec}"\nsource = "camera"\n')  # recorded schedule
        .replace("seed = 1", "seed = 2")
    )
    replayed, rec2 = _run(replay, tmp_path / "b")
    assert _downstream_digest(rec2, "check", "probe") == _downstream_digest(rec, "check", "probe")
    # Every camera message (header.source still "camera") came back byte for byte.
    mine = [(m.log_time_ns, m.payload, m.attachment) for m in read_recording(rec)
            if m.topic.startswith("/camera/")]
    back = [(m.log_time_ns, m.payload, m.attachment) for m in read_recording(rec2)
            if m.topic.startswith("/cam2/")]
    assert back == mine and any(a for _, _, a in back)
    assert replayed["metrics"]["cam2"]["replayed_messages"] == len(mine)


def test_replay_at_a_compatible_faster_rate_and_past_the_end(tmp_path, caplog):
    """Stepped at 60 Hz instead of the recorded 30 Hz (same offset), every recorded
    message still falls on one of its instants; run longer than the recording, the
    replay publishes nothing more and says so."""
    rig = tmp_path / "live.toml"
    rig.write_text(JACOBI_RIG.format(algorithm="gauss-seidel"))
    _, rec = _run(rig, tmp_path / "a")
    replay = tmp_path / "replay.toml"
    replay.write_text(JACOBI_RIG.format(algorithm="gauss-seidel").replace(
        'entry = "replay_sources:Camera"\nrate_hz = 30\n',
        f'run = "replay"\nrecording = "{rec}"\nrate_hz = 60\n'))
    with caplog.at_level(logging.WARNING, logger="moonpool.replay"):
        _, rec2 = _run(replay, tmp_path / "b", until_s=0.8)
    messages = caplog.text
    assert "recorded at 30 Hz" in messages and "the recording ends at t=0.4" in messages
    short = [m for m in read_recording(rec2) if m.topic.startswith("/check/")
             and m.log_time_ns < 500_000_000]
    assert short == [m for m in read_recording(rec) if m.topic.startswith("/check/")]


def test_check_names_every_replay_problem(tmp_path):
    rig = tmp_path / "live.toml"
    rig.write_text(JACOBI_RIG.format(algorithm="jacobi"))
    _, rec = _run(rig, tmp_path / "a")
    (tmp_path / "not.mcap").write_text("not a recording")
    bad = tmp_path / "bad.toml"
    bad.write_text(textwrap.dedent(f"""\
        [run]
        until = "0.5s"

        [components.missing]
        run = "replay"
        recording = "nowhere.mcap"

        [components.garbage]
        run = "replay"
        recording = "not.mcap"

        [components.stranger]
        run = "replay"
        recording = "{rec}"

        [components.misnamed]
        run = "replay"
        recording = "{rec}"
        source = "camra"

        [components.offbeat]
        run = "replay"
        recording = "{rec}"
        source = "camera"
        rate_hz = 25

        [components.norecording]
        run = "replay"
        rate_hz = 10

        [components.live]
        entry = "probes:Probe"
        rate_hz = 10
        source = "camera"

        [[connections]]
        from = "offbeat.imag"
        to = "live.in"
        """))
    proc = moonpool("check", str(bad))
    assert proc.returncode == 2, proc.stdout
    err = proc.stderr
    lines = {line.split(": ", 2)[1]: line for line in err.splitlines() if line.startswith("  - ")}
    assert "nowhere.mcap' does not exist" in lines["components.missing.recording"]
    assert "bad.toml:6:" in lines["components.missing.recording"]
    assert "is not an MCAP recording" in lines["components.garbage.recording"]
    assert ("no messages of a component 'stranger'" in lines["components.stranger.recording"]
            and "it recorded: camera, check, probe" in lines["components.stranger.recording"])
    assert "no messages of a component 'camra'" in lines["components.misnamed.source"]
    assert ("stepped at 25 Hz" in lines["components.offbeat.rate_hz"]
            and "recorded at 30 Hz, offset 5000000 ns" in lines["components.offbeat.rate_hz"])
    assert "missing: a run = \"replay\" component" in lines["components.norecording.recording"]
    assert 'only used with run = "replay"' in lines["components.live.source"]
    assert "has no output port 'imag' (did you mean 'image'?)" in lines["connections[0].from"]
    # Fixed, it checks and runs; connections into a replay are not wired.
    good = tmp_path / "good.toml"
    good.write_text(textwrap.dedent(f"""\
        [run]
        until = "0.3s"

        [components.camera]
        run = "replay"
        recording = "{rec}"
        entry = "replay_sources:Camera"   # kept: switching back is one edit
        endpoint = "tcp://10.0.0.2:5555"  # ignored by a replay

        [components.live]
        entry = "probes:Probe"
        rate_hz = 10

        [[connections]]
        from = "live.seen"
        to = "camera.whatever"
        """))
    assert moonpool("check", str(good)).returncode == 0
    out = tmp_path / "good-run"
    proc = moonpool("run", str(good), "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "summary.json").read_text())["status"] == "ok"


def test_a_recording_without_the_initialize_marker_is_refused(tmp_path):
    """A recording that does not say which messages Initialize published (another
    program wrote it) cannot be split into initial and step outputs: refused."""
    from moonpool.orchestrator.recording import Recorder

    path = tmp_path / "foreign.mcap"
    with Recorder(path) as rec:
        ch = rec.add_topic("/camera/count", "moonpool.v1.Signals")
        rec.write(ch, 0, b"")
    rig = tmp_path / "rig.toml"
    rig.write_text(f'[run]\nuntil = 1\n[components.camera]\nrun = "replay"\n'
                   f'recording = "{path}"\nrate_hz = 10\n')
    proc = moonpool("check", str(rig))
    assert proc.returncode == 2
    assert "does not say which messages Initialize published" in proc.stderr


def _pool_rig(text: str) -> str:
    """rigs/pool_t1.toml with absolute paths (it is written elsewhere), plots off."""
    from conftest import ROOT

    return text.replace('"../', f'"{ROOT}/').replace("[run]\n", "[run]\nplots = false\n", 1)


def test_hil_session_replayed_offline(tmp_path, fmus):
    """A HIL session: the T1 pool rig in real time with its thrusters replaced by the MCU
    bridge driving the MCU emulator over a pseudo-terminal (rotor speeds evolve on the
    wall clock: not reproducible). Replayed offline, flat out, with the bridge replaced
    by its recording, the task, controller, allocator and vehicle publish exactly what
    they published in the session."""
    from moonpool.components.bridges.mcu_emulator import spawn

    text = _pool_rig((RIGS / "pool_t1.toml").read_text())
    live = text.replace('[components.thrusters]\nentry = "actuation.thrusters"\n',
                        '[components.thrusters]\nentry = "devices.mcu_bridge"\n')
    assert live != text
    with spawn(watchdog=0.5, status_interval=0.01) as emu:
        session = tmp_path / "hil.toml"
        session.write_text(live + f'\n[components.thrusters.parameters]\nport = "{emu.port}"\n')
        _, rec = _run(session, tmp_path / "hil", "run.realtime=1", until_s=1.0)
    feedback = [m for m in read_recording(rec) if m.topic == "/thrusters/wrench"]
    assert len(feedback) > 50  # the bridge sends nothing at a step when nothing arrived
    offline = tmp_path / "offline.toml"
    offline.write_text(live.replace(
        '[components.thrusters]\nentry = "devices.mcu_bridge"\n',
        f'[components.thrusters]\nentry = "devices.mcu_bridge"\nrun = "replay"\n'
        f'recording = "{rec}"\n'))
    replayed, rec2 = _run(offline, tmp_path / "offline", until_s=1.0)
    assert replayed["realtime"] is None
    downstream = ("t1", "controller", "allocator", "vehicle")
    assert _downstream_digest(rec2, *downstream) == _downstream_digest(rec, *downstream)
    assert _downstream_digest(rec2, "thrusters") == _downstream_digest(rec, "thrusters")


def test_outputs_left_out_of_the_recording_are_named(tmp_path):
    """run.record_exclude keeps an output out of the recording (still hashed): the
    Initialize count stays right, and a replay's consumer of that output is told why
    it has nothing."""
    rig = tmp_path / "live.toml"
    rig.write_text(JACOBI_RIG.format(algorithm="gauss-seidel").replace(
        'seed = 1\n', 'seed = 1\nrecord_exclude = ["camera.image"]\n'))
    _, rec = _run(rig, tmp_path / "a")
    assert not [m for m in read_recording(rec) if m.topic == "/camera/image"]
    replay = tmp_path / "replay.toml"
    replay.write_text(JACOBI_RIG.format(algorithm="gauss-seidel").replace(
        'entry = "replay_sources:Camera"\nrate_hz = 30\noffset = "5ms"\n',
        f'run = "replay"\nrecording = "{rec}"\n'))
    proc = moonpool("check", str(replay))
    assert proc.returncode == 2
    assert ("connections[0].from" in proc.stderr
            and "not replayable: image" in proc.stderr and "its outputs: count" in proc.stderr)
    # Without that connection it replays the recorded port (count) exactly.
    replay.write_text(replay.read_text().replace(
        '[[connections]]\nfrom = "camera.image"\nto = "check.image"\ndelay = "2ms"\n', ""))
    _, rec2 = _run(replay, tmp_path / "b")
    assert _downstream_digest(rec2, "probe") == _downstream_digest(rec, "probe")
