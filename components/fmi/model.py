"""The FMU's model description: its variables, their types, its interfaces and binaries.

Read with fmpy without loading any binary, so that ``moonpool check`` can check a rig
against an FMU on any machine. Also the FMI type tables the compiled I/O needs: the
function suffix of a variable type (``fmi3GetFloat64``, ``fmi2GetInteger``), its C
type, and the names of the FMI status codes.
"""

from __future__ import annotations

import ctypes
import difflib
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sdk.errors import ParameterError

FLOAT_TYPES = ("Real", "Float64", "Float32")
INT_TYPES = ("Integer", "Enumeration", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32",
             "Int64", "UInt64")
INTERFACES = {"cs": "co-simulation", "me": "model exchange"}


@dataclass(frozen=True)
class Variable:
    """One model variable: name, value reference, type (FMI 3 names: Float64, Int32,
    ...; FMI 2: Real, Integer, Boolean, String, Enumeration), causality, variability."""

    name: str
    vr: int
    type: str
    causality: str
    variability: str
    size: int = 1
    """Number of values: 1 for a scalar, the product of the dimensions for an FMI 3
    array (-1 when a dimension is given by a structural parameter)."""


@dataclass(frozen=True)
class Model:
    """What the model description says, as far as hosting the FMU needs it."""

    path: Path
    md: Any
    """fmpy's ModelDescription."""
    version: int
    """FMI major version: 2 or 3."""
    kind: str
    """The interface used: "cs" (co-simulation) or "me" (model exchange)."""
    variables: dict[str, Variable]


def fail(fmu: Path, problem: str, fix: str) -> ParameterError:
    """A ParameterError naming the FMU file."""
    return ParameterError(f"FMU '{fmu}': {problem}", fix=fix)


def did_you_mean(word: str, options: Any) -> str:
    options = list(options)
    same = [o for o in options if o.lower() == word.lower()]  # only the case differs
    close = same or difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def binary_dirs(fmu: Path) -> tuple[set[str], bool]:
    """(the platform folders under binaries/, whether the FMU ships sources/)."""
    with zipfile.ZipFile(fmu) as z:
        names = z.namelist()
    dirs = {n.split("/")[1] for n in names if n.startswith("binaries/") and n.count("/") >= 2
            and n.split("/")[1]}
    return dirs, any(n.startswith("sources/") for n in names)


def model_description(fmu: Path) -> Any:
    """fmpy's ModelDescription of an FMI 2 or 3 FMU; ParameterError naming the file and
    the fix for anything that is not such an FMU."""
    from fmpy import read_model_description

    if not fmu.exists():
        raise fail(fmu, "the file does not exist",
                   "give the .fmu path relative to the rig file's folder")
    if fmu.is_dir():
        raise fail(fmu, "is a folder, not an .fmu file", "give the path of the .fmu file")
    if not zipfile.is_zipfile(fmu):
        raise fail(fmu, "is not an FMU (not a zip archive)",
                   "give a .fmu file exported by an FMI tool")
    try:
        with zipfile.ZipFile(fmu) as z:
            if "modelDescription.xml" not in z.namelist():
                raise fail(fmu, "has no modelDescription.xml (a zip, but not an FMU)",
                           "give a .fmu file exported by an FMI tool")
            import xml.etree.ElementTree as ET

            version = ET.fromstring(z.read("modelDescription.xml")).get("fmiVersion", "")
        if version.split(".")[0] not in ("2", "3"):
            raise fail(fmu, f"FMI version {version or '(none)'} is not supported",
                       "moonpool hosts FMI 2.0 and 3.0 FMUs; re-export the model as FMI 2.0 "
                       "or 3.0")
        return read_model_description(str(fmu), validate=False)
    except ParameterError:
        raise
    except Exception as exc:  # fmpy / lxml: a broken model description
        raise fail(fmu, f"cannot read its modelDescription.xml: {exc}",
                   "re-export the FMU; check it with `fmpy validate`") from exc


def read_model(fmu: Path, fmi_type: str) -> Model:
    """Open the FMU's model description, pick the interface (``fmi_type``: auto, cs or
    me) and check that it has a binary for this platform (none is loaded)."""
    import fmpy

    md = model_description(fmu)
    major = str(md.fmiVersion).split(".")[0]
    if major not in ("2", "3"):
        raise fail(fmu, f"FMI version {md.fmiVersion} is not supported",
                   "moonpool hosts FMI 2.0 and 3.0 FMUs; re-export the model as FMI 2.0 or 3.0")
    version = int(major)
    kinds = [k for k, a in (("cs", md.coSimulation), ("me", md.modelExchange)) if a is not None]
    if not kinds and getattr(md, "scheduledExecution", None) is not None:
        raise fail(fmu, "implements only FMI 3 Scheduled Execution (clocked model partitions "
                   "activated by the importer), which moonpool does not host",
                   "re-export the model with the co-simulation or model-exchange interface")
    kind = fmi_type if fmi_type != "auto" else (kinds[0] if kinds else "")
    if kind not in kinds:
        has = " and ".join(INTERFACES[k] for k in kinds) or "neither interface"
        raise fail(fmu, f"fmi_type = \"{fmi_type}\" but the FMU implements {has}",
                   f"set fmi_type to {' or '.join(repr(k) for k in kinds) or 'auto'}"
                   if kinds else "re-export the FMU with co-simulation or model exchange")
    plat = fmpy.platform_tuple if version == 3 else fmpy.platform
    dirs, sources = binary_dirs(fmu)
    if plat not in dirs:
        fix = (f"export the FMU for {plat}" + (", or compile its sources/ for this platform "
               "(fmpy.util.compile_platform_binary)" if sources else ""))
        raise fail(fmu, f"has no binary for this platform ({plat}); it has "
                   f"{', '.join(sorted(dirs)) or 'no binaries'}", fix)
    variables = {v.name: Variable(v.name, v.valueReference, v.type, v.causality, v.variability,
                                  _size(v)) for v in md.modelVariables}
    return Model(fmu, md, version, kind, variables)


def _size(v: Any) -> int:
    """The number of values of a variable (FMI 3 arrays: the product of its dimensions)."""
    n = 1
    for d in getattr(v, "dimensions", None) or []:
        start = getattr(d, "start", None)
        if start in (None, ""):
            return -1
        n *= int(start)
    return n


# ----------------------------------------------------------------- FMI types

_C3 = {"Float64": ctypes.c_double, "Float32": ctypes.c_float, "Int8": ctypes.c_int8,
       "UInt8": ctypes.c_uint8, "Int16": ctypes.c_int16, "UInt16": ctypes.c_uint16,
       "Int32": ctypes.c_int32, "UInt32": ctypes.c_uint32, "Int64": ctypes.c_int64,
       "UInt64": ctypes.c_uint64, "Boolean": ctypes.c_bool, "Enumeration": ctypes.c_int64}
_C2 = {"Real": ctypes.c_double, "Integer": ctypes.c_int, "Enumeration": ctypes.c_int,
       "Boolean": ctypes.c_int}
_STATUS = ("ok", "warning", "discard", "error", "fatal", "pending")


def status_label(status: int) -> str:
    """The name of an FMI status code (fmi2Status / fmi3Status)."""
    return _STATUS[status] if 0 <= status < len(_STATUS) else str(status)


def function_suffix(version: int, typ: str) -> str:
    """The FMI function suffix for a variable type (fmi3GetFloat64, fmi2GetInteger)."""
    if version == 3:
        return "Int64" if typ == "Enumeration" else typ
    return "Integer" if typ == "Enumeration" else typ


def ctype(version: int, typ: str) -> Any:
    """The C type of one value of a variable type, as the FMI functions take it."""
    return (_C3 if version == 3 else _C2)[typ]
