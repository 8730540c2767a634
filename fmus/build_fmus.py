"""Build the FMUs moonpool ships (FMI 3.0 and FMI 2.0, each with co-simulation and
model exchange) from C.

One table, ``VARIABLES`` below, is the single source of the FMU interface: it
generates both modelDescription.xml files and the C header ``variables.h`` that maps
value references to model fields, so the two FMI versions can never disagree.

Usage:  python fmus/build_fmus.py [--force] [--cc CC]
(``scripts/build-fmus.sh`` calls this). The FMI headers are taken from the installed
fmpy package (``fmpy/c-code``). Incremental: nothing is rebuilt when every FMU is
newer than every source file (including this script).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

HERE = Path(__file__).resolve().parent
SRC = HERE / "hydrodynamics"
if str(HERE) not in sys.path:  # meshes.py beside this file, also when imported by path
    sys.path.insert(0, str(HERE))
from meshes import mesh_files, meshes_header  # noqa: E402
BUILD = HERE / "build"
MODEL = "hydrodynamics"
C_SOURCES = ["model.c", "fmu_common.c"]
C_HEADERS = ["model.h", "fmu_common.h", "variables.h", "meshes.h"]

# ---------------------------------------------------------------------------
# The interface table: (name, type, causality, variability, start, unit, C field, description)
# type: Float64 | Int32 | Boolean; causality: independent | parameter | input | output | local;
# variability for parameters: fixed | tunable. Value references are the row index.
# New rows go at the end so that existing value references stay stable.
# C fields are relative to the FMU snapshot ``s`` (see fmu_common.h).
# ---------------------------------------------------------------------------
P, IN, OUT, LOC = "parameter", "input", "output", "local"
FIX, TUN, CONT = "fixed", "tunable", "continuous"


def _vars():
    v = [("time", "Float64", "independent", CONT, None, "s", "time", "simulation time")]
    for name, c, start, unit, desc in [
        ("mass", "p.mass", 13.5, "kg", "rigid-body mass m"),
        ("Ixx", "p.Ixx", 0.26, "kg.m2", "moment of inertia about the CG, x axis"),
        ("Iyy", "p.Iyy", 0.23, "kg.m2", "moment of inertia about the CG, y axis"),
        ("Izz", "p.Izz", 0.37, "kg.m2", "moment of inertia about the CG, z axis"),
        ("Ixy", "p.Ixy", 0.0, "kg.m2", "product of inertia (I_g[0][1] = -Ixy)"),
        ("Ixz", "p.Ixz", 0.0, "kg.m2", "product of inertia (I_g[0][2] = -Ixz)"),
        ("Iyz", "p.Iyz", 0.0, "kg.m2", "product of inertia (I_g[1][2] = -Iyz)"),
        ("x_g", "p.rg[0]", 0.0, "m", "centre of gravity, body x (forward)"),
        ("y_g", "p.rg[1]", 0.0, "m", "centre of gravity, body y (right)"),
        ("z_g", "p.rg[2]", 0.0, "m", "centre of gravity, body z (down)"),
    ]:
        v.append((name, "Float64", P, FIX, start, unit, c, desc))
    for name, c, start, unit, desc in [
        ("x_b", "p.rb[0]", 0.0, "m", "centre of buoyancy, body x (forward)"),
        ("y_b", "p.rb[1]", 0.0, "m", "centre of buoyancy, body y (right)"),
        ("z_b", "p.rb[2]", -0.01, "m", "centre of buoyancy, body z (down; negative = above CO)"),
        ("volume", "p.volume", 0.0134, "m3", "displaced volume V0 at the surface"),
        ("rho_surface", "p.rho_surface", 1000.0, "kg/m3", "water density at the surface"),
    ]:
        v.append((name, "Float64", P, TUN, start, unit, c, desc))
    dof = "uvwpqr"
    lin = ["kg"] * 3 + ["kg.m2"] * 3
    d1u = ["N.s/m"] * 3 + ["N.m.s"] * 3
    d2u = ["N.s2/m2"] * 3 + ["N.m.s2"] * 3
    for i, a in enumerate([6.36, 7.12, 18.68, 0.189, 0.135, 0.222]):
        v.append((f"A_{dof[i]}", "Float64", P, FIX, a, lin[i], f"p.A[{i}]",
                  f"added mass magnitude for {dof[i]} (positive, = -SNAME derivative)"))
    for i, d1 in enumerate([13.7, 0.0, 33.0, 0.0, 0.8, 0.0]):
        v.append((f"D1_{dof[i]}", "Float64", P, TUN, d1, d1u[i], f"p.D1[{i}]",
                  f"linear damping magnitude for {dof[i]} (positive)"))
    for i, d2 in enumerate([141.0, 217.0, 190.0, 1.19, 0.47, 1.5]):
        v.append((f"D2_{dof[i]}", "Float64", P, TUN, d2, d2u[i], f"p.D2[{i}]",
                  f"quadratic damping magnitude for {dof[i]} (positive)"))
    for i, n in enumerate("ned"):
        v.append((f"init_{n}", "Float64", P, FIX, 0.0, "m", f"p.init_pos[{i}]",
                  f"initial position {n} (NED)"))
    for i, n in enumerate(["roll", "pitch", "yaw"]):
        v.append((f"init_{n}", "Float64", P, FIX, 0.0, "rad", f"p.init_euler[{i}]",
                  f"initial {n} (zyx Euler angles)"))
    for i, n in enumerate(dof):
        v.append((f"init_{n}", "Float64", P, FIX, 0.0, "m/s" if i < 3 else "rad/s",
                  f"p.init_nu[{i}]", f"initial body velocity {n}"))
    v += [
        ("backend", "Int32", P, FIX, 0, None, "p.backend",
         "0 = calibrated Fossen (full), 1 = simplified Fossen (no added mass, no C_A)"),
        ("substep", "Float64", P, FIX, 0.001, "s", "p.substep", "fixed internal RK4 sub-step"),
        ("g", "Float64", P, FIX, 9.81, "m/s2", "p.g", "gravitational acceleration"),
        ("pycnocline_depth", "Float64", P, TUN, 500.0, "m", "p.pyc_depth",
         "depth of the centre of the pycnocline density ramp"),
        ("pycnocline_width", "Float64", P, TUN, 1000.0, "m", "p.pyc_width",
         "thickness of the linear pycnocline ramp (0 = a step)"),
        ("pycnocline_delta_rho", "Float64", P, TUN, 0.0, "kg/m3", "p.pyc_delta_rho",
         "density increase across the pycnocline (0 disables)"),
        ("bulk_modulus", "Float64", P, TUN, 0.0, "Pa", "p.bulk_modulus",
         "hull bulk modulus K: V = V0 (1 - p_gauge/K) (0 = incompressible hull)"),
        ("earth_rotation", "Boolean", P, FIX, False, None, "p.earth_rotation",
         "add the Coriolis force of the Earth's rotation"),
        ("latitude", "Float64", P, FIX, 0.0, "deg", "p.latitude",
         "latitude for the Earth-rotation Coriolis force"),
    ]
    for i, n in enumerate("XYZKMN"):
        v.append((f"tau_{n}", "Float64", IN, CONT, 0.0, "N" if i < 3 else "N.m", f"in.tau[{i}]",
                  f"control wrench {n}, body frame (FRD)"))
    for i, n in enumerate("XYZKMN"):
        v.append((f"ext_{n}", "Float64", IN, CONT, 0.0, "N" if i < 3 else "N.m", f"in.ext[{i}]",
                  f"external wrench {n}, body frame (FRD)"))
    for i, n in enumerate("ned"):
        v.append((f"current_{n}", "Float64", IN, CONT, 0.0, "m/s", f"in.current[{i}]",
                  f"ocean current velocity, {n} component (NED)"))
    outs = [("n", "m", "north position"), ("e", "m", "east position"), ("d", "m", "depth (down)"),
            ("qw", None, "attitude quaternion w (body to NED)"), ("qx", None, "quaternion x"),
            ("qy", None, "quaternion y"), ("qz", None, "quaternion z"),
            ("roll", "rad", "roll (zyx Euler)"), ("pitch", "rad", "pitch (zyx Euler)"),
            ("yaw", "rad", "yaw (zyx Euler)"),
            ("u", "m/s", "surge velocity"), ("v", "m/s", "sway velocity"),
            ("w", "m/s", "heave velocity"), ("p", "rad/s", "roll rate"),
            ("q", "rad/s", "pitch rate"), ("r", "rad/s", "yaw rate"),
            ("du", "m/s2", "surge acceleration (from the dynamics)"),
            ("dv", "m/s2", "sway acceleration"), ("dw", "m/s2", "heave acceleration"),
            ("dp", "rad/s2", "roll acceleration"), ("dq", "rad/s2", "pitch acceleration"),
            ("dr", "rad/s2", "yaw acceleration"),
            ("rho", "kg/m3", "local water density at the vehicle depth")]
    for i, (n, unit, desc) in enumerate(outs):
        v.append((n, "Float64", OUT, CONT, None, unit, f"out[{i}]", desc))
    # Derivatives of the continuous states that are not outputs already (model exchange).
    for i, (n, unit, desc) in enumerate([
            ("n", "m/s", "north velocity (NED)"), ("e", "m/s", "east velocity (NED)"),
            ("d", "m/s", "down velocity (NED)"), ("qw", "1/s", "quaternion rate w"),
            ("qx", "1/s", "quaternion rate x"), ("qy", "1/s", "quaternion rate y"),
            ("qz", "1/s", "quaternion rate z")]):
        v.append((f"der({n})", "Float64", LOC, CONT, None, unit, f"m.xdot[{i}]",
                  f"state derivative: {desc}"))
    # Issue 23, appended so that every older value reference stays: the sheared current
    # (all backends) and the mesh backend (backend = 2, docs/hydrodynamics.md).
    v += [
        ("current_shear_n", "Float64", P, TUN, 0.0, "1/s", "p.shear[0]",
         "vertical shear of the north current: v_c,n(d) = current_n + current_shear_n * d"),
        ("current_shear_e", "Float64", P, TUN, 0.0, "1/s", "p.shear[1]",
         "vertical shear of the east current: v_c,e(d) = current_e + current_shear_e * d"),
        ("mesh", "Int32", P, FIX, 0, None, "p.mesh",
         "mesh backend: built-in hull mesh (1 sphere, 2 box, 3 cylinder, 4 lander, "
         "5 bluerov2_heavy, 6 remus100, 7 plate)"),
        ("mesh_scale", "Float64", P, FIX, 1.0, "m", "p.mesh_scale",
         "mesh backend: metres per mesh unit"),
        ("mesh_cp", "Float64", P, TUN, 1.0, None, "p.mesh_cp",
         "mesh backend: pressure-drag coefficient C_p per face"),
        ("mesh_cf", "Float64", P, TUN, 0.0, None, "p.mesh_cf",
         "mesh backend: skin-friction coefficient C_f per face"),
        ("mesh_cl", "Float64", P, TUN, 0.0, None, "p.mesh_cl",
         "mesh backend: lift coefficient C_L of the lifting faces (0 = no lift)"),
        ("magnus_cm", "Float64", P, TUN, 0.0, None, "p.magnus_cm",
         "mesh backend: Magnus coefficient C_M (0 = no Magnus force)"),
        ("magnus_area", "Float64", P, TUN, 0.0, "m2", "p.magnus_area",
         "mesh backend: Magnus reference area A"),
    ]
    for i, (n, unit, desc) in enumerate([
            ("hydro_X", "N", "hydrodynamic + hydrostatic force X, body frame"),
            ("hydro_Y", "N", "hydrodynamic + hydrostatic force Y"),
            ("hydro_Z", "N", "hydrodynamic + hydrostatic force Z"),
            ("hydro_K", "N.m", "hydrodynamic + hydrostatic moment K about CO"),
            ("hydro_M", "N.m", "hydrodynamic + hydrostatic moment M"),
            ("hydro_N", "N.m", "hydrodynamic + hydrostatic moment N"),
            ("mesh_volume", "m3", "mesh backend: enclosed volume of the scaled mesh (0 otherwise)"),
            ("mesh_x_b", "m", "mesh backend: centroid of the mesh volume, body x"),
            ("mesh_y_b", "m", "mesh backend: centroid of the mesh volume, body y"),
            ("mesh_z_b", "m", "mesh backend: centroid of the mesh volume, body z")]):
        v.append((n, "Float64", OUT, CONT, None, unit, f"out[{23 + i}]", desc))
    # Appended (older value references stay): a tabulated water column, the in-situ
    # density of a scene's TEOS-10 water (the fmu component's `water_column`,
    # docs/hydrodynamics.md); water_points = 0 keeps the pycnocline.
    v.append(("water_points", "Int32", P, FIX, 0, None, "p.water_points",
              f"tabulated water column: number of (depth, density) knots, 0 or 2..{WATER_KNOTS} "
              "(0: rho_surface and the pycnocline)"))
    v += _knots("water_depth_{k}", "p.water_depth[{k}]", "m", WATER_KNOTS,
                "tabulated water column: depth of knot {k} (increasing)")
    v += _knots("water_rho_{k}", "p.water_rho[{k}]", "kg/m3", WATER_KNOTS,
                "tabulated water column: in-situ density at knot {k}")
    # Appended: a tabulated current profile (an ADCP's, a model's), added to current_n/e
    # and the linear shear, all backends (docs/hydrodynamics.md); 0 knots: none.
    v.append(("current_points", "Int32", P, FIX, 0, None, "p.current_points",
              f"tabulated current profile: number of (depth, north, east) knots, 0 or "
              f"2..{CURRENT_KNOTS} (0: none)"))
    v += _knots("current_depth_{k}", "p.current_depth[{k}]", "m", CURRENT_KNOTS,
                "tabulated current profile: depth of knot {k} (increasing)")
    v += _knots("current_profile_n_{k}", "p.current_tn[{k}]", "m/s", CURRENT_KNOTS,
                "tabulated current profile: north current added at knot {k}")
    v += _knots("current_profile_e_{k}", "p.current_te[{k}]", "m/s", CURRENT_KNOTS,
                "tabulated current profile: east current added at knot {k}")
    return v


WATER_KNOTS = 32
"""Knots of the tabulated water column (HYDRO_WATER_KNOTS in model.h)."""
CURRENT_KNOTS = 32
"""Knots of the tabulated current profile (HYDRO_CURRENT_KNOTS in model.h)."""


def _knots(name: str, c_field: str, unit: str, n: int, doc: str) -> list[tuple]:
    """The n fixed Float64 parameters of one column of a knot table (name, C field and
    description formatted with the knot index k)."""
    return [(name.format(k=k), "Float64", P, FIX, 0.0, unit, c_field.format(k=k),
             doc.format(k=k)) for k in range(n)]


VARIABLES = _vars()
N_OUTPUTS = sum(1 for v in VARIABLES if v[2] == OUT)

# The continuous states for model exchange, in the order of the state vector
# (= HydroModel.x), each with the variable holding its derivative. The states are
# outputs; du..dr (outputs) are the derivatives of u..r.
STATES = [("n", "der(n)"), ("e", "der(e)"), ("d", "der(d)"), ("qw", "der(qw)"),
          ("qx", "der(qx)"), ("qy", "der(qy)"), ("qz", "der(qz)"), ("u", "du"), ("v", "dv"),
          ("w", "dw"), ("p", "dp"), ("q", "dq"), ("r", "dr")]
_VR = {v[0]: i for i, v in enumerate(VARIABLES)}
DERIVATIVE_OF = {der: _VR[state] for state, der in STATES}  # derivative name -> state vr
# fmu_common.c fills out[0..6] from x[0..6] and out[10..15] from x[7..12]: the state
# variables must be exactly those outputs, in that order.
assert [VARIABLES[_VR[st]][6] for st, _d in STATES] == \
    [f"out[{i}]" for i in [*range(7), *range(10, 16)]]

# name -> (base-unit exponents, factor)
UNITS = {
    "s": ({"s": 1}, 1), "1/s": ({"s": -1}, 1), "m": ({"m": 1}, 1), "m/s": ({"m": 1, "s": -1}, 1),
    "m/s2": ({"m": 1, "s": -2}, 1), "rad": ({"rad": 1}, 1), "rad/s": ({"rad": 1, "s": -1}, 1),
    "rad/s2": ({"rad": 1, "s": -2}, 1), "deg": ({"rad": 1}, 0.017453292519943295),
    "kg": ({"kg": 1}, 1), "kg.m2": ({"kg": 1, "m": 2}, 1), "m3": ({"m": 3}, 1),
    "kg/m3": ({"kg": 1, "m": -3}, 1), "m2": ({"m": 2}, 1), "N": ({"kg": 1, "m": 1, "s": -2}, 1),
    "N.m": ({"kg": 1, "m": 2, "s": -2}, 1), "Pa": ({"kg": 1, "m": -1, "s": -2}, 1),
    "N.s/m": ({"kg": 1, "s": -1}, 1), "N.s2/m2": ({"kg": 1, "m": -1}, 1),
    "N.m.s": ({"kg": 1, "m": 2, "s": -1}, 1), "N.m.s2": ({"kg": 1, "m": 2}, 1),
}


def token() -> str:
    """Instantiation token / GUID: a hash of the interface table."""
    h = hashlib.sha256(repr((VARIABLES, STATES)).encode()).hexdigest()
    return "{" + str(uuid.UUID(h[:32])) + "}"


def _fmt(value, typ: str, v3: bool) -> str:
    if typ == "Boolean":
        return "true" if value else "false"
    if typ == "Int32":
        return str(int(value))
    return repr(float(value))


def _units_xml() -> str:
    used = sorted({v[5] for v in VARIABLES if v[5]})
    lines = ["  <UnitDefinitions>"]
    for u in used:
        exps, factor = UNITS[u]
        attrs = " ".join(f'{k}="{e}"' for k, e in exps.items())
        if factor != 1:
            attrs += f' factor="{factor!r}"'
        lines.append(f'    <Unit name="{escape(u)}"><BaseUnit {attrs}/></Unit>')
    lines.append("  </UnitDefinitions>")
    return "\n".join(lines)


DESCRIPTION = ("6-DOF Fossen model of an underwater vehicle (NED/FRD, quaternion attitude, "
               "added mass, linear+quadratic damping, restoring forces, ocean current)")


def _initial_unknowns() -> list[int]:
    """Value references of the initial unknowns, ascending: every output and every state
    derivative (all have initial = "calculated")."""
    ders = {_VR[der] for _s, der in STATES}
    return [vr for vr, v in enumerate(VARIABLES) if v[2] == OUT or vr in ders]


def model_description_fmi3() -> str:
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<fmiModelDescription fmiVersion="3.0" modelName="{MODEL}" '
           f'instantiationToken="{token()}" description="{escape(DESCRIPTION)}" '
           'generationTool="moonpool fmus/build_fmus.py" variableNamingConvention="flat">',
           f'  <ModelExchange modelIdentifier="{MODEL}" needsCompletedIntegratorStep="true" '
           'canGetAndSetFMUState="true" canSerializeFMUState="true"/>',
           f'  <CoSimulation modelIdentifier="{MODEL}" canHandleVariableCommunicationStepSize="true" '
           'canGetAndSetFMUState="true" canSerializeFMUState="true" '
           'providesIntermediateUpdate="false" hasEventMode="false"/>',
           _units_xml(),
           '  <DefaultExperiment startTime="0" stopTime="10" stepSize="0.01"/>',
           "  <ModelVariables>"]
    for vr, (name, typ, caus, var, start, unit, _c, desc) in enumerate(VARIABLES):
        a = f'name="{name}" valueReference="{vr}" causality="{caus}" variability="{var}"'
        if typ == "Boolean" or typ == "Int32":
            a = a.replace('variability="continuous"', 'variability="discrete"')
        a += f' description="{escape(desc)}"'
        if unit:
            a += f' unit="{escape(unit)}"'
        if start is not None:
            a += f' start="{_fmt(start, typ, True)}"'
        if name in DERIVATIVE_OF:
            a += f' derivative="{DERIVATIVE_OF[name]}"'
        out.append(f"    <{typ} {a}/>")
    out.append("  </ModelVariables>")
    out.append("  <ModelStructure>")
    for vr, v in enumerate(VARIABLES):
        if v[2] == OUT:
            out.append(f'    <Output valueReference="{vr}"/>')
    for _state, der in STATES:
        out.append(f'    <ContinuousStateDerivative valueReference="{_VR[der]}"/>')
    for vr in _initial_unknowns():
        out.append(f'    <InitialUnknown valueReference="{vr}"/>')
    out += ["  </ModelStructure>", "</fmiModelDescription>", ""]
    return "\n".join(out)


def _source_files_fmi2() -> str:
    """FMI 2.0 lists the C sources of ``sources/`` in each interface element (<SourceFiles>);
    FMI-2-only importers (fmpy, fmu-manipulation-toolbox) read them from there, not from
    ``sources/buildDescription.xml``."""
    files = "\n".join(f'      <File name="{s}"/>' for s in ["fmi2.c", *C_SOURCES])
    return f"    <SourceFiles>\n{files}\n    </SourceFiles>"


def model_description_fmi2() -> str:
    types2 = {"Float64": "Real", "Int32": "Integer", "Boolean": "Boolean"}
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           f'<fmiModelDescription fmiVersion="2.0" modelName="{MODEL}" guid="{token()}" '
           f'description="{escape(DESCRIPTION)}" generationTool="moonpool fmus/build_fmus.py" '
           'variableNamingConvention="flat" numberOfEventIndicators="0">',
           f'  <ModelExchange modelIdentifier="{MODEL}" completedIntegratorStepNotNeeded="false" '
           'canGetAndSetFMUstate="true" canSerializeFMUstate="true">',
           _source_files_fmi2(), "  </ModelExchange>",
           f'  <CoSimulation modelIdentifier="{MODEL}" canHandleVariableCommunicationStepSize="true" '
           'canGetAndSetFMUstate="true" canSerializeFMUstate="true">',
           _source_files_fmi2(), "  </CoSimulation>",
           _units_xml(),
           '  <DefaultExperiment startTime="0" stopTime="10" stepSize="0.01"/>',
           "  <ModelVariables>"]
    for vr, (name, typ, caus, var, start, unit, _c, desc) in enumerate(VARIABLES):
        if typ != "Float64" and var == CONT:
            var = "discrete"
        a = f'name="{name}" valueReference="{vr}" causality="{caus}" variability="{var}"'
        a += f' description="{escape(desc)}"'
        inner = ""
        if unit:
            inner += f' unit="{escape(unit)}"'
        if start is not None:
            inner += f' start="{_fmt(start, typ, False)}"'
        if name in DERIVATIVE_OF:
            inner += f' derivative="{DERIVATIVE_OF[name] + 1}"'
        out.append(f"    <ScalarVariable {a}><{types2[typ]}{inner}/></ScalarVariable>"
                   f"  <!-- index {vr + 1} -->")
    out.append("  </ModelVariables>")
    out.append("  <ModelStructure>")
    out.append("    <Outputs>")
    for vr, v in enumerate(VARIABLES):
        if v[2] == OUT:
            out.append(f'      <Unknown index="{vr + 1}"/>')
    out.append("    </Outputs>")
    out.append("    <Derivatives>")
    for _state, der in STATES:
        out.append(f'      <Unknown index="{_VR[der] + 1}"/>')
    out.append("    </Derivatives>")
    out.append("    <InitialUnknowns>")
    for vr in _initial_unknowns():
        out.append(f'      <Unknown index="{vr + 1}"/>')
    out.append("    </InitialUnknowns>")
    out += ["  </ModelStructure>", "</fmiModelDescription>", ""]
    return "\n".join(out)


def variables_header() -> str:
    """C accessors value reference -> field of the FMU snapshot."""
    kinds = {("independent", CONT): "HYDRO_INDEPENDENT", (P, FIX): "HYDRO_FIXED",
             (P, TUN): "HYDRO_TUNABLE", (IN, CONT): "HYDRO_INPUT", (OUT, CONT): "HYDRO_OUTPUT",
             (LOC, CONT): "HYDRO_LOCAL"}
    ctype = {"Float64": "double", "Int32": "int", "Boolean": "int"}
    fn = {"Float64": "hydro_vr_float64", "Int32": "hydro_vr_int32", "Boolean": "hydro_vr_boolean"}
    lines = ["/* GENERATED by fmus/build_fmus.py from its VARIABLES table. Do not edit. */",
             "#ifndef MOONPOOL_HYDRO_VARIABLES_H", "#define MOONPOOL_HYDRO_VARIABLES_H", "",
             '#include "fmu_common.h"', "",
             f'#define HYDRO_TOKEN "{token()}"',
             f"#define HYDRO_N_VARIABLES {len(VARIABLES)}",
             f"#define HYDRO_N_OUTPUTS {N_OUTPUTS}",
             f"#define HYDRO_N_STATES {len(STATES)}", ""]
    lines.append("static const char *const hydro_vr_names[HYDRO_N_VARIABLES] = {")
    lines += [f'    "{v[0]}",' for v in VARIABLES]
    lines += ["};", ""]
    for typ in ("Float64", "Int32", "Boolean"):
        lines += [f"/* {typ} variable for vr (NULL if vr is not a {typ}); *kind gets its class. */",
                  f"static {ctype[typ]} *{fn[typ]}(HydroSnapshot *s, unsigned vr, int *kind)",
                  "{", "    switch (vr) {"]
        for vr, (name, t, caus, var, _st, _u, c, _d) in enumerate(VARIABLES):
            if t == typ:
                lines.append(f"    case {vr}: *kind = {kinds[(caus, var)]}; return &s->{c}; /* {name} */")
        lines += ["    default: return NULL;", "    }", "}", ""]
    lines += ["/* Start values of parameters and inputs. */",
              "static void hydro_vr_defaults(HydroSnapshot *s)", "{"]
    for name, t, caus, var, st, _u, c, _d in VARIABLES:
        if st is not None:
            val = ("1" if st else "0") if t == "Boolean" else (str(int(st)) if t == "Int32" else repr(float(st)))
            lines.append(f"    s->{c} = {val}; /* {name} */")
    lines += ["}", "", "#endif", ""]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# build
# ---------------------------------------------------------------------------

def fmi_headers() -> Path:
    try:
        import fmpy
    except ImportError:
        sys.exit("error: fmpy is not installed in this Python; the FMI headers come from it "
                 "(run scripts/setup.sh, or pip install fmpy)")
    d = Path(fmpy.__file__).parent / "c-code"
    if not (d / "fmi3Functions.h").is_file() or not (d / "fmi2Functions.h").is_file():
        sys.exit(f"error: FMI headers not found in fmpy's package ({d})")
    return d


def write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def compile_shared(cc: str, sources: list[Path], include: list[Path], out: Path) -> None:
    cmd = [cc, "-std=c99", "-shared", "-fPIC", "-O2", "-Wall", "-Wextra",
           "-fvisibility=hidden", *[f"-I{i}" for i in include], *map(str, sources), "-o", str(out),
           "-lm"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.exit(f"error: compiling {out.name} failed:\n{' '.join(cmd)}\n{res.stderr}")
    if res.stderr.strip():
        print(res.stderr, file=sys.stderr)


def platform_of(version: int) -> str:
    """The binaries/ folder of this platform: FMI 3 x86_64-linux, FMI 2 linux64, ..."""
    platform = "x86_64-linux" if version == 3 else "linux64"
    if sys.platform != "linux" or os.uname().machine not in ("x86_64", "AMD64"):
        import platform as pf
        arch = {"aarch64": "aarch64", "arm64": "aarch64"}.get(pf.machine(), pf.machine())
        system = {"darwin": "darwin", "win32": "windows"}.get(sys.platform, "linux")
        platform = f"{arch}-{system}" if version == 3 else f"{system}64"
    return platform


def build_one(version: int, cc: str, headers: Path, dest: Path) -> None:
    wrapper = f"fmi{version}.c"
    xml = model_description_fmi3() if version == 3 else model_description_fmi2()
    platform = platform_of(version)
    ext = {"darwin": ".dylib", "win32": ".dll"}.get(sys.platform, ".so")
    with tempfile.TemporaryDirectory() as tmp:
        lib = Path(tmp) / f"{MODEL}{ext}"
        compile_shared(cc, [SRC / wrapper, *(SRC / s for s in C_SOURCES)], [SRC, headers], lib)
        tmp_fmu = dest.with_suffix(".fmu.tmp")
        with zipfile.ZipFile(tmp_fmu, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("modelDescription.xml", xml)
            z.write(lib, f"binaries/{platform}/{MODEL}{ext}")
            for s in [wrapper, *C_SOURCES, *C_HEADERS]:
                z.write(SRC / s, f"sources/{s}")
            z.writestr("sources/buildDescription.xml", _build_description(wrapper))
        tmp_fmu.replace(dest)
    print(f"built {dest.relative_to(HERE.parent)}", file=sys.stderr)


def _build_description(wrapper: str) -> str:
    """sources/buildDescription.xml. Its format is FMI 3.0's (fmi3BuildDescription.xsd) in both
    FMUs: FMI 2.0.4 adopted that file "as defined in the FMI 3.0 specification", so its
    fmiVersion is "3.0" in the FMI 2 FMU as well (fmpy and the schema reject "2.0")."""
    files = "\n".join(f'      <SourceFile name="{s}"/>' for s in [wrapper, *C_SOURCES])
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<fmiBuildDescription fmiVersion="3.0">\n'
            f'  <BuildConfiguration modelIdentifier="{MODEL}">\n'
            f'    <SourceFileSet language="C99">\n{files}\n    </SourceFileSet>\n'
            f'    <Library name="m"/>\n'
            f'  </BuildConfiguration>\n</fmiBuildDescription>\n')


def outputs() -> list[Path]:
    return [BUILD / f"{MODEL}-fmi3.fmu", BUILD / f"{MODEL}-fmi2.fmu"]


def inputs() -> list[Path]:
    return [Path(__file__).resolve(), HERE / "meshes.py", *mesh_files(), *sorted(SRC.glob("*.c")),
            *sorted(SRC.glob("*.h"))]


def build(force: bool = False, cc: str | None = None) -> list[Path]:
    """Build both FMUs when needed, and the test FMUs (fmus/testfmus/build_testfmus.py); return
    the two FMUs' paths."""
    write_if_changed(SRC / "variables.h", variables_header())
    from moonpool.components.sdk.errors import ParameterError

    try:
        header = meshes_header()
    except ParameterError as exc:  # a hull file that is not closed or is inside out
        print(f"error: {exc.message}\nfix: {exc.fix}", file=sys.stderr)
        sys.exit(2)
    write_if_changed(SRC / "meshes.h", header)
    fmus = outputs()
    cc = cc or os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    up_to_date = not force and all(f.exists() for f in fmus) and \
        min(f.stat().st_mtime for f in fmus) >= max(p.stat().st_mtime for p in inputs())
    if not up_to_date:
        if not cc:
            sys.exit("error: no C compiler found (install gcc or clang, or set CC)")
        headers = fmi_headers()
        BUILD.mkdir(parents=True, exist_ok=True)
        build_one(3, cc, headers, fmus[0])
        build_one(2, cc, headers, fmus[1])
    build_test_fmus(cc, force)
    return fmus


def build_test_fmus(cc: str | None = None, force: bool = False) -> list[Path]:
    """The FMI test FMUs (fmus/testfmus/): built when older than their sources."""
    sys.path.insert(0, str(HERE / "testfmus"))
    try:
        import build_testfmus as testfmus
    finally:
        sys.path.pop(0)
    cc = cc or os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        sys.exit("error: no C compiler found (install gcc or clang, or set CC)")
    return testfmus.build(cc, fmi_headers(), compile_shared, platform_of, force)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--force", action="store_true", help="rebuild even when up to date")
    ap.add_argument("--cc", help="C compiler (default: $CC, then cc)")
    a = ap.parse_args(argv)
    build(a.force, a.cc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
