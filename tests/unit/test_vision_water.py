"""Water presets (components/vision/water.py) against Jerlov's table, and the docs."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from moonpool.components.vision import water
from moonpool.components.vision.water import A_WATER, JERLOV, PRESETS, jerlov_kd

DOCS = Path(__file__).resolve().parents[2] / "docs" / "deepsea-camera.md"


def test_presets_reproduce_jerlovs_kd_except_where_pure_water_is_the_floor():
    clamped = 0
    for name in JERLOV:
        w = PRESETS[name]
        table = jerlov_kd(name)
        at_floor = np.isclose(w.a, A_WATER, rtol=0, atol=1e-15)
        np.testing.assert_allclose(w.k_d[~at_floor], table[~at_floor], rtol=1e-12)
        # Where a is pure water's, mu_d K_d - b_b fell below it: the preset is a
        # little more attenuating than Jerlov's K_d, never less.
        assert np.all(w.k_d[at_floor] >= table[at_floor])
        assert np.all(w.k_d[at_floor] <= 1.06 * table[at_floor])
        clamped += int(at_floor.sum())
    assert clamped == 4  # Jerlov I (red, green), IA and IB (red)


def test_interpolation_of_the_table_at_the_channels():
    # 450, 550 and 600 nm are entries of Jerlov's table: no interpolation there.
    kd = jerlov_kd("coastal_5")
    i = {lam: int(np.flatnonzero(water.JERLOV_KD_WAVELENGTHS_NM == lam)[0]) for lam in (600, 550, 450)}
    assert kd.tolist() == [water.JERLOV_KD["coastal_5"][i[600]], water.JERLOV_KD["coastal_5"][i[550]],
                           water.JERLOV_KD["coastal_5"][i[450]]]


def test_types_grow_more_turbid_in_order():
    names = list(JERLOV)
    green_c = [PRESETS[n].c[1] for n in names]
    green_kd = [jerlov_kd(n)[1] for n in names]
    assert all(a <= b for a, b in zip(green_kd, green_kd[1:]))
    assert all(a < b for a, b in zip(green_c, green_c[1:]))


def test_the_docs_table_is_the_presets():
    assert water.presets_table() in DOCS.read_text()
