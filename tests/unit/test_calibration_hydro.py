"""calibrate hydro's fit (components/dynamics/calibration.py) on small synthetic trials:
noisy trials of the model give back its coefficients within their reported uncertainty
(each trial's initial velocity fitted with them), and a
least-squares run that stops without converging is reported naming the trial file and
the fix (the optimizer is replaced by one that gives up: SciPy's stops only at its
evaluation limit, which real trials do not reach)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import OptimizeResult

from moonpool.components.dynamics import calibration as cal

DT = 0.1


def _trial(name, tau, a=2.0, d1=3.0, d2=20.0, rigid=10.0, v0=0.0):
    """A trial of the decoupled model itself (RK4, the fit's own integrator)."""
    t = np.arange(len(tau)) * DT
    tr = cal.Trial(Path(name), "u", t, np.asarray(tau, float), np.zeros(len(tau)))
    return cal.Trial(tr.path, "u", t, tr.tau, cal.replay("u", rigid, a, d1, d2, 0.0, tr, v0))


def test_coefficients_come_back_within_their_uncertainty():
    """Three steps of the model itself with 5 mm/s of white noise on every sample (the
    first included: it is fitted, not trusted): each coefficient within 3 of its
    reported σ of the truth, and that σ below 5 %."""
    t = np.arange(300) * DT
    rng = np.random.default_rng(7)
    trials = []
    for i, f in enumerate((0.5, 2.0, 6.0)):
        tr = _trial(f"s{i}", np.where(t < 20, f, 0.0))
        noisy = tr.vel + 0.005 * rng.standard_normal(300)
        trials.append(cal.Trial(tr.path, "u", tr.t, tr.tau, noisy))
    fit = cal.fit_axis("u", trials, 10.0, False, (1.0, 1.0, 10.0))
    for got, truth, key in ((fit.added_mass, 2.0, "A"), (fit.d1, 3.0, "D1"), (fit.d2, 20.0, "D2")):
        assert abs(got - truth) < 3 * fit.sigma[key] and fit.sigma[key] < 0.05 * truth, (key, got)


def test_a_fit_that_does_not_converge_names_the_trial(monkeypatch):
    t = np.arange(100) * DT
    trial = _trial("trial_u_3.csv", np.where(t < 5, 2.0, 0.0))

    def gives_up(fun, x0, **kw):
        x = np.asarray(x0, float)
        return OptimizeResult(x=x, fun=fun(x), jac=np.eye(len(x)), success=False, status=0,
                              message="The maximum number of function evaluations is exceeded.")
    monkeypatch.setattr(cal, "least_squares", gives_up)
    words = r"axis u \(trial_u_3.csv\): the fit did not converge"
    with pytest.raises(cal.FitFailed, match=words) as e:
        cal.fit_axis("u", [trial], 10.0, False, (1.0, 1.0, 10.0))
    assert "more excitation" in e.value.fix
