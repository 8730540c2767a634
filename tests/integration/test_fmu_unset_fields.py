"""A message mapped only in part from an FMU (issue 22): yaw alone into VehicleState
leaves its quaternion (0, 0, 0, 0), not a rotation; `moonpool check` (and the run)
warn, naming the fields left unset. A whole mapping gives no warning."""

from __future__ import annotations

from conftest import RIGS, moonpool


def test_yaw_alone_into_vehicle_state_warns_about_the_quaternion(fmus):
    proc = moonpool("check", str(RIGS / "hydro_fmu.toml"), "--set",
                    'components.vehicle.parameters.outputs.state.fields={ "yaw_rad" = "yaw" }')
    assert proc.returncode == 0, proc.stderr  # a warning, not a refusal
    assert "outputs.state: orientation is not mapped" in proc.stderr
    assert "orientation.w, orientation.x, orientation.y, orientation.z stay 0" in proc.stderr
    assert proc.stderr.count("orientation is not mapped") == 1


def test_part_of_the_quaternion_warns_with_what_is_missing(fmus):
    proc = moonpool("check", str(RIGS / "hydro_fmu.toml"), "--set",
                    'components.vehicle.parameters.outputs.state.fields='
                    '{ "orientation.w" = "qw", "orientation.z" = "qz" }')
    assert proc.returncode == 0, proc.stderr
    assert "orientation is only partly mapped: orientation.x, orientation.y stay 0" in proc.stderr


def test_the_shipped_mapping_is_whole(fmus):
    proc = moonpool("check", str(RIGS / "hydro_fmu.toml"))
    assert proc.returncode == 0, proc.stderr
    assert "not mapped" not in proc.stderr and "partly mapped" not in proc.stderr
