"""Waterfall plots (orchestrator/plots.py, ``kind = "waterfall"`` in [[plots]]): the
values a ``[*]`` path picks, the PNG drawn from a real recording, and the rig check of
the kind and the path (a waterfall needs exactly one [*]; a line plot none)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from google.protobuf.message import Message

from moonpool.components.sdk import wire
from moonpool.orchestrator.plots import make_plots, waterfall_rows
from moonpool.orchestrator.recording import Recorder
from moonpool.orchestrator.rig import PlotSpec
from moonpool.orchestrator.rigfile.fields import field_problem
from moonpool.v1 import acoustics_pb2, common_pb2, signals_pb2

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _multibeam(k: int) -> Message:
    m = acoustics_pb2.Multibeam(header=common_pb2.Header(sim_time_ns=k * 10**8))
    for j in range(5):
        b = m.beams.add(range_m=10.0 + j)
        b.true_point_ned_m.z = 100.0 + k + 0.1 * j
    return m


def test_waterfall_rows_walks_one_star():
    m = _multibeam(2)
    assert waterfall_rows(m, "beams[*].true_point_ned_m.z") == [102.0, 102.1, 102.2, 102.3,
                                                                 102.4]
    assert waterfall_rows(m, "beams[*].range_m") == [10.0, 11.0, 12.0, 13.0, 14.0]
    s = acoustics_pb2.SideScan(port_intensity=[1.0, 2.0, 3.0])
    assert waterfall_rows(s, "port_intensity[*]") == [1.0, 2.0, 3.0]
    sig = signals_pb2.Signals()
    sig.signals.add(name="a", value=1.0)
    assert waterfall_rows(sig, "signals[*].value") == [1.0]
    assert waterfall_rows(m, "beams[*].nope") == []


def test_waterfall_png_from_a_recording(tmp_path: Path):
    rec = tmp_path / "r.mcap"
    with Recorder(rec) as r:
        ch = r.add_topic("/mb/multibeam", "moonpool.v1.Multibeam")
        for k in range(20):
            r.write(ch, k * 10**8, wire.serialize(_multibeam(k)))
    spec = PlotSpec(title="Swath", series=("mb.multibeam:beams[*].true_point_ned_m.z",),
                    ylabel="depth [m]", kind="waterfall")
    paths = make_plots(rec, tmp_path / "plots", [spec])
    swath = tmp_path / "plots" / "swath.png"
    assert swath in paths and swath.read_bytes()[:8] == PNG_MAGIC


def test_field_check_of_waterfall_paths():
    mb = acoustics_pb2.Multibeam.DESCRIPTOR
    assert field_problem(mb, "beams[*].true_point_ned_m.z", waterfall=True) is None
    assert field_problem(acoustics_pb2.SideScan.DESCRIPTOR, "port_intensity[*]",
                         waterfall=True) is None
    assert "one [*]" in field_problem(mb, "beams[0].range_m", waterfall=True)
    assert "for kind = \"waterfall\"" in field_problem(mb, "beams[*].range_m")
    assert "no field 'rnage_m'" in field_problem(mb, "beams[*].rnage_m", waterfall=True)


def test_rig_kind_is_checked(tmp_path: Path):
    from moonpool.components.sdk.errors import RigValidationError
    from moonpool.orchestrator.rigfile import load_and_check

    rig = tmp_path / "rig.toml"
    rig.write_text("""
[run]
until = "1s"
[components.mb]
entry = "sensors.multibeam"
rate_hz = 1
[[plots]]
title = "a"
kind = "heatmap"
series = ["mb.multibeam:beams[*].range_m"]
[[plots]]
title = "b"
kind = "waterfall"
series = ["mb.multibeam:beams[3].range_m"]
[[plots]]
title = "c"
kind = "waterfall"
series = ["mb.multibeam:beams[*].range_m"]
""", encoding="utf-8")
    try:
        load_and_check(rig)
        raise AssertionError("expected problems")
    except RigValidationError as exc:
        text = "\n".join(str(p) for p in exc.problems)
    assert "plots[0].kind" in text and "waterfall" in text
    assert "plots[1].series[0]" in text and "one [*]" in text
    assert "plots[2]" not in text
    assert np.isfinite(1.0)
