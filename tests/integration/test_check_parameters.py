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
