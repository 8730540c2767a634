"""PNG plots drawn from a recording (orchestrator/plots.py)."""

from __future__ import annotations

import logging
import math
from pathlib import Path

import pytest

from moonpool.components.sdk import wire
from moonpool.orchestrator.plots import _panels, _Topic, flatten, make_plots, slugify
from moonpool.orchestrator.recording import Recorder
from moonpool.orchestrator.rig import PlotSpec
from moonpool.v1 import common_pb2, sensors_pb2, signals_pb2, vehicle_pb2

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _record(path: Path, n: int = 200) -> None:
    with Recorder(path) as rec:
        ch_v = rec.add_topic("/vehicle/state", "moonpool.v1.VehicleState")
        ch_p = rec.add_topic("/pressure/out", "moonpool.v1.Pressure")
        ch_s = rec.add_topic("/fmu/signals", "moonpool.v1.Signals")
        ch_t = rec.add_topic("/allocator/command", "moonpool.v1.ThrusterCommand")
        for i in range(n):
            t = i * 10_000_000
            s = t / 1e9
            header = common_pb2.Header(sim_time_ns=t, seq=i)
            rec.write(ch_v, t, wire.serialize(vehicle_pb2.VehicleState(
                header=header,
                position_ned_m=common_pb2.Vector3(x=s, y=0.0, z=math.sin(s)),
                orientation=common_pb2.Quaternion(w=1.0),
                yaw_rad=0.1 * s,
            )))
            if i % 2 == 0:  # 50 Hz, with a dropout
                valid = not 80 <= i < 100
                rec.write(ch_p, t + 1, wire.serialize(sensors_pb2.Pressure(
                    header=header,
                    validity=common_pb2.Validity(
                        valid=valid, reason=0 if valid else common_pb2.REFUSAL_REASON_DROPOUT),
                    pressure_pa=101325.0 + 1e4 * math.sin(s) if valid else 0.0,
                )), attachment=b"raw" if i == 0 else None)
            sig = signals_pb2.Signals(header=header)
            sig.signals.add(name="depth", value=math.sin(s))
            sig.signals.add(name="unused", value=0.0)
            rec.write(ch_s, t, wire.serialize(sig))
            cmd = vehicle_pb2.ThrusterCommand(
                header=header, force_n=[i * 0.1 * k for k in range(10)]
            )
            cmd.saturated = i > 150
            rec.write(ch_t, t, wire.serialize(cmd))


def _is_png(path: Path) -> bool:
    data = path.read_bytes()
    return len(data) > 1000 and data.startswith(PNG_MAGIC)


def test_flatten_paths() -> None:
    cmd = vehicle_pb2.ThrusterCommand(
        header=common_pb2.Header(seq=3), force_n=list(range(10)), saturated=True
    )
    cmd.achieved.force_n.z = 2.5
    paths = {p: (v, k) for p, v, k in flatten(cmd)}
    assert paths["header.seq"] == (3.0, "number")
    assert "header.source" not in paths  # strings are not plotted
    assert [p for p in paths if p.startswith("force_n[")] == [f"force_n[{i}]" for i in range(8)]
    assert paths["saturated"] == (1.0, "step")
    assert paths["achieved.force_n.z"][0] == 2.5
    sig = signals_pb2.Signals()
    sig.signals.add(name="depth", value=1.5)
    sig.signals.add(value=2.0)
    paths = {p: v for p, v, _ in flatten(sig)}
    assert paths["signals[depth].value"] == 1.5
    assert paths["signals[1].value"] == 2.0
    p = sensors_pb2.Pressure(validity=common_pb2.Validity(reason=5))
    assert ("validity.reason", 5.0, "step") in list(flatten(p))


def test_panels_skip_header_and_constant_zero() -> None:
    topic = _Topic()
    for i in range(5):
        topic.add(i * 1_000_000_000, vehicle_pb2.VehicleState(
            header=common_pb2.Header(sim_time_ns=i, seq=i),
            position_ned_m=common_pb2.Vector3(z=float(i)),
            orientation=common_pb2.Quaternion(w=1.0),
        ))
    names = [name for name, *_ in _panels([("state", topic)])]
    assert names == ["state: position_ned_m.z", "state: orientation.w"]
    (_, t, y, kind) = _panels([("state", topic)])[0]
    assert list(t) == [0.0, 1.0, 2.0, 3.0, 4.0] and list(y) == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_component_and_spec_plots(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rec = tmp_path / "recording.mcap"
    _record(rec)
    specs = [
        PlotSpec("Depth vs. FMU", ("vehicle.state:position_ned_m.z",
                                   "fmu.signals:signals[depth].value"), ylabel="depth [m]"),
        PlotSpec("Broken / partly", ("vehicle.state:position_ned_m.z", "nobody.out:x",
                                     "vehicle.state:no_such.field", "garbage")),
        PlotSpec("Nothing at all", ("ghost.port:value",)),
    ]
    with caplog.at_level(logging.WARNING, logger="moonpool.plots"):
        paths = make_plots(rec, tmp_path / "plots", specs)
    names = sorted(p.name for p in paths)
    assert names == sorted([
        "vehicle.png", "pressure.png", "fmu.png", "allocator.png",
        "depth-vs-fmu.png", "broken-partly.png", "nothing-at-all.png",
    ])
    for p in paths:
        assert p.parent == tmp_path / "plots"
        assert _is_png(p), p
    warnings = caplog.text
    assert "nobody.out:x" in warnings and "no_such.field" in warnings and "garbage" in warnings


def test_many_fields_are_capped_and_listed(tmp_path: Path) -> None:
    topic = _Topic()
    for i in range(1, 4):
        v = float(i)
        topic.add(i, vehicle_pb2.VehicleState(
            position_ned_m=common_pb2.Vector3(x=v, y=v, z=v),
            orientation=common_pb2.Quaternion(w=v, x=v, y=v, z=v),
            roll_rad=v, pitch_rad=v, yaw_rad=v,
            linear_velocity_body_mps=common_pb2.Vector3(x=v, y=v, z=v),
        ))
    assert len(_panels([("state", topic)])) == 13  # > 12: one is listed, not drawn
    rec = tmp_path / "recording.mcap"
    with Recorder(rec) as r:
        ch = r.add_topic("/vehicle/state", "moonpool.v1.VehicleState")
        for i in range(1, 4):
            v = float(i)
            r.write(ch, i, wire.serialize(vehicle_pb2.VehicleState(
                position_ned_m=common_pb2.Vector3(x=v, y=v, z=v),
                orientation=common_pb2.Quaternion(w=v, x=v, y=v, z=v),
                roll_rad=v, pitch_rad=v, yaw_rad=v,
                linear_velocity_body_mps=common_pb2.Vector3(x=v, y=v, z=v),
            )))
        q = r.add_topic("/quiet/out", "moonpool.v1.Pressure")  # all zero: still a figure
        r.write(q, 0, b"")
    paths = make_plots(rec, tmp_path)
    assert sorted(p.name for p in paths) == ["quiet.png", "vehicle.png"]
    assert all(_is_png(p) for p in paths)


def test_missing_recording_does_not_crash(tmp_path: Path) -> None:
    paths = make_plots(tmp_path / "nope.mcap", tmp_path / "out", [PlotSpec("Depth", ("a.b:c",))])
    assert [p.name for p in paths] == ["depth.png"]
    assert _is_png(paths[0])


def test_name_collisions_and_slugs(tmp_path: Path) -> None:
    assert slugify("Depth vs. setpoint (m)") == "depth-vs-setpoint-m"
    assert slugify("!!!") == "plot"
    rec = tmp_path / "recording.mcap"
    with Recorder(rec) as r:
        ch = r.add_topic("/depth/out", "moonpool.v1.Pressure")
        r.write(ch, 0, wire.serialize(sensors_pb2.Pressure(pressure_pa=1.0)))
    paths = make_plots(rec, tmp_path, [PlotSpec("Depth", ("depth.out:pressure_pa",))])
    assert [p.name for p in paths] == ["depth.png", "depth-2.png"]
