"""calibrate hydro reads a moonpool recording as a trial (issue 23): a short run of
rigs/hydro_fmu.toml read from its MCAP gives the same arrays as the CSV written from the
recording's tables (the orchestrator's independent reader, the wrench held at each state
instant), and a wrong topic is refused naming the file, the topics it has and the fix."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT
from moonpool.components.dynamics import calibration as cal
from moonpool.components.sdk.errors import ParameterError
from moonpool.orchestrator.recording import read

pytestmark = pytest.mark.slow


def test_mcap_trial_equals_csv_export(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run([sys.executable, "-m", "moonpool.orchestrator.cli", "run",
                           str(ROOT / "rigs" / "hydro_fmu.toml"), "--until", "3s", "--out",
                           str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    rec = out / "recording.mcap"
    tab = {k: v.to_pandas() for k, v in read(rec, ["/thrust/wrench", "/vehicle/state"]).items()}
    st = tab["/vehicle/state"].drop_duplicates("log_time_ns", keep="last")
    wr = tab["/thrust/wrench"]
    rows = ["t,tau_X,u"]
    for tns, u in zip(st["log_time_ns"], st["linear_velocity_body_mps.x"]):
        before = wr[wr["log_time_ns"] <= tns]
        x = float(before["force_n.x"].iloc[-1]) if len(before) else 0.0
        rows.append(f"{float((tns - st['log_time_ns'].iloc[0]) * 1e-9)!r},{x!r},{float(u)!r}")
    csv = tmp_path / "export.csv"
    csv.write_text("\n".join(rows) + "\n")
    a, b = cal.read_trial(rec), cal.read_trial(csv)
    assert a.axis == b.axis == "u" and len(a.t) == len(b.t) == 300
    np.testing.assert_allclose(a.t, b.t, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(a.tau, b.tau)
    np.testing.assert_array_equal(a.vel, b.vel)
    assert np.ptp(a.vel) > 0.1 and set(np.unique(a.tau)) == {40.0}
    with pytest.raises(ParameterError, match=r"no messages on topic '/thrust/wrenc'.*"
                                             r"did you mean '/thrust/wrench'") as e:
        cal.read_trial(rec, wrench_topic="/thrust/wrenc")
    assert str(rec) in str(e.value) and "--wrench-topic" in e.value.fix
