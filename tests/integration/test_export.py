"""Data out of a recording (issue 22): ``moonpool export`` writes one CSV or Parquet
file per topic, fields flattened with their protobuf names, time in s and ns; the
Python API ``moonpool.orchestrator.recording.read`` gives the same as Arrow tables.
Checked against the messages decoded directly from the MCAP file."""

from __future__ import annotations

import csv

import pyarrow.parquet as pq
import pytest
from conftest import RIGS, moonpool

from moonpool.orchestrator.export import flatten_fields
from moonpool.orchestrator.recording import decode_recorded, read, read_recording
from moonpool.v1 import signals_pb2


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    out = tmp_path_factory.mktemp("run")
    proc = moonpool("run", str(RIGS / "quickstart.toml"), "--until", "1", "--out",
                    str(out / "r"), "--quiet", "--set", "run.plots=false")
    assert proc.returncode == 0, proc.stderr
    return out / "r" / "recording.mcap"


def _decoded(recording, topic):
    return [(m.log_time_ns, decode_recorded(m)) for m in read_recording(recording)
            if m.topic == topic]


def test_csv_one_file_per_topic_with_protobuf_names(recording, tmp_path):
    proc = moonpool("export", str(recording), "--out", str(tmp_path / "csv"))
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in (tmp_path / "csv").iterdir())
    assert names == ["pid.setpoint.csv", "pid.wrench.csv", "sensor.pressure.csv",
                     "vehicle.state.csv"]
    with open(tmp_path / "csv" / "vehicle.state.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    truth = _decoded(recording, "/vehicle/state")
    assert len(rows) == len(truth)
    assert list(rows[0])[:3] == ["log_time_ns", "t_s", "header.sim_time_ns"]
    for row, (t_ns, msg) in zip(rows, truth):
        assert int(row["log_time_ns"]) == t_ns and float(row["t_s"]) == t_ns * 1e-9
        assert float(row["position_ned_m.z"]) == msg.position_ned_m.z  # exact (repr)
        assert row["header.source"] == "vehicle"


def test_parquet_and_the_python_api_agree(recording, tmp_path):
    proc = moonpool("export", str(recording), "--format", "parquet", "--topics",
                    "vehicle.state", "/sensor/pressure", "--out", str(tmp_path / "pq"))
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(tmp_path / "pq" / "vehicle.state.parquet")
    api = read(recording, ["/vehicle/state"])["/vehicle/state"]
    assert table.equals(api)
    assert str(api.schema.field("log_time_ns").type) == "int64"
    truth = _decoded(recording, "/vehicle/state")
    assert api.column("position_ned_m.z").to_pylist() == [m.position_ned_m.z for _, m in truth]
    assert sorted(p.name for p in (tmp_path / "pq").iterdir()) == [
        "sensor.pressure.parquet", "vehicle.state.parquet"]


def test_an_unknown_topic_is_refused_naming_those_held(recording, tmp_path):
    proc = moonpool("export", str(recording), "--topics", "vehicle.stat", "--out",
                    str(tmp_path / "x"))
    assert proc.returncode == 2
    assert "/vehicle/stat" in proc.stderr and "/vehicle/state" in proc.stderr


def test_repeated_and_named_fields_flatten_as_documented():
    msg = signals_pb2.Signals()
    msg.signals.add(name="depth", value=1.5)
    msg.signals.add(name="", value=2.0)
    flat = dict(flatten_fields(msg))
    assert flat["signals[depth].value"] == 1.5 and flat["signals[1].value"] == 2.0
