"""rigs/arm.toml (docs/arm.md): the arm on the HSV FMU, its reaction wrench in the
FMU's ext_* inputs, runs in-process and with each component in its own process with
the same message-stream digest; the suction attaches once and its event is recorded."""

from __future__ import annotations

import json

import pytest

from conftest import RIGS, moonpool

pytestmark = pytest.mark.slow

UNTIL = "2.5"  # the cup reaches the disc at ~2.2 s


def _run(tmp_path, mode):
    out = tmp_path / mode
    proc = moonpool("run", str(RIGS / "arm.toml"), "--until", UNTIL, "--mode", mode,
                    "--out", str(out), "--quiet", timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "summary.json").read_text()), out


def test_arm_rig_same_digest_inproc_and_process_and_records_the_grasp(tmp_path):
    a, out = _run(tmp_path, "inproc")
    b, _ = _run(tmp_path, "process")
    assert a["status"] == b["status"] == "ok"
    assert a["digest"] == b["digest"] and a["messages"] == b["messages"] > 0
    assert a["metrics"]["arm"]["attach"] == 1 and a["metrics"]["arm"]["pull_off"] == 0
    from mcap.reader import make_reader
    from mcap_protobuf.decoder import DecoderFactory

    events, ext_z = [], []
    with open(out / "recording.mcap", "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for _, channel, _, msg in reader.iter_decoded_messages(
                topics=["/arm/suction", "/arm/wrench"]):
            if channel.topic == "/arm/suction":
                events += [s.name for s in msg.signals if s.name.startswith("event.")]
            else:
                ext_z.append(msg.force_n.z)
    assert events == ["event.attach"]
    # the arm's wet weight (4.8 kg, ~0.62 g) loads the vehicle downwards
    assert 20.0 < max(ext_z) < 40.0
