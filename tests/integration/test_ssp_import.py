"""SSP import (`moonpool import ssp`): an .ssp with two hydrodynamics FMUs, a
connection and a parameter set (.ssv at system level, a .ssm mapping with a linear
transformation, inline values on a component) becomes a rig whose run has the digest
of the same rig written by hand; errors name the .ssd element and the fix."""

from __future__ import annotations

import zipfile

import pytest
from conftest import ROOT, moonpool

from moonpool.components.ssp import SspError, read_ssp
from moonpool.orchestrator.rigfile import load_and_check
from moonpool.orchestrator.run import run_rig

FMU = ROOT / "fmus" / "build" / "hydrodynamics-fmi3.fmu"

SSD = """<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription version="{version}" name="convoy"
    xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription"
    xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon"
    xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues">
  <ssd:System name="root">
    <ssd:Elements>
      <ssd:Component name="lead" type="application/x-fmu-sharedlibrary" source="resources/hydro.fmu">
        <ssd:Connectors>
          <ssd:Connector name="u" kind="output"><ssc:Real/></ssd:Connector>
          <ssd:Connector name="d" kind="output"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
        <ssd:ParameterBindings>
          <ssd:ParameterBinding>
            <ssd:ParameterValues>
              <ssv:ParameterSet version="1.0" name="inline">
                <ssv:Parameters>
                  <ssv:Parameter name="init_u"><ssv:Real value="1.5"/></ssv:Parameter>
                </ssv:Parameters>
              </ssv:ParameterSet>
            </ssd:ParameterValues>
          </ssd:ParameterBinding>
        </ssd:ParameterBindings>
      </ssd:Component>
      <ssd:Component name="follow" type="application/x-fmu-sharedlibrary" source="resources/hydro.fmu">
        <ssd:Connectors>
          <ssd:Connector name="{end}" kind="input"><ssc:Real/></ssd:Connector>
          <ssd:Connector name="tau_Z" kind="input"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
      </ssd:Component>
    </ssd:Elements>
    <ssd:Connections>
      <ssd:Connection startElement="lead" startConnector="u" endElement="follow" endConnector="tau_X"/>
      <ssd:Connection startElement="lead" startConnector="d" endElement="follow" endConnector="tau_Z"/>
    </ssd:Connections>
    <ssd:ParameterBindings>
      <ssd:ParameterBinding source="resources/convoy.ssv">
        <ssd:ParameterMapping source="resources/convoy.ssm"/>
      </ssd:ParameterBinding>
    </ssd:ParameterBindings>
  </ssd:System>
  <ssd:DefaultExperiment startTime="0" stopTime="2"/>
</ssd:SystemStructureDescription>
"""

SSV = """<?xml version="1.0" encoding="UTF-8"?>
<ssv:ParameterSet version="1.0" name="convoy"
    xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues">
  <ssv:Parameters>
    <ssv:Parameter name="lead.volume"><ssv:Real value="0.0135"/></ssv:Parameter>
    <ssv:Parameter name="follow.volume"><ssv:Real value="0.0135"/></ssv:Parameter>
    <ssv:Parameter name="drag"><ssv:Real value="9"/></ssv:Parameter>
    <ssv:Parameter name="lead.earth_rotation"><ssv:Boolean value="false"/></ssv:Parameter>
  </ssv:Parameters>
</ssv:ParameterSet>
"""

SSM = """<?xml version="1.0" encoding="UTF-8"?>
<ssm:ParameterMapping version="1.0"
    xmlns:ssm="http://ssp-standard.org/SSP1/SystemStructureParameterMapping"
    xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon">
  <ssm:MappingEntry source="drag" target="follow.D2_u">
    <ssc:LinearTransformation factor="2" offset="0.5"/>
  </ssm:MappingEntry>
</ssm:ParameterMapping>
"""

HAND = """
name = "convoy"
[run]
until = "2s"
seed = 0
[components.lead]
entry = "fmu"
rate_hz = 100
[components.lead.parameters]
fmu = "hydro.fmu"
start_values = { volume = 0.0135, earth_rotation = false, init_u = 1.5 }
outputs.out = { type = "moonpool.v1.Signals", fields = { u = "u", d = "d" } }
[components.follow]
entry = "fmu"
rate_hz = 100
[components.follow.parameters]
fmu = "hydro.fmu"
start_values = { volume = 0.0135, D2_u = 18.5 }
inputs.from_lead = { type = "moonpool.v1.Signals", fields = { u = "tau_X", d = "tau_Z" } }
[[connections]]
from = "lead.out"
to = "follow.from_lead"
"""


def _ssp(path, version="1.0", end="tau_X", ssd=None):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("SystemStructure.ssd", ssd or SSD.format(version=version, end=end))
        z.write(FMU, "resources/hydro.fmu")
        z.writestr("resources/convoy.ssv", SSV)
        z.writestr("resources/convoy.ssm", SSM)
    return path


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_imported_rig_runs_with_the_hand_written_rigs_digest(tmp_path, version):
    ssp = _ssp(tmp_path / "convoy.ssp", version)
    r = moonpool("import", "ssp", str(ssp), "--out", str(tmp_path / "rigs" / "convoy.toml"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "rigs" / "convoy.fmus" / "resources" / "hydro.fmu").is_file()
    system = read_ssp(ssp)
    assert system.components[1].parameters == {"volume": 0.0135, "D2_u": 18.5}
    (tmp_path / "hydro.fmu").write_bytes(FMU.read_bytes())
    (tmp_path / "hand.toml").write_text(HAND)
    digests = []
    for rig_path in (tmp_path / "rigs" / "convoy.toml", tmp_path / "hand.toml"):
        rig = load_and_check(rig_path, ["run.plots=false", "run.record=false"])
        result = run_rig(rig, tmp_path / f"out-{rig_path.stem}")
        assert result.ok, result.summary["error"]
        assert result.summary["components"]["follow"]["steps"] == 200
        digests.append(result.summary["digest"])
    assert digests[0] == digests[1]


def test_errors_name_the_element_and_the_fix(tmp_path):
    with pytest.raises(SspError, match=r"<Connection startElement='lead' startConnector='u' "
                       r"endElement='follow' endConnector='tau_X'>: 'follow' has no input "
                       r"connector 'tau_X' .*fix: declare"):
        read_ssp(_ssp(tmp_path / "a.ssp", end="tau_Y"))
    nested = SSD.format(version="1.0", end="tau_X").replace(
        '<ssd:Elements>', '<ssd:Elements><ssd:System name="inner"/>')
    with pytest.raises(SspError, match=r"<System name='inner'>: nested systems .*fix: flatten"):
        read_ssp(_ssp(tmp_path / "b.ssp", ssd=nested))
    missing = SSD.format(version="1.0", end="tau_X").replace("convoy.ssv", "other.ssv")
    with pytest.raises(SspError, match=r"parameter set 'resources/other.ssv' is not in the archive"):
        read_ssp(_ssp(tmp_path / "c.ssp", ssd=missing))
    ghost = SSD.format(version="1.0", end="tau_X")
    with zipfile.ZipFile(tmp_path / "d.ssp", "w") as z:
        z.writestr("SystemStructure.ssd", ghost)
        z.write(FMU, "resources/hydro.fmu")
        z.writestr("resources/convoy.ssv", SSV.replace("follow.volume", "folow.volume"))
        z.writestr("resources/convoy.ssm", SSM)
    with pytest.raises(SspError, match=r"parameter 'folow.volume' names no component"):
        read_ssp(tmp_path / "d.ssp")
    (tmp_path / "bad.ssp").write_text("not a zip")
    r = moonpool("import", "ssp", str(tmp_path / "bad.ssp"))
    assert r.returncode == 2 and "not an SSP archive" in r.stderr


def test_one_signal_into_two_inputs_of_one_component(tmp_path):
    ssd = SSD.format(version="1.0", end="tau_X").replace(
        '<ssd:Connector name="tau_Z" kind="input">',
        '<ssd:Connector name="tau_Y" kind="input"><ssc:Real/></ssd:Connector>'
        '<ssd:Connector name="tau_Z" kind="input">').replace(
        "</ssd:Connections>", '<ssd:Connection startElement="lead" startConnector="u" '
        'endElement="follow" endConnector="tau_Y"/></ssd:Connections>')
    ssp = _ssp(tmp_path / "fan.ssp", ssd=ssd)
    r = moonpool("import", "ssp", str(ssp))
    assert r.returncode == 0, r.stderr
    rig = load_and_check(tmp_path / "fan.toml")
    ports = {(c.source, c.target, c.target_port) for c in rig.connections}
    assert ports == {("lead", "follow", "from_lead"), ("lead", "follow", "from_lead_2")}
    assert rig.component("follow").parameters["inputs"]["from_lead_2"]["fields"] == {"u": "tau_Y"}
    r = moonpool("import", "ssp", str(ssp))
    assert r.returncode == 2 and "exists" in r.stderr  # never overwritten without --force
