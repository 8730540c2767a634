"""The wire schema: generated code is fresh, conventions hold, packaging is complete."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from google.protobuf import descriptor_pool

import moonpool.v1
from moonpool.v1 import lifecycle_pb2

ROOT = Path(__file__).resolve().parents[2]


def test_generated_code_is_not_stale():
    proc = subprocess.run([sys.executable, str(ROOT / "proto" / "generate.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, (
        "generated code is stale; run `python proto/generate.py` and commit:\n" + proc.stdout
        + proc.stderr)


def _files():
    pool = descriptor_pool.Default()
    return [pool.FindFileByName(f"moonpool/v1/{p.stem}.proto")
            for p in (ROOT / "proto" / "moonpool" / "v1").glob("*.proto")]


def test_enum_zero_values_are_unspecified():
    for f in _files():
        enums = list(f.enum_types_by_name.values())
        for m in f.message_types_by_name.values():
            enums.extend(m.enum_types)
        for e in enums:
            assert e.values[0].number == 0 and e.values[0].name.endswith("_UNSPECIFIED"), e.full_name
            assert f.package == "moonpool.v1"


def test_published_messages_start_with_a_header():
    exempt = {"Header", "Vector3", "Quaternion", "Validity", "Covariance", "Signal", "Point2",
              "DvlBeam", "ThrusterState", "TagDetection"}
    for f in _files():
        if f.name.endswith("lifecycle.proto"):
            continue
        for name, m in f.message_types_by_name.items():
            if name in exempt:
                continue
            assert "header" in m.fields_by_name, name
            assert m.fields_by_name["header"].number == 1, name


def test_measurements_carry_validity():
    pool = descriptor_pool.Default()
    for name in ("Imu", "Dvl", "Pressure", "Magnetometer", "Usbl", "Gnss", "TagDetections",
                 "PoseMeasurement", "NavigationState"):
        m = pool.FindMessageTypeByName(f"moonpool.v1.{name}")
        assert m.fields_by_name["validity"].message_type.full_name == "moonpool.v1.Validity"


def test_every_package_folder_is_listed_in_pyproject():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(conf["packages"])
    mapping = conf["package-dir"]
    found = set()
    for pkg, folder in mapping.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(".".join([pkg, *rel.parts]) if rel.parts else pkg)
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"


def test_protocol_version_constant():
    from moonpool.components.sdk.wire import PROTOCOL_VERSION

    assert PROTOCOL_VERSION == lifecycle_pb2.PROTOCOL_VERSION_1 == 1
    assert "lifecycle_pb2" in moonpool.v1.__all__
