"""setup.json (components/localization/pool_setup.py): round trip, accepted variants,
and errors that name the key and the fix."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from moonpool.components.sdk.errors import ParameterError
from moonpool.components.localization.pool_setup import (
    example_setup,
    load_setup,
    nadir_rotation,
    parse_setup,
    setup_to_dict,
    write_setup,
)

MINIMAL = {
    "K": [800.0, 800.0, 639.5, 359.5],
    "dist": [-0.05, 0.01, 0.0, 0.0, 0.0],
    "R_wc": [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
    "t_wc": [0.0, 0.0, -2.5],
    "tag_size_m": 0.15,
    "tags": [{"id": 0, "center_b": [0.11, 0.0, -0.14], "yaw_b_rad": 0.0},
             {"id": 1, "center_b": [-0.11, 0.0, -0.14], "yaw_b_rad": 1.5707963267948966}],
}


def test_round_trip_is_exact(tmp_path):
    s = example_setup()
    p = write_setup(s, tmp_path)
    assert p.name == "setup.json"
    back = load_setup(tmp_path)
    assert back == s
    assert np.array_equal(back.R_wc, s.R_wc)
    assert setup_to_dict(back) == setup_to_dict(s)


def test_minimal_file_and_defaults():
    s = parse_setup(MINIMAL)
    assert s.water_z == 0.0 and s.n_air == 1.0 and s.n_water == 1.333
    assert s.tag_family == "tag36h11" and s.image_size is None
    np.testing.assert_array_equal(s.camera_matrix, [[800, 0, 639.5], [0, 800, 359.5], [0, 0, 1]])
    # tag 1 turned by +90 deg: its top edge points to body +y
    c = s.corners_body(1)
    assert c[2, 1] > 0 and c[3, 1] > 0  # top-right and top-left on the +y side


def test_accepted_variants():
    d = dict(MINIMAL)
    cam = {"K": [[800.0, 0, 639.5], [0, 800.0, 359.5], [0, 0, 1]], "dist": [-0.05, 0.01, 0, 0],
           "R_wc": [1, 0, 0, 0, 1, 0, 0, 0, 1], "t_wc": [0, 0, -2.5]}
    for k in cam:
        del d[k]
    d["camera"] = cam
    d["image_size"] = [1280, 720]
    d["notes"] = "surveyed 2026-03-01"
    s = parse_setup(d)
    assert s.K == (800.0, 800.0, 639.5, 359.5)
    assert s.dist == (-0.05, 0.01, 0.0, 0.0, 0.0)
    assert s.image_size == (1280, 720)


def test_rounded_rotation_is_made_orthonormal():
    R = nadir_rotation(0.3, 0.05, -0.02)
    d = dict(MINIMAL, R_wc=np.round(R, 6).tolist())
    s = parse_setup(d)
    assert np.max(np.abs(s.R_wc.T @ s.R_wc - np.eye(3))) < 1e-14
    assert np.max(np.abs(s.R_wc - R)) < 2e-6


@pytest.mark.parametrize("change, key", [
    ({"K": None}, "K"),
    ({"K": [800, -1, 1, 1]}, "K"),
    ({"dist": [0.1, 0.2, 0.3]}, "dist"),
    ({"R_wc": [[1, 0, 0], [0, 1, 0], [0, 0, -1]]}, "R_wc"),  # a reflection
    ({"R_wc": [[1, 0, 0], [0, 1, 0.2], [0, 0, 1]]}, "R_wc"),
    ({"R_wc": [[1, 0, 0], [0, -1, 0], [0, 0, -1]]}, "R_wc"),  # looks up
    ({"t_wc": [0, 0, 0.5]}, "t_wc"),  # under water
    ({"t_wc": [0, 0]}, "t_wc"),
    ({"tag_size_m": 0}, "tag_size_m"),
    ({"tag_family": "tag36h11 tag25h9"}, "tag_family"),
    ({"n_water": 13.33}, "n_air/n_water"),
    ({"tags": []}, "tags"),
    ({"tags": [{"id": 0, "center_b": [0, 0, 0]}, {"id": 0, "center_b": [1, 0, 0]}]}, "tags[1].id"),
    ({"tags": [{"id": 587, "center_b": [0, 0, 0]}]}, "tags[0].id"),
    ({"tags": [{"id": 3}]}, "tags[0].center_b"),
    ({"tags": [{"id": 3, "center_b": [0, 0, 0], "yaw": 1}]}, "tags[0]"),
    ({"water_z": "0"}, "water_z"),
])
def test_errors_name_the_key_and_the_fix(change, key):
    d = dict(MINIMAL)
    for k, v in change.items():
        if v is None:
            del d[k]
        else:
            d[k] = v
    with pytest.raises(ParameterError) as info:
        parse_setup(d, "pool/setup.json")
    msg = str(info.value)
    assert f"pool/setup.json: {key}:" in msg
    assert info.value.fix


def test_file_errors(tmp_path):
    with pytest.raises(ParameterError, match="cannot read"):
        load_setup(tmp_path / "nope.json")
    bad = tmp_path / "setup.json"
    bad.write_text('{"K": [1, 2, 3, 4],\n "dist": [0, 0,, 0]}')
    with pytest.raises(ParameterError, match=r"setup.json:2:\d+: not valid JSON"):
        load_setup(tmp_path)


def test_example_is_a_camera_above_the_water_looking_down():
    s = example_setup()
    assert s.t_wc[2] < s.water_z
    assert s.R_wc[2, 2] > math.cos(math.radians(5))
    json.dumps(setup_to_dict(s))  # JSON-able


def test_a_key_both_at_the_top_level_and_in_camera():
    """The same key in both places is fine when it agrees; different values are refused
    naming the key (one of them would otherwise be ignored without a word)."""
    d = dict(MINIMAL, camera={"K": list(MINIMAL["K"]), "t_wc": [0.0, 0.0, -2.5]})
    assert parse_setup(d).K == tuple(MINIMAL["K"])
    d["camera"]["t_wc"] = [0.0, 0.0, -2.4]
    with pytest.raises(ParameterError) as info:
        parse_setup(d, "pool/setup.json")
    text = str(info.value)
    assert "pool/setup.json: t_wc: given twice" in text and "keep one t_wc" in text
