"""Build moonpool's test FMUs (written for the FMI tests, not shipped in rigs):
bouncing ball (state events), stair (time events), feedthrough of every type with
discrete inputs, Robertson (stiff), arrays (FMI 3 only) — each as FMI 2.0 and FMI 3.0,
each with co-simulation and model exchange.

Called by ``fmus/build_fmus.py`` (so ``moonpool fmu build`` and ``scripts/setup.sh``
build them too); the FMUs go to ``fmus/build/testfmus/NAME-fmi{2,3}.fmu``. One table
per model, ``MODELS`` below, generates both model descriptions and the C variable
table ``NAME_vars.h``; the C runtime is ``tf_common.c`` with the wrappers
``fmi2.c`` / ``fmi3.c``.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
import uuid
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

HERE = Path(__file__).resolve().parent
BUILD = HERE.parent / "build" / "testfmus"

P, IN, OUT, LOC = "parameter", "input", "output", "local"
FIX, TUN, CONT, DISC = "fixed", "tunable", "continuous", "discrete"
COLOUR = ("Colour", [("red", 1), ("green", 2), ("blue", 3)])

# (name, FMI 3 type, causality, variability, start, dim, description); vr = row + 1
# (0 is time). FMI 3 only: the types Int64/UInt64 and arrays (dim > 1) are left out of
# the FMI 2 model description (their rows keep their value references).
MODELS: dict[str, dict] = {
    "bouncingball": dict(
        description="bouncing ball: state events (h crosses 0)", h=1e-3, nz=1,
        states=[("h", "der(h)"), ("v", "der(v)")],
        vars=[("h", "Float64", OUT, CONT, 1.0, 1, "height, m"),
              ("der(h)", "Float64", LOC, CONT, None, 1, "der(h) = v"),
              ("v", "Float64", OUT, CONT, 0.0, 1, "velocity, m/s (up)"),
              ("der(v)", "Float64", LOC, CONT, None, 1, "der(v) = -g"),
              ("g", "Float64", P, FIX, 9.81, 1, "gravity, m/s2"),
              ("e", "Float64", P, TUN, 0.7, 1, "coefficient of restitution"),
              ("bounces", "Int32", OUT, DISC, 0, 1, "number of bounces"),
              ("t_bounce", "Float64", OUT, DISC, -1.0, 1, "time of the last bounce, s"),
              ("z", "Float64", LOC, CONT, None, 1, "event indicator: h")]),
    "stair": dict(
        description="stair: time events every period", h=0.01, nz=0, states=[],
        vars=[("counter", "Int32", OUT, DISC, 0, 1, "steps so far"),
              ("y", "Float64", OUT, DISC, 0.0, 1, "counter as a real"),
              ("period", "Float64", P, FIX, 1.0, 1, "time between steps, s"),
              ("stop_count", "Int32", P, FIX, 0, 1,
               "> 0: ask to terminate when the counter reaches it"),
              ("discard_count", "Int32", P, FIX, 0, 1,
               "> 0: co-simulation doStep returns discard when the counter reaches it")]),
    "robertson": dict(
        description="Robertson's stiff kinetics", h=1e-4, nz=0,
        states=[("y1", "der(y1)"), ("y2", "der(y2)"), ("y3", "der(y3)")],
        vars=[("y1", "Float64", OUT, CONT, 1.0, 1, "concentration 1"),
              ("der(y1)", "Float64", LOC, CONT, None, 1, ""),
              ("y2", "Float64", OUT, CONT, 0.0, 1, "concentration 2"),
              ("der(y2)", "Float64", LOC, CONT, None, 1, ""),
              ("y3", "Float64", OUT, CONT, 0.0, 1, "concentration 3"),
              ("der(y3)", "Float64", LOC, CONT, None, 1, ""),
              ("k1", "Float64", P, FIX, 0.04, 1, "rate, 1/s"),
              ("k2", "Float64", P, FIX, 3e7, 1, "rate, 1/s"),
              ("k3", "Float64", P, FIX, 1e4, 1, "rate, 1/s")]),
    "feedthrough": dict(
        description="feedthrough of every type", h=0.01, nz=0, states=[],
        vars=[("real_c_in", "Float64", IN, CONT, 0.0, 1, ""),
              ("real_c_out", "Float64", OUT, CONT, None, 1, ""),
              ("real_d_in", "Float64", IN, DISC, 0.0, 1, ""),
              ("real_d_out", "Float64", OUT, DISC, None, 1, ""),
              ("gain", "Float64", P, TUN, 1.0, 1, ""),
              ("scaled", "Float64", OUT, CONT, None, 1, "gain * real_c_in"),
              ("f32_in", "Float32", IN, DISC, 0.0, 1, ""),
              ("f32_out", "Float32", OUT, DISC, None, 1, ""),
              ("int_in", "Int32", IN, DISC, 0, 1, ""),
              ("int_out", "Int32", OUT, DISC, None, 1, ""),
              ("i8_in", "Int8", IN, DISC, 0, 1, ""),
              ("i8_out", "Int8", OUT, DISC, None, 1, ""),
              ("u8_in", "UInt8", IN, DISC, 0, 1, ""),
              ("u8_out", "UInt8", OUT, DISC, None, 1, ""),
              ("i16_in", "Int16", IN, DISC, 0, 1, ""),
              ("i16_out", "Int16", OUT, DISC, None, 1, ""),
              ("u16_in", "UInt16", IN, DISC, 0, 1, ""),
              ("u16_out", "UInt16", OUT, DISC, None, 1, ""),
              ("u32_in", "UInt32", IN, DISC, 0, 1, ""),
              ("u32_out", "UInt32", OUT, DISC, None, 1, ""),
              ("i64_in", "Int64", IN, DISC, 0, 1, ""),
              ("i64_out", "Int64", OUT, DISC, None, 1, ""),
              ("u64_in", "UInt64", IN, DISC, 0, 1, ""),
              ("u64_out", "UInt64", OUT, DISC, None, 1, ""),
              ("bool_in", "Boolean", IN, DISC, False, 1, ""),
              ("bool_out", "Boolean", OUT, DISC, None, 1, ""),
              ("enum_in", "Enumeration", IN, DISC, 1, 1, "Colour"),
              ("enum_out", "Enumeration", OUT, DISC, None, 1, "Colour")]),
    "arrays": dict(
        description="FMI 3 arrays: y = gain * u", h=0.01, nz=0, states=[], only3=True,
        vars=[("u", "Float64", IN, CONT, 0.0, 3, "input array"),
              ("y", "Float64", OUT, CONT, None, 3, "output array"),
              ("gain", "Float64", P, TUN, 2.0, 1, "")]),
}

_FMI2_TYPE = {"Float64": "Real", "Float32": "Real", "Int8": "Integer", "UInt8": "Integer",
              "Int16": "Integer", "UInt16": "Integer", "Int32": "Integer",
              "UInt32": "Integer", "Boolean": "Boolean", "Enumeration": "Enumeration"}
_STORE = {"Float64": "TF_R", "Float32": "TF_R", "UInt64": "TF_U", "Boolean": "TF_B"}
_CLS = {(P, FIX): "TF_PARAM_FIXED", (P, TUN): "TF_PARAM_TUNABLE", (IN, CONT): "TF_INPUT_CONT",
        (IN, DISC): "TF_INPUT_DISCRETE", (OUT, CONT): "TF_OUTPUT", (OUT, DISC): "TF_OUTPUT",
        (LOC, CONT): "TF_LOCAL", (LOC, DISC): "TF_LOCAL"}


def _cname(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_")


def _in_fmi2(row: tuple) -> bool:
    return row[1] in _FMI2_TYPE and row[5] == 1


def token(name: str) -> str:
    h = hashlib.sha256(repr((name, MODELS[name])).encode()).hexdigest()
    return "{" + str(uuid.UUID(h[:32])) + "}"


def vars_header(name: str) -> str:
    m = MODELS[name]
    rows = m["vars"]
    vr = {r[0]: i + 1 for i, r in enumerate(rows)}
    off = {"TF_R": 0, "TF_I": 0, "TF_U": 0, "TF_B": 0}
    lines = [f"/* Generated by fmus/testfmus/build_testfmus.py from MODELS['{name}']: do not edit. */",
             '#include "tf_common.h"', "", '#include <stdint.h>', ""]
    table = ['    {"time", TF_R, TF_MAXV - 1, 1, TF_INDEPENDENT},']
    start = ["void tf_model_start(TfSnapshot *s)", "{"]
    for r in rows:
        store = _STORE.get(r[1], "TF_I")
        o = off[store]
        off[store] += r[5]
        lines.append(f"#define V_{_cname(r[0])} {o}")
        table.append(f'    {{"{r[0]}", {store}, {o}, {r[5]}, {_CLS[(r[2], r[3])]}}},')
        if r[4] is not None:
            field = {"TF_R": "r", "TF_I": "i", "TF_U": "u", "TF_B": "b"}[store]
            val = int(r[4]) if store != "TF_R" else float(r[4])
            for k in range(r[5]):
                start.append(f"    s->{field}[{o + k}] = {val!r};")
    start.append("}")
    assert max(off.values()) < 90
    nx = len(m["states"])
    lines += ["", f"const char *tf_token_str = \"{token(name)}\";",
              f"const double tf_h = {m['h']!r};",
              f"const int tf_nvars = {len(rows) + 1};",
              f"const int tf_nx = {nx};", f"const int tf_nz = {m['nz']};",
              "const int tf_state_off[] = {" + ", ".join(
                  f"V_{_cname(s)}" for s, _d in m["states"]) + (" " if nx else "0") + "};",
              "const int tf_der_off[] = {" + ", ".join(
                  f"V_{_cname(d)}" for _s, d in m["states"]) + (" " if nx else "0") + "};",
              "const TfVar tf_vars[] = {", *table, "};", "", *start, ""]
    _ = vr
    return "\n".join(lines)


def _start(value, typ: str) -> str:
    if typ == "Boolean":
        return "true" if value else "false"
    if typ in ("Float64", "Float32"):
        return repr(float(value))
    return str(int(value))


def _initial(r: tuple, is_state: bool) -> str:
    if r[2] == OUT and r[4] is not None:
        return ' initial="exact"'
    if r[2] == LOC and is_state:
        return ' initial="exact"'
    return ""


def model_description(name: str, version: int) -> str:
    m = MODELS[name]
    rows = m["vars"]
    vr = {r[0]: i + 1 for i, r in enumerate(rows)}
    ders = {d: s for s, d in m["states"]}
    states = {s for s, _d in m["states"]}
    uses_enum = any(r[1] == "Enumeration" for r in rows)
    common = (f'modelName="{name}" description="{escape(m["description"])}" '
              'generationTool="moonpool fmus/testfmus/build_testfmus.py" variableNamingConvention="structured"')
    out = ['<?xml version="1.0" encoding="UTF-8"?>']
    if version == 3:
        out += [f'<fmiModelDescription fmiVersion="3.0" {common} instantiationToken="{token(name)}">',
                f'  <ModelExchange modelIdentifier="{name}" needsCompletedIntegratorStep="false" '
                'canGetAndSetFMUState="true" canSerializeFMUState="true"/>',
                f'  <CoSimulation modelIdentifier="{name}" canHandleVariableCommunicationStepSize="true" '
                'canGetAndSetFMUState="true" canSerializeFMUState="true" hasEventMode="false"/>']
        if uses_enum:
            items = "".join(f'<Item name="{n}" value="{v}"/>' for n, v in COLOUR[1])
            out.append(f'  <TypeDefinitions><EnumerationType name="{COLOUR[0]}">{items}'
                       '</EnumerationType></TypeDefinitions>')
        out += ['  <DefaultExperiment startTime="0" stopTime="3"/>', "  <ModelVariables>",
                '    <Float64 name="time" valueReference="0" causality="independent" '
                'variability="continuous"/>']
        for r in rows:
            a = (f'name="{r[0]}" valueReference="{vr[r[0]]}" causality="{r[2]}" '
                 f'variability="{r[3]}"')
            if r[1] == "Enumeration":
                a += f' declaredType="{COLOUR[0]}"'
            a += _initial(r, r[0] in states)
            if r[4] is not None:
                a += f' start="{" ".join([_start(r[4], r[1])] * r[5])}"'
            if r[0] in ders:
                a += f' derivative="{vr[ders[r[0]]]}"'
            if r[5] > 1:
                out.append(f'    <{r[1]} {a}><Dimension start="{r[5]}"/></{r[1]}>')
            else:
                out.append(f"    <{r[1]} {a}/>")
        out += ["  </ModelVariables>", "  <ModelStructure>"]
        out += [f'    <Output valueReference="{vr[r[0]]}"/>' for r in rows if r[2] == OUT]
        out += [f'    <ContinuousStateDerivative valueReference="{vr[d]}"/>'
                for _s, d in m["states"]]
        out += [f'    <InitialUnknown valueReference="{vr[r[0]]}"/>' for r in rows
                if (r[2] == OUT and r[4] is None) or r[0] in ders]
        if m["nz"]:
            out.append(f'    <EventIndicator valueReference="{vr["z"]}"/>')
        out += ["  </ModelStructure>", "</fmiModelDescription>", ""]
        return "\n".join(out)
    rows2 = [r for r in rows if _in_fmi2(r)]
    index = {r[0]: i + 2 for i, r in enumerate(rows2)}  # 1 is time
    out += [f'<fmiModelDescription fmiVersion="2.0" {common} guid="{token(name)}" '
            f'numberOfEventIndicators="{m["nz"]}">',
            f'  <ModelExchange modelIdentifier="{name}" completedIntegratorStepNotNeeded="true" '
            'canGetAndSetFMUstate="true" canSerializeFMUstate="true"/>',
            f'  <CoSimulation modelIdentifier="{name}" canHandleVariableCommunicationStepSize="true" '
            'canGetAndSetFMUstate="true" canSerializeFMUstate="true"/>']
    if uses_enum:
        items = "".join(f'<Item name="{n}" value="{v}"/>' for n, v in COLOUR[1])
        out.append(f'  <TypeDefinitions><SimpleType name="{COLOUR[0]}"><Enumeration>{items}'
                   '</Enumeration></SimpleType></TypeDefinitions>')
    out += ['  <DefaultExperiment startTime="0" stopTime="3"/>', "  <ModelVariables>",
            '    <ScalarVariable name="time" valueReference="0" causality="independent" '
            'variability="continuous"><Real/></ScalarVariable>']
    for r in rows2:
        var = r[3]
        a = f'name="{r[0]}" valueReference="{vr[r[0]]}" causality="{r[2]}" variability="{var}"'
        a += _initial(r, r[0] in states)
        inner = ""
        if r[1] == "Enumeration":
            inner += f' declaredType="{COLOUR[0]}"'
        if r[4] is not None:
            inner += f' start="{_start(r[4], r[1])}"'
        if r[0] in ders:
            inner += f' derivative="{index[ders[r[0]]]}"'
        out.append(f"    <ScalarVariable {a}><{_FMI2_TYPE[r[1]]}{inner}/></ScalarVariable>")
    out += ["  </ModelVariables>", "  <ModelStructure>"]
    outs = [r for r in rows2 if r[2] == OUT]
    if outs:
        out.append("    <Outputs>" + "".join(f'<Unknown index="{index[r[0]]}"/>' for r in outs)
                   + "</Outputs>")
    if m["states"]:
        out.append("    <Derivatives>" + "".join(f'<Unknown index="{index[d]}"/>'
                                                 for _s, d in m["states"]) + "</Derivatives>")
    init = [r for r in rows2 if (r[2] == OUT and r[4] is None) or r[0] in ders]
    if init:
        out.append("    <InitialUnknowns>" + "".join(
            f'<Unknown index="{index[r[0]]}"/>' for r in sorted(init, key=lambda r: index[r[0]]))
            + "</InitialUnknowns>")
    out += ["  </ModelStructure>", "</fmiModelDescription>", ""]
    return "\n".join(out)


def outputs() -> list[Path]:
    return [BUILD / f"{n}-fmi{v}.fmu" for n, m in MODELS.items()
            for v in ((3,) if m.get("only3") else (2, 3))]


def _sources() -> list[Path]:
    return [Path(__file__).resolve(), *sorted(HERE.glob("*.c")), *sorted(HERE.glob("*.h"))]


def build(cc: str, headers: Path, compile_shared, platform_of, force: bool = False) -> list[Path]:
    """Build the test FMUs that are older than their sources (``compile_shared`` and
    ``platform_of(version)`` come from fmus/build_fmus.py)."""
    for name in MODELS:
        path = HERE / f"{name}_vars.h"
        text = vars_header(name)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    fmus = outputs()
    newest = max(p.stat().st_mtime for p in _sources())
    if not force and all(f.exists() and f.stat().st_mtime >= newest for f in fmus):
        return fmus
    BUILD.mkdir(parents=True, exist_ok=True)
    ext = {"darwin": ".dylib", "win32": ".dll"}.get(sys.platform, ".so")
    with tempfile.TemporaryDirectory() as tmp:
        for name, m in MODELS.items():
            for version in ((3,) if m.get("only3") else (2, 3)):
                lib = Path(tmp) / f"{version}" / f"{name}{ext}"
                lib.parent.mkdir(exist_ok=True)
                compile_shared(cc, [HERE / f"fmi{version}.c", HERE / "tf_common.c",
                                    HERE / f"{name}.c"], [HERE, headers], lib)
                dest = BUILD / f"{name}-fmi{version}.fmu"
                tmp_fmu = dest.with_suffix(".fmu.tmp")
                with zipfile.ZipFile(tmp_fmu, "w", zipfile.ZIP_DEFLATED) as z:
                    z.writestr("modelDescription.xml", model_description(name, version))
                    z.write(lib, f"binaries/{platform_of(version)}/{name}{ext}")
                tmp_fmu.replace(dest)
    print(f"built {len(fmus)} test FMUs in {BUILD.relative_to(HERE.parent.parent)}",
          file=sys.stderr)
    _ = os
    return fmus
