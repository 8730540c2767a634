"""Real-time priorities of child processes (orchestrator/run.py ``child_priorities``):
rate-monotonic below the stepping thread — the children whose fastest component has
the highest rate at N - 1, the next rate at N - 2, … never below 1; a process group's
members share their process's."""

from __future__ import annotations

import textwrap

from conftest import RIGS
from moonpool.orchestrator.rigfile import load_rig
from moonpool.orchestrator.run import child_priorities


def _rig(tmp_path, components: str):
    path = tmp_path / "r.toml"
    path.write_text('[run]\nuntil = "1s"\n' + textwrap.dedent(components))
    return load_rig(path)


def test_the_pool_rig_in_real_time_puts_its_fast_group_above_camera_and_localizer():
    prio = child_priorities(load_rig(RIGS / "pool_realtime.toml"), 50)
    assert prio.pop("camera") == prio.pop("localizer") == 48  # 30 Hz
    assert set(prio) == {"t1", "pressure", "imu", "ekf", "controller", "allocator",
                         "thrusters", "vehicle"}
    assert set(prio.values()) == {49}  # the group: its fastest members step at 100 Hz


def test_rates_rank_the_children_and_in_process_components_take_none(tmp_path):
    rig = _rig(tmp_path, """
        [components.slow]
        entry = "probes:Count"
        run = "process"
        rate_hz = 10
        [components.fast]
        entry = "probes:Count"
        run = "process"
        rate_hz = 100
        [components.also_fast]
        entry = "probes:Count"
        run = "process"
        rate_hz = 100
        [components.g_slow]
        entry = "probes:Count"
        run = "process"
        group = "g"
        rate_hz = 5
        [components.g_mid]
        entry = "probes:Count"
        run = "process"
        group = "g"
        rate_hz = 50
        [components.here]
        entry = "probes:Count"
        rate_hz = 1000
        """)
    assert child_priorities(rig, 20) == {"fast": 19, "also_fast": 19, "g_slow": 18,
                                         "g_mid": 18, "slow": 17}
    assert child_priorities(rig, 2) == {"fast": 1, "also_fast": 1, "g_slow": 1,
                                        "g_mid": 1, "slow": 1}
    assert child_priorities(rig, 0) == {}
