"""A run that fails before its components were initialised (issue 22): terminate()
after configure alone must not reach state that initialize builds. The shipped
components are configured with the shipped rigs' parameters and terminated at once;
a real run whose first component fails at initialize ends with that error only —
no "'StationKeeping' object has no attribute 'trials'" warnings."""

from __future__ import annotations

import pytest
from conftest import RIGS, ROOT, moonpool

from moonpool.components.sdk import wire
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk.loading import load_entry
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.v1 import lifecycle_pb2 as lc

# Every shipped rig (the HIL rigs need their devices) and the controllers that a rig
# swaps in (the NMPC in place of pool_t2's PID).
RIG_NAMES = sorted(p.stem for p in RIGS.glob("*.toml"))
SWAPPED = {"pool_t2": ["components.controller.entry=control.nmpc"]}


def _components():
    seen = set()
    for name in RIG_NAMES:
        for overrides in ([], *([o] for o in SWAPPED.get(name, []))):
            rig = load_and_check(RIGS / f"{name}.toml", overrides)
            for c in rig.components:
                if c.entry and c.entry not in seen:
                    seen.add(c.entry)
                    yield pytest.param(c, id=f"{name}.{c.name}")


@pytest.mark.parametrize("cfg", list(_components()))
def test_terminate_right_after_configure(cfg):
    component = load_entry(cfg.entry, cfg.base_dir)()
    host = ComponentHost(component, base_dir=cfg.base_dir)
    msg = lc.Configure(instance_name=cfg.name, seed=0, period_ns=cfg.schedule.nominal_period_ns)
    for k, v in cfg.parameters.items():
        msg.parameters.add(name=k, value=wire.to_parameter_value(v))
    host.configure(msg)
    component.terminate()  # the component itself, not through the host's guard: no raise
    assert host.terminate() == {}  # no run, no metrics


def test_a_run_failing_at_the_first_initialize_reports_only_that(tmp_path):
    # pool_t1 with a component first in rig order (initialised first) that fails.
    text = (RIGS / "pool_t1.toml").read_text().replace('"../', f'"{ROOT}/')
    text = text.replace("[components.t1]", '[components.boom]\nentry = "faulty:FailsAtInitialize"'
                        "\nrate_hz = 10\n\n[components.t1]", 1)
    text = text.replace('order = ["t1",', 'order = ["boom", "t1",', 1)
    rig = tmp_path / "early.toml"
    rig.write_text(text)
    out = tmp_path / "out"
    shown = moonpool("run", str(rig), "--out", str(tmp_path / "shown"))  # not --quiet
    assert shown.returncode == 1
    # Failure output not noisy: the error once, no table of zeros, no digest of the
    # empty stream, no plot "skipped" warnings.
    assert shown.stderr.count("deliberate failure at initialize") == 1, shown.stderr
    assert "p50 µs" not in shown.stdout and "digest" not in shown.stdout, shown.stdout
    assert "skipped" not in shown.stderr, shown.stderr
    proc = moonpool("run", str(rig), "--out", str(out), "--quiet")
    assert proc.returncode == 1, proc.stderr
    assert "deliberate failure at initialize" in proc.stderr
    assert "has no attribute" not in proc.stderr, proc.stderr
    assert "terminate failed" not in proc.stderr, proc.stderr
    assert proc.stderr.count("deliberate failure at initialize") == 1, proc.stderr
