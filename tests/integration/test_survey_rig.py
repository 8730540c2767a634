"""rigs/survey.toml (docs/tasks.md, "Lawnmower survey"): the HSV lawnmower over the
trench floor runs in-process and with every component in its own process with the same
message-stream digest, holds its altitude from the altimeter, draws the bathymetry swath
and the side-scan waterfall, and its recording decodes in Foxglove's protobuf reader."""

from __future__ import annotations

import json

import pytest

from conftest import RIGS, moonpool

pytestmark = pytest.mark.slow

UNTIL = "6"


def _run(tmp_path, name, mode):
    out = tmp_path / name
    proc = moonpool("run", str(RIGS / "survey.toml"), "--until", UNTIL, "--mode", mode,
                    "--out", str(out), "--quiet", timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads((out / "summary.json").read_text()), out


def test_survey_same_digest_inproc_and_process_with_its_plots(tmp_path):
    a, out = _run(tmp_path, "inproc", "inproc")
    b, _ = _run(tmp_path, "process", "process")
    assert a["status"] == b["status"] == "ok"
    assert a["digest"] == b["digest"]
    assert a["messages"] == b["messages"] > 0
    lm = a["metrics"]["lawnmower"]
    assert lm["path_m"] == pytest.approx(0.6 * 6.0, abs=0.2)  # kept up: the leash never held it
    pngs = {p.stem for p in (out / "plots").glob("*.png")}
    assert {"bathymetry-swath", "side-scan-waterfall"} <= pngs
    from mcap.reader import make_reader
    from mcap_protobuf.decoder import DecoderFactory

    with open(out / "recording.mcap", "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        seen = {}
        for _, channel, _, msg in reader.iter_decoded_messages(
                topics=["/multibeam/multibeam", "/sidescan/side_scan", "/altimeter/altimeter"]):
            seen.setdefault(channel.topic, msg)
    assert len(seen["/multibeam/multibeam"].beams) == 256
    assert len(seen["/sidescan/side_scan"].port_intensity) == 400
    assert 9.0 < seen["/altimeter/altimeter"].range_m < 11.0
