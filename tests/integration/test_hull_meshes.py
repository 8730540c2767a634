"""Hull meshes of the mesh backend (issue 23): the shipped OBJ files are what their
generators in fmus/meshes.py write (dimensions and sources there); the mesh profiles'
volume is what they state; and a hull file that is not closed or is inside out is
refused with a message naming the file and the fix, at the FMU's build
(fmus/build_fmus.py) and by `moonpool check` (a profile's [mesh] files), exit 2."""

from __future__ import annotations

import shutil
import sys
import tomllib

import numpy as np
import pytest

from conftest import ROOT, moonpool
from moonpool.components.dynamics.hull import read_hull, write_obj
from moonpool.components.sdk.errors import ParameterError

sys.path.insert(0, str(ROOT / "fmus"))
import build_fmus  # noqa: E402
import meshes  # noqa: E402

MESH_DIR = ROOT / "fmus" / "hydrodynamics" / "meshes"
PROFILES = ROOT / "fmus" / "hydrodynamics" / "profiles"


def _holed_and_flipped(tmp_path, name="bluerov2_heavy.obj"):
    tris = read_hull(MESH_DIR / name)
    holed, flipped = tmp_path / "holed.obj", tmp_path / "flipped.obj"
    write_obj(holed, tris[:-1], "one triangle missing")
    write_obj(flipped, tris[:, ::-1], "every triangle reversed")
    return holed, flipped


def test_shipped_files_are_their_generators_output(tmp_path):
    for name, gen in meshes.FILES.items():
        want = np.array([np.array(t) for t in gen()])
        assert np.array_equal(read_hull(MESH_DIR / name), want), name


def test_bad_hull_files_are_refused(tmp_path):
    holed, flipped = _holed_and_flipped(tmp_path)
    with pytest.raises(ParameterError, match="holed.obj is not closed: 3 edge") as e:
        read_hull(holed)
    assert "fill its holes" in e.value.fix
    with pytest.raises(ParameterError, match="flipped.obj is inside out") as e:
        read_hull(flipped)
    assert "Recalculate Outside" in e.value.fix
    (tmp_path / "empty.obj").write_text("# nothing\n")
    with pytest.raises(ParameterError, match="empty.obj"):
        read_hull(tmp_path / "empty.obj")


@pytest.mark.parametrize("which", ["holed", "flipped"])
def test_the_build_refuses_a_bad_hull(tmp_path, monkeypatch, capsys, which):
    """The build stops (exit 2) before it writes anything, naming the file."""
    bad_dir = tmp_path / "meshes"
    shutil.copytree(MESH_DIR, bad_dir)
    holed, flipped = _holed_and_flipped(tmp_path)
    shutil.copy({"holed": holed, "flipped": flipped}[which], bad_dir / "bluerov2_heavy.obj")
    monkeypatch.setattr(meshes, "MESH_DIR", bad_dir)
    header = (ROOT / "fmus" / "hydrodynamics" / "meshes.h").read_bytes()
    with pytest.raises(SystemExit) as e:
        build_fmus.build()
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert str(bad_dir / "bluerov2_heavy.obj") in err and "fix:" in err
    assert ("not closed" if which == "holed" else "inside out") in err
    assert (ROOT / "fmus" / "hydrodynamics" / "meshes.h").read_bytes() == header


def _rig(tmp_path, profile):
    rig = tmp_path / "rig.toml"
    rig.write_text(f'''name = "mesh_check"
[run]
until = "1s"
[components.vehicle]
entry = "fmu"
rate_hz = 10
profile = "{profile}"
[components.vehicle.parameters]
fmu = "{ROOT / 'fmus' / 'build' / 'hydrodynamics-fmi3.fmu'}"
[components.vehicle.parameters.outputs.state]
type = "moonpool.v1.VehicleState"
fields = {{ "position_ned_m.z" = "d" }}
''')
    return rig


@pytest.mark.parametrize("name", ["bluerov2_heavy_mesh", "remus100_mesh", "lander"])
def test_moonpool_check_accepts_the_mesh_profiles(tmp_path, name):
    proc = moonpool("check", str(_rig(tmp_path, PROFILES / f"{name}.toml")))
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("which", ["holed", "flipped"])
def test_moonpool_check_refuses_a_profile_with_a_bad_hull(tmp_path, which):
    holed, flipped = _holed_and_flipped(tmp_path)
    bad = {"holed": holed, "flipped": flipped}[which]
    text = (PROFILES / "bluerov2_heavy_mesh.toml").read_text()
    profile = tmp_path / "profiles" / "bad.toml"
    profile.parent.mkdir()
    profile.write_text(text.replace('files = ["../meshes/bluerov2_heavy.obj"]',
                                    f'files = ["../{bad.name}"]'))
    proc = moonpool("check", str(_rig(tmp_path, profile)))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert bad.name in out and ("not closed" if which == "holed" else "inside out") in out, out
    assert "Traceback" not in out


def test_mesh_profiles_state_their_mesh():
    """The mesh profiles name their mesh's files and agree with its volume: neutral
    REMUS (mass = rho V), BlueROV2's volume von Benzon's 0.0134 m^3."""
    for name, idx in (("bluerov2_heavy_mesh", 5), ("remus100_mesh", 6), ("lander", 4)):
        prof = tomllib.loads((PROFILES / f"{name}.toml").read_text())
        assert prof["parameters"]["mesh"] == idx
        files = [f.removeprefix("../meshes/") for f in prof["mesh"]["files"]]
        assert files == [f for f, _ in meshes.MESHES[idx][1]]
        tris = meshes.triangles(idx)[0]
        V = float(np.einsum("ij,ij->i", tris[:, 0], np.cross(tris[:, 1], tris[:, 2])).sum()) / 6
        if name == "bluerov2_heavy_mesh":
            assert V == pytest.approx(0.0134, rel=1e-9)
        if name == "remus100_mesh":
            p = prof["parameters"]
            assert p["mass"] == pytest.approx(p["rho_surface"] * V, rel=1e-3)


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "ascii"])
def test_an_stl_hull_reads_as_its_obj(tmp_path, binary):
    """A hull given as STL (binary or ASCII; what CAD tools export) reads as the same
    triangles as the OBJ it was exported from, to STL's float32; and an STL with a hole
    or reversed normals is refused like an OBJ, naming the file and the fix."""
    import trimesh

    obj = MESH_DIR / "remus100_fins.obj"
    tris = read_hull(obj)
    mesh = trimesh.Trimesh(tris.reshape(-1, 3), np.arange(3 * len(tris)).reshape(-1, 3),
                           process=False)
    stl = tmp_path / "fins.stl"
    mesh.export(stl, file_type="stl" if binary else "stl_ascii")
    got = read_hull(stl)
    assert got.shape == tris.shape
    assert np.allclose(got, tris.astype(np.float32), rtol=0, atol=1e-7)
    for name, bad in (("holed.stl", tris[:-1]), ("flipped.stl", tris[:, ::-1])):
        trimesh.Trimesh(bad.reshape(-1, 3), np.arange(3 * len(bad)).reshape(-1, 3),
                        process=False).export(tmp_path / name, file_type="stl")
        with pytest.raises(ParameterError) as err:
            read_hull(tmp_path / name)
        assert name in err.value.message and err.value.fix
