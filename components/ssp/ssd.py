"""SSP system structures (``.ssp`` archives, SSP 1.0 / 2.0) read into a moonpool rig.

Call order::

    system = read_ssp(path)               the archive's SystemStructure.ssd (+ .ssv/.ssm
                                          it references) -> System; SspError naming the
                                          element and the fix for anything not imported
    text = rig_text(system, rig_dir, fmu_dir, rate_hz=100)
                                          the rig file (TOML), FMUs extracted to fmu_dir

What is read (the XML is parsed with ``xml.etree``; namespaces are ignored, so SSP 1.0
and 2.0 files read alike):

- ``ssd:System/ssd:Elements/ssd:Component`` with ``type`` ``application/x-fmu-sharedlibrary``
  (or none) and ``source`` an FMU inside the archive -> one ``fmu`` component each
  (name = the element's ``name``);
- ``ssd:Connectors`` -> which variables are inputs / outputs;
- ``ssd:Connections`` between two components -> moonpool connections: every component
  with connected outputs gets one output port ``out`` of type ``moonpool.v1.Signals``
  (signal name = connector name), every consumer one input port ``from_PRODUCER``
  mapping the producer's signals to its own input variables;
- ``ssd:ParameterBindings`` of the system or of a component, with a ``source`` ``.ssv``
  file in the archive or inline ``ssd:ParameterValues``, an optional ``prefix``, and an
  optional ``ssd:ParameterMapping`` (``.ssm``) whose entries are plain renames or
  linear transformations -> each component's ``start_values``;
- ``ssd:DefaultExperiment`` ``startTime`` / ``stopTime`` -> ``run.until`` (stopTime −
  startTime; 10 s when absent).

Refused, with the element named: nested systems (``ssd:System`` inside Elements),
signal dictionaries, connections to the system's own connectors, non-FMU components,
unit or mapping transformations other than linear, a connection whose end is not an
input connector.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from ..sdk.errors import RigError


class SspError(RigError):
    """An SSP file that cannot be imported (names the .ssd element and the fix)."""


FMU_TYPES = ("application/x-fmu-sharedlibrary", "")
VALUE_TYPES = {
    "Real": float, "Float64": float, "Float32": float,
    "Integer": int, "Int8": int, "UInt8": int, "Int16": int, "UInt16": int,
    "Int32": int, "UInt32": int, "Int64": int, "UInt64": int,
    "Boolean": bool, "String": str, "Enumeration": str,
}


@dataclass(frozen=True)
class SspComponent:
    """One FMU of the system."""

    name: str
    """The element's name (becomes the rig's component name)."""
    source: str
    """Path of the FMU inside the archive."""
    inputs: tuple[str, ...]
    """Connector names of kind input."""
    outputs: tuple[str, ...]
    """Connector names of kind output."""
    parameters: dict[str, Any] = field(default_factory=dict)
    """Variable -> start value from the parameter bindings."""


@dataclass(frozen=True)
class SspConnection:
    """``start_element.start_connector`` -> ``end_element.end_connector``."""

    start_element: str
    start_connector: str
    end_element: str
    end_connector: str


@dataclass(frozen=True)
class System:
    """What the importer read from one ``.ssp``."""

    path: Path
    """The archive."""
    name: str
    """The system's name."""
    version: str
    """The SSD's ``version`` attribute (1.0, 2.0)."""
    components: tuple[SspComponent, ...]
    """The FMUs, in document order."""
    connections: tuple[SspConnection, ...]
    """Connections between two components, in document order."""
    until_s: Decimal
    """stopTime − startTime of the default experiment (10 when absent)."""


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _children(el: ET.Element, name: str) -> Iterator[ET.Element]:
    return (c for c in el if _local(c.tag) == name)


def _child(el: ET.Element, name: str) -> ET.Element | None:
    return next(_children(el, name), None)


def _where(el: ET.Element) -> str:
    name = el.get("name")
    return f"<{_local(el.tag)}{f' name={name!r}' if name else ''}>"


class _Archive:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.zip = zipfile.ZipFile(path)
        except (OSError, zipfile.BadZipFile) as exc:
            raise SspError(f"{path}: not an SSP archive ({exc})",
                           fix="give a .ssp file (a zip with SystemStructure.ssd)") from exc
        self.names = set(self.zip.namelist())

    def xml(self, member: str, what: str) -> ET.Element:
        if member not in self.names:
            raise SspError(f"{self.path}: {what} '{member}' is not in the archive",
                           fix=f"add {member} to the .ssp or correct the reference")
        try:
            return ET.fromstring(self.zip.read(member))
        except ET.ParseError as exc:
            raise SspError(f"{self.path}: {member} is not well-formed XML: {exc}",
                           fix=f"repair {member}") from exc


def _resolve(member: str) -> str:
    return posixpath.normpath(member.removeprefix("./"))


def _value(param: ET.Element, where: str) -> Any:
    for child in param:
        kind = _local(child.tag)
        if kind in VALUE_TYPES:
            text = child.get("value")
            if text is None:
                raise SspError(f"{where}: <{kind}> has no value attribute",
                               fix=f'write <ssv:{kind} value="..."/>')
            conv = VALUE_TYPES[kind]
            try:
                if conv is bool:
                    if text not in ("true", "false", "1", "0"):
                        raise ValueError(text)
                    return text in ("true", "1")
                return conv(text)
            except ValueError as exc:
                raise SspError(f"{where}: value {text!r} is not a {kind}",
                               fix=f"give a {kind} value") from exc
    raise SspError(f"{where}: no value element (Real, Integer, Boolean, ...)",
                   fix='write e.g. <ssv:Real value="1.0"/> inside the parameter')


def _parameter_set(root: ET.Element, where: str) -> dict[str, Any]:
    if _local(root.tag) != "ParameterSet":
        raise SspError(f"{where}: expected an ssv:ParameterSet, found <{_local(root.tag)}>",
                       fix="reference a .ssv parameter set")
    out: dict[str, Any] = {}
    params = _child(root, "Parameters")
    for p in (params if params is not None else ()):
        name = p.get("name")
        if not name:
            raise SspError(f"{where}: <Parameter> without a name", fix="name every parameter")
        out[name] = _value(p, f"{where}: parameter {name!r}")
    return out


def _mapping(root: ET.Element, where: str) -> list[tuple[str, str, Decimal, Decimal]]:
    """(source, target, factor, offset) of a .ssm's entries (plain or linear only)."""
    entries = []
    for e in _children(root, "MappingEntry"):
        src, tgt = e.get("source"), e.get("target")
        if not src or not tgt:
            raise SspError(f"{where}: <MappingEntry> needs source and target",
                           fix='write <ssm:MappingEntry source="P" target="Element.variable"/>')
        factor, offset = Decimal(1), Decimal(0)
        for t in e:
            kind = _local(t.tag)
            if kind == "LinearTransformation":
                factor, offset = Decimal(t.get("factor", "1")), Decimal(t.get("offset", "0"))
            elif kind != "Annotations":
                raise SspError(f"{where}: <MappingEntry source={src!r}> uses <{kind}>, "
                               "which moonpool does not import",
                               fix="apply the transformation to the .ssv values, or use "
                                   "<ssc:LinearTransformation>")
        entries.append((src, tgt, factor, offset))
    return entries


def _bindings(archive: _Archive, owner: ET.Element, ssd_dir: str) -> dict[str, Any]:
    """Names (as the owner sees them) -> values of the owner's ParameterBindings."""
    out: dict[str, Any] = {}
    pbs = _child(owner, "ParameterBindings")
    for pb in (pbs if pbs is not None else ()):
        where = f"{_where(owner)} <ParameterBinding{' source=' + repr(pb.get('source')) if pb.get('source') else ''}>"
        src = pb.get("source")
        if src:
            if src.startswith("#"):
                raise SspError(f"{where}: fragment references are not imported",
                               fix="put the parameter set in a .ssv file of the archive")
            member = _resolve(posixpath.join(ssd_dir, src))
            values = _parameter_set(archive.xml(member, "parameter set"), f"{where} ({member})")
        else:
            inline = _child(pb, "ParameterValues")
            ps = _child(inline, "ParameterSet") if inline is not None else None
            if ps is None:
                raise SspError(f"{where}: neither a source nor inline <ParameterValues>",
                               fix="give source=\"resources/params.ssv\" or inline values")
            values = _parameter_set(ps, where)
        mapping = _child(pb, "ParameterMapping")
        if mapping is not None:
            msrc = mapping.get("source")
            if msrc:
                mroot = archive.xml(_resolve(posixpath.join(ssd_dir, msrc)), "parameter mapping")
            else:
                mroot = _child(mapping, "ParameterMapping")
                if mroot is None:
                    raise SspError(f"{where} <ParameterMapping>: no source and no inline mapping",
                                   fix="give source=\"resources/map.ssm\"")
            mapped: dict[str, Any] = {}
            for s, t, factor, offset in _mapping(mroot, f"{where} <ParameterMapping>"):
                if s not in values:
                    raise SspError(f"{where} <ParameterMapping>: entry source {s!r} is not in the "
                                   f"parameter set (it has {', '.join(values) or 'nothing'})",
                                   fix="correct the mapping entry's source")
                v = values.pop(s)
                if (factor, offset) != (1, 0):
                    if isinstance(v, bool) or not isinstance(v, (int, float)):
                        raise SspError(f"{where}: linear transformation of non-numeric {s!r}",
                                       fix="transform only numeric parameters")
                    v = float(Decimal(repr(v)) * factor + offset)
                mapped[t] = v
            values = {**values, **mapped}
        prefix = pb.get("prefix", "")
        out.update({prefix + k: v for k, v in values.items()})
    return out


def read_ssp(path: Path | str) -> System:
    """Read an .ssp archive (see the module docstring); SspError for anything refused."""
    path = Path(path)
    archive = _Archive(path)
    root = archive.xml("SystemStructure.ssd", "the system structure")
    ssd = "SystemStructure.ssd"
    if _local(root.tag) != "SystemStructureDescription":
        raise SspError(f"{path}: {ssd} holds <{_local(root.tag)}>, not an "
                       "<ssd:SystemStructureDescription>", fix="give an SSP system structure")
    system = _child(root, "System")
    if system is None:
        raise SspError(f"{path}: {ssd} has no <ssd:System>", fix="describe the system in <ssd:System>")
    if _child(system, "SignalDictionaries") is not None:
        raise SspError(f"{path}: {ssd} {_where(system)} uses <SignalDictionaries>, which "
                       "moonpool does not import", fix="connect the components directly")
    sys_params = _bindings(archive, system, "")
    comps: list[SspComponent] = []
    elements = _child(system, "Elements")
    for el in (elements if elements is not None else ()):
        kind, name = _local(el.tag), el.get("name", "")
        where = f"{path}: {ssd} {_where(el)}"
        if kind == "System":
            raise SspError(f"{where}: nested systems are not imported",
                           fix="flatten the system so that its elements are all FMU components")
        if kind != "Component":
            raise SspError(f"{where}: element kind {kind} is not imported",
                           fix="use FMU components (<ssd:Component source=\"resources/X.fmu\">)")
        if el.get("type", "") not in FMU_TYPES:
            raise SspError(f"{where}: type {el.get('type')!r} is not an FMU",
                           fix='only type="application/x-fmu-sharedlibrary" components are imported')
        if not name.isidentifier():
            raise SspError(f"{where}: the name {name!r} is not usable as a moonpool component name",
                           fix="rename the element (letters, digits, _; not starting with a digit)")
        source = el.get("source", "")
        member = _resolve(source)
        if member.startswith(("../", "/")) or member == "..":
            raise SspError(f"{where}: source {source!r} points outside the archive",
                           fix="put the FMU in the .ssp (e.g. resources/NAME.fmu)")
        if not source or member not in archive.names:
            raise SspError(f"{where}: source {source!r} is not a file in the archive",
                           fix="put the FMU in the .ssp (e.g. resources/NAME.fmu) and name it in source")
        ins, outs = [], []
        conns = _child(el, "Connectors")
        for c in (conns if conns is not None else ()):
            ck = c.get("kind", "")
            (ins if ck == "input" else outs if ck == "output" else []).append(c.get("name", ""))
        params = {k[len(name) + 1:]: v for k, v in sys_params.items() if k.startswith(name + ".")}
        params.update(_bindings(archive, el, ""))  # names are the FMU's variables
        comps.append(SspComponent(name, member, tuple(ins), tuple(outs), params))
    by_name = {c.name: c for c in comps}
    for key in sys_params:
        if key.split(".", 1)[0] not in by_name or "." not in key:
            raise SspError(f"{path}: {ssd} {_where(system)} <ParameterBindings>: parameter "
                           f"{key!r} names no component (names are ELEMENT.VARIABLE; elements: "
                           f"{', '.join(by_name)})",
                           fix="prefix the parameter with its component's name, or map it "
                               "with an .ssm ParameterMapping")
    connections: list[SspConnection] = []
    cs = _child(system, "Connections")
    for c in (cs if cs is not None else ()):
        a, ac, b, bc = (c.get(k, "") for k in ("startElement", "startConnector", "endElement", "endConnector"))
        where = f"{path}: {ssd} <Connection startElement={a!r} startConnector={ac!r} endElement={b!r} endConnector={bc!r}>"
        if not a or not b:
            raise SspError(f"{where}: connections to the system's own connectors are not imported",
                           fix="connect component to component (give startElement and endElement)")
        for el_name, conn, kind in ((a, ac, "outputs"), (b, bc, "inputs")):
            comp = by_name.get(el_name)
            if comp is None:
                raise SspError(f"{where}: no component {el_name!r} in <Elements>",
                               fix=f"use one of {', '.join(by_name)}")
            if conn not in getattr(comp, kind):
                raise SspError(f"{where}: {el_name!r} has no {kind[:-1]} connector {conn!r} "
                               f"(its {kind}: {', '.join(getattr(comp, kind)) or 'none'})",
                               fix=f"declare <ssd:Connector name={conn!r} kind={kind[:-1]!r}> "
                                   "or correct the connection")
        connections.append(SspConnection(a, ac, b, bc))
    until = Decimal(10)
    exp = _child(root, "DefaultExperiment")
    if exp is not None:
        until = Decimal(exp.get("stopTime", "10")) - Decimal(exp.get("startTime", "0"))
        if until <= 0:
            raise SspError(f"{path}: {ssd} <DefaultExperiment>: stopTime must be after startTime",
                           fix="correct the default experiment")
    return System(path, root.get("name", path.stem), root.get("version", ""),
                  tuple(comps), tuple(connections), until)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _table(d: dict[str, Any]) -> str:
    return "{ " + ", ".join(f"{_toml(k)} = {_toml(v)}" for k, v in d.items()) + " }"


def rig_text(system: System, rig_dir: Path, fmu_dir: Path, rate_hz: int = 100) -> str:
    """The rig file for ``system``; its FMUs are extracted to ``fmu_dir``."""
    fmu_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(system.path) as z:
        paths: dict[str, str] = {}
        sources: dict[str, str] = {}
        for c in system.components:  # one file per FMU of the archive, shared
            target = fmu_dir / c.source
            if c.source not in sources.values():
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(z.read(c.source))
            sources[c.name] = c.source
            paths[c.name] = Path(posixpath.relpath(target.resolve().as_posix(),
                                                   rig_dir.resolve().as_posix())).as_posix()
    lines = [f"# Imported from {system.path.name} (SSP {system.version or '?'}) by "
             "`moonpool import ssp`.",
             f"name = {_toml(system.name)}", "",
             "[run]", f"until = \"{system.until_s}s\"", "seed = 0", ""]
    ports = _input_ports(system)
    for c in system.components:
        feeds = [x for x in system.connections if x.start_element == c.name]
        lines += [f"[components.{c.name}]", 'entry = "fmu"', f"rate_hz = {rate_hz}",
                  f"[components.{c.name}.parameters]", f"fmu = {_toml(paths[c.name])}"]
        if c.parameters:
            lines.append(f"start_values = {_table(c.parameters)}")
        if feeds:
            signals = dict.fromkeys(x.start_connector for x in feeds)
            lines += [f"[components.{c.name}.parameters.outputs.out]",
                      'type = "moonpool.v1.Signals"',
                      f"fields = {_table({s: s for s in signals})}"]
        for (consumer, port, producer), xs in ports.items():
            if consumer == c.name:
                lines += [f"[components.{c.name}.parameters.inputs.{port}]",
                          'type = "moonpool.v1.Signals"',
                          f"fields = {_table({x.start_connector: x.end_connector for x in xs})}"]
        lines.append("")
    for consumer, port, producer in ports:
        lines += ["[[connections]]", f'from = "{producer}.out"', f'to = "{consumer}.{port}"', ""]
    return "\n".join(lines)


def _input_ports(system: System) -> dict[tuple[str, str, str], list[SspConnection]]:
    """(consumer, input port, producer) -> its connections, in document order. A port
    maps each producer signal once: a signal feeding two inputs of one consumer goes
    through a second port (``from_lead``, ``from_lead_2``, …)."""
    ports: dict[tuple[str, str, str], list[SspConnection]] = {}
    for x in system.connections:
        n = 1
        while True:
            port = f"from_{x.start_element}" + (f"_{n}" if n > 1 else "")
            xs = ports.setdefault((x.end_element, port, x.start_element), [])
            if all(y.start_connector != x.start_connector for y in xs):
                xs.append(x)
                break
            n += 1
    return ports
