"""rigs/crawler.toml: a tracked crawler on the real hydrodynamics FMU, driving straight
on deep-sea clay (seed 000 section VI-A, Fig. 8).

- At rest, the crawler settles at the closed-form static sinkage.
- Driving, it reaches a steady speed where traction balances the resistance; the
  drawbar pull equals the FMU's hydrodynamic drag (its D1, D2 from the profile) plus
  the net-weight component of the pitch, computed here independently.
- Straight driving keeps the lateral forces symmetric: left = right, no net lateral
  force, no yaw moment, no sway or yaw motion.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import RIGS
from moonpool.components.terramechanics.bekker import static_sinkage_track
from moonpool.components.terramechanics.soils import DEEP_SEA_CLAY
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig

RIG = RIGS / "crawler.toml"


def _read(path):
    from mcap.reader import make_reader
    from mcap_protobuf.decoder import DecoderFactory

    diag, states = [], []
    with open(path, "rb") as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for _, ch, m, msg in reader.iter_decoded_messages(
                topics=["/terra/diagnostics", "/vehicle/state"]):
            if ch.topic == "/terra/diagnostics":
                diag.append((m.log_time * 1e-9, {s.name: s.value for s in msg.signals}))
            else:
                states.append((m.log_time * 1e-9, msg))
    return diag, states


def _series(diag, name, t0=-1.0, t1=1e9):
    return np.array([d[name] for t, d in diag if t0 <= t <= t1])


@pytest.fixture(scope="module")
def drive_run(fmus, tmp_path_factory):
    out = tmp_path_factory.mktemp("crawler") / "out"
    rig = load_and_check(RIG, ["run.until=10s"])
    result = run_rig(rig, out)
    assert result.ok, result.summary["error"]
    return rig, result, *_read(out / "recording.mcap"), out


def test_crawler_settles_at_the_closed_form_sinkage(fmus, tmp_path):
    rig = load_and_check(RIG, ["run.until=5s", "components.terra.parameters.drive_schedule=[]"])
    result = run_rig(rig, tmp_path / "out")
    assert result.ok, result.summary["error"]
    diag, states = _read(tmp_path / "out" / "recording.mcap")
    p = rig.component("vehicle").parameters["profile"]
    par, track = p["parameters"], p["tracks"][0]
    W = (par["mass"] - par["rho_surface"] * par["volume"]) * par["g"]       # net weight, N
    b, l = track["width_m"], track["length_m"]
    closed = (W / 2 / (b * l * (DEEP_SEA_CLAY.k_c / b + DEEP_SEA_CLAY.k_phi))) ** (1 / DEEP_SEA_CLAY.n)
    assert closed == pytest.approx(static_sinkage_track(DEEP_SEA_CLAY, W / 2, b, l), rel=1e-12)
    last = diag[-1][1]
    for side in ("left", "right"):
        assert last[f"{side}_sinkage_m"] == pytest.approx(closed, rel=1e-4)
        assert last[f"{side}_normal_load_n"] == pytest.approx(W / 2, rel=1e-4)
    # the FMU's depth agrees: tracks 0.6 m below CO, seabed at 4000 m
    assert states[-1][1].position_ned_m.z == pytest.approx(4000.0 - 0.6 + closed, abs=1e-5)
    assert max(abs(d["speed_mps"]) for _, d in diag) < 1e-6          # nothing drives it
    assert result.summary["metrics"]["terra"]["static_sinkage_m"] == pytest.approx(closed, rel=1e-9)


def test_crawler_reaches_steady_speed_where_traction_balances_resistance(drive_run):
    rig, result, diag, states, _ = drive_run
    late = [(t, s) for t, s in states if t >= 9.0]
    u = np.array([s.linear_velocity_body_mps.x for _, s in late])
    du = np.array([s.linear_acceleration_body_mps2.x for _, s in late])
    assert np.ptp(u) < 5e-5 and np.max(np.abs(du)) < 1e-4                # steady
    end = diag[-1][1]
    V = end["left_drive_speed_mps"]
    assert V == 0.5
    assert u[-1] == pytest.approx(V * (1 - end["left_slip"]), rel=1e-5)  # u = V (1 − i)
    assert 0 < end["left_slip"] < 0.05
    # traction balances resistance (compaction + everything else on the body)
    T, R = end["traction_n"], end["resistance_n"]
    assert T > 100 and abs(T - R) < 1e-3 * T
    # ... and, independently, the drawbar pull equals the FMU's drag law from the
    # profile plus the net weight's component along the pitched body x axis
    p = rig.component("vehicle").parameters["profile"]["parameters"]
    s = late[-1][1]
    u_end = s.linear_velocity_body_mps.x
    drag = p["D1_u"] * u_end + p["D2_u"] * u_end * abs(u_end)
    net_weight = (p["mass"] - s.water_density_kgpm3 * p["volume"]) * p["g"]
    along = net_weight * math.sin(s.pitch_rad)
    assert end["drawbar_pull_n"] == pytest.approx(drag + along, rel=2e-3)
    # Fig. 8: while accelerating, the traction exceeds the resistance
    accel = [d for t, d in diag if 2.5 <= t <= 3.9]
    assert all(d["traction_n"] - d["resistance_n"] > 100 for d in accel)
    assert result.summary["metrics"]["terra"]["unconverged_steps"] == 0


def test_straight_driving_keeps_lateral_forces_symmetric(drive_run):
    _, _, diag, states, _ = drive_run
    left, right = _series(diag, "left_lateral_n"), _series(diag, "right_lateral_n")
    assert np.max(np.abs(left - right)) < 1e-6
    assert np.max(np.abs(_series(diag, "lateral_n"))) < 1e-6
    assert np.max(np.abs(_series(diag, "yaw_moment_nm"))) < 1e-6
    tl, tr = _series(diag, "left_traction_n"), _series(diag, "right_traction_n")
    assert np.max(np.abs(tl - tr)) <= 1e-9 * np.max(np.abs(tl))
    assert max(abs(s.linear_velocity_body_mps.y) for _, s in states) < 1e-9
    assert max(abs(s.yaw_rad) for _, s in states) < 1e-9
    assert max(abs(s.position_ned_m.y) for _, s in states) < 1e-9


def test_crawler_rig_draws_its_plots(drive_run):
    out = drive_run[-1]
    for name in ("longitudinal-forces", "lateral-forces", "sinkage", "speed", "slip"):
        assert (out / "plots" / f"{name}.png").exists(), name


@pytest.mark.slow
def test_crawler_rig_is_the_same_in_a_child_process(fmus, tmp_path):
    digests = {}
    for mode in ("inproc", "process"):
        rig = load_and_check(RIG, ["run.until=3s", "run.record=false", "run.plots=false"],
                             mode=mode)
        result = run_rig(rig, tmp_path / mode)
        assert result.ok, (mode, result.summary["error"])
        digests[mode] = result.summary["digest"]
    assert digests["inproc"] == digests["process"]
