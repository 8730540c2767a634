"""``moonpool check`` runs each component's own parameter checks (issue 22): what
used to pass the check and fail at run time — a negative count, a misspelt
trajectory, a missing setup file or video, a serial port that is not there — is now
refused by the check, exit 2, naming the component and the parameter, and nothing is
started (the checks are ``Component.check_parameters``, the same the host runs
before configure)."""

from __future__ import annotations

import pytest
from conftest import RIGS, moonpool

CASES = [
    ("pool_t1.toml", "components.t1.parameters.count=-1",
     ["components.t1.parameters", "count: must be >= 0"]),
    ("pool_t2.toml", "components.t2.parameters.trajectory=elipse",
     ["components.t2.parameters", "unknown trajectory 'elipse'", "did you mean 'ellipse'"]),
    ("pool.toml", 'components.camera.parameters.setup_file="no-such-setup.json"',
     ["components.camera.parameters", "no-such-setup.json"]),
    ("pool.toml", 'components.localizer.parameters.setup_file="no-such-setup.json"',
     ["components.localizer.parameters", "no-such-setup.json"]),
    ("hil/pool_camera.toml", 'components.camera.parameters.source="no-such-video.avi"',
     ["components.camera.parameters", "no-such-video.avi does not exist"]),
    ("hil/pool_mcu.toml", 'components.thrusters.parameters.port="/dev/no-such-tty"',
     ["components.thrusters.parameters", "/dev/no-such-tty does not exist", "emulator"]),
]


@pytest.mark.parametrize("rig, override, expected", CASES, ids=[c[1].split("=")[0] for c in CASES])
def test_check_refuses_what_the_run_would(rig, override, expected):
    proc = moonpool("check", str(RIGS / rig), "--set", override)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert ": ok" not in proc.stdout
    for text in expected:
        assert text in proc.stderr, proc.stderr


def test_the_run_refuses_them_the_same_way(tmp_path):
    proc = moonpool("run", str(RIGS / "pool_t2.toml"), "--set",
                    "components.t2.parameters.trajectory=elipse", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert "did you mean 'ellipse'" in proc.stderr
    assert not (tmp_path / "o").exists()  # refused before anything was written


def test_a_hil_rig_without_its_video_does_not_check_ok():
    # rigs/hil/pool_camera.toml plays a video written by scripts/record_pool_video.py;
    # pointed at a file that is not there (a clone that never made it), check says so.
    proc = moonpool("check", str(RIGS / "hil" / "pool_camera.toml"), "--set",
                    'components.camera.parameters.source="../../runs/hil/not-recorded.avi"')
    assert proc.returncode == 2
    assert "camera source" in proc.stderr and "does not exist" in proc.stderr


# Every shipped component whose configure refused values that `moonpool check` let
# through (found walking the point 4 again): the check now refuses them, and
# the run refuses them with the same words (the host runs the same check first).
PROFILE = (RIGS.parent / "fmus/hydrodynamics/profiles/bluerov2_heavy.toml").as_posix()
COMPONENT_CASES = [
    ("sensors.imu", "grade = \"nope\"", "unknown grade 'nope'"),
    ("sensors.imu", "gyro_noise_density = -1.0", "gyro_noise_density must be >= 0"),
    ("sensors.pressure", "latency_s = -1.0", "latency_s must be >= 0"),
    ("sensors.magnetometer", "field_model = \"nope\"", "unknown field_model 'nope'"),
    ("sensors.magnetometer", "soft_iron = [0, 0, 0, 0, 0, 0, 0, 0, 0]", "'soft_iron' is singular"),
    ("sensors.gnss", "dropout_probability = 2.0", "'dropout_probability' must be in [0, 1]"),
    ("sensors.usbl", "max_range_m = 0.0", "'max_range_m' must be > 0"),
    ("sensors.dvl", "latency_s = -1.0", "latency_s must be >= 0"),
    ("control.pid", "level_limit = -1.0", "level_limit must be >= 0"),
    ("control.nmpc", "horizon = 0", "horizon must be an integer >= 1"),
    ("localization.ekf", "gate_probability = 0.2", "gate_probability must be in (0.5, 1)"),
    ("navigation.ins", "gate_probability = 0.2", "gate_probability must be in (0.5, 1)"),
    ("quickstart.vehicle", "mass_kg = 0.0", "'mass_kg' must be > 0"),
    ("quickstart.pressure", "noise_pa = -1.0", "noise_pa and resolution_pa must be >= 0"),
    ("quickstart.depth_pid", "setpoints_m = []", "setpoints_m is empty"),
]


@pytest.mark.parametrize("entry, value, expected", COMPONENT_CASES,
                         ids=[f"{c[0]}:{c[1].split(' ')[0]}" for c in COMPONENT_CASES])
def test_check_refuses_each_components_bad_values_as_its_run_does(tmp_path, entry, value,
                                                                  expected):
    from moonpool.components.sdk.errors import ParameterError
    from moonpool.components.sdk.host import ComponentHost
    from moonpool.components.sdk.loading import load_entry
    from moonpool.components.sdk.wire import to_parameter_value
    from moonpool.orchestrator.rigfile import check_rig, load_rig
    from moonpool.v1 import lifecycle_pb2 as lc

    rig = tmp_path / "rig.toml"
    profile = f'profile = "{PROFILE}"\n' if entry.startswith("control.") else ""  # the model
    rig.write_text(f'[run]\nuntil = "1s"\n[components.c]\nentry = "{entry}"\nrate_hz = 10\n'
                   f'{profile}[components.c.parameters]\n{value}\n')
    problems = check_rig(load_rig(rig))
    assert [p.key for p in problems] == ["components.c.parameters"], problems
    assert expected in problems[0].message, problems[0].message
    # The run: the host configures the component with the same values.
    given = {**load_rig(rig).component("c").parameters}
    host = ComponentHost(load_entry(entry)())
    with pytest.raises(ParameterError) as err:
        host.configure(lc.Configure(instance_name="c", period_ns=100_000_000, parameters=[
            lc.NamedParameter(name=k, value=to_parameter_value(v)) for k, v in given.items()]))
    assert expected in str(err.value) and err.value.component == "c"
