"""The JSON Schema of rig files (docs/rig.schema.json), derived from the loader's
vocabulary (orchestrator/rigfile/vocabulary.py, schema.py)."""

from __future__ import annotations

import ast
import json
import re
import textwrap
import tomllib
from fractions import Fraction
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from moonpool.components.sdk.errors import RigValidationError
from moonpool.orchestrator.rig import ComponentConfig, RunConfig, Schedule
from moonpool.orchestrator.rigfile import load_rig
from moonpool.orchestrator.rigfile.schema import COMMAND, render, rig_schema
from moonpool.orchestrator.rigfile.vocabulary import COMPONENT, CONNECTION, PLOT, RUN, TOP

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_FILE = ROOT / "docs" / "rig.schema.json"
SHIPPED = sorted((ROOT / "rigs").glob("*.toml")) + sorted((ROOT / "rigs" / "hil").glob("*.toml"))

VALID = """
[run]
until = "1s"
algorithm = "gauss-seidel"

[components.src]
entry = "quickstart.vehicle"
rate_hz = 100

[components.sink]
entry = "quickstart.pressure"
period = "10ms"

[[connections]]
from = "src.state"
to = "sink.state"
"""


@pytest.fixture(scope="module")
def validator() -> Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def errors(validator: Draft202012Validator, text: str) -> list[str]:
    """Where and why the rig ``text`` breaks the schema (empty: it validates)."""
    data = tomllib.loads(textwrap.dedent(text))
    return [f"{'.'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
            for e in validator.iter_errors(data)]


def test_committed_schema_is_the_generated_one() -> None:
    committed = SCHEMA_FILE.read_text(encoding="utf-8") if SCHEMA_FILE.exists() else ""
    assert committed == render(), (
        f"docs/rig.schema.json is stale (the rig vocabulary changed); regenerate it with: "
        f"{COMMAND}"
    )
    assert rig_schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT / "rigs")))
def test_every_shipped_rig_validates(validator: Draft202012Validator, path: Path) -> None:
    assert errors(validator, path.read_text(encoding="utf-8")) == []


def test_the_shipped_rigs_are_found() -> None:
    names = {str(p.relative_to(ROOT / "rigs")) for p in SHIPPED}
    assert {"quickstart.toml", "pool.toml", "hil/pool_mcu.toml"} <= names
    assert not any(n.startswith("profiles/") for n in names)


BROKEN = {
    "unknown top-level key": (VALID + 'colour = "red"\n', "colour"),
    "misspelt run key": (VALID.replace('until = "1s"', 'until = "1s"\nsede = 3'), "sede"),
    "until of the wrong type": (VALID.replace('until = "1s"', "until = true"), "run.until"),
    "until without a unit": (VALID.replace('until = "1s"', 'until = "10"'), "run.until"),
    "until in an unknown unit": (VALID.replace('until = "1s"', 'until = "1h"'), "run.until"),
    "bad algorithm": (VALID.replace('"gauss-seidel"', '"gauss-seidle"'), "run.algorithm"),
    "connection without to": (VALID.replace('to = "sink.state"\n', ""), "'to'"),
    "connection to no port": (VALID.replace('"sink.state"', '"sink"'), "connections.0.to"),
    "no [run]": (VALID.replace('[run]\nuntil = "1s"\nalgorithm = "gauss-seidel"\n', ""), "'run'"),
    "no components": ('[run]\nuntil = "1s"\n', "'components'"),
    "bad component name": (VALID.replace("[components.src]", '[components."my src"]'),
                           "my src"),
    "both rate_hz and period": (VALID.replace("rate_hz = 100", 'rate_hz = 100\nperiod = "1s"'),
                                "components.src"),
    "neither rate_hz nor period": (VALID.replace("rate_hz = 100\n", ""), "components.src"),
    "no entry": (VALID.replace('entry = "quickstart.vehicle"\n', ""), "'entry'"),
    "endpoint of an inproc component": (
        VALID.replace("rate_hz = 100", 'rate_hz = 100\nendpoint = "tcp://127.0.0.1:5555"'),
        "does not allow 'tcp://127.0.0.1:5555'"),
    "remote without endpoint": (VALID.replace("rate_hz = 100", 'rate_hz = 100\nrun = "remote"'),
                                "'endpoint'"),
    "group of an inproc component": (VALID.replace("rate_hz = 100", 'rate_hz = 100\ngroup = "g"'),
                                     "does not allow 'g'"),
    "replay without recording": (
        VALID.replace("rate_hz = 100", 'rate_hz = 100\nrun = "replay"'), "'recording'"),
    "server_key without client_key": (
        VALID.replace("rate_hz = 100", 'rate_hz = 100\nrun = "remote"\n'
                      'endpoint = "tcp://10.0.0.2:5555"\nserver_key = "k.key"'), "client_key"),
    "plot without series": (VALID + '[[plots]]\ntitle = "Depth"\n', "'series'"),
    "plot series without a field": (VALID + '[[plots]]\ntitle = "D"\nseries = ["src.state"]\n',
                                    "plots.0.series.0"),
}


@pytest.mark.parametrize("case", BROKEN, ids=str)
def test_broken_rigs_fail_the_schema_and_the_loader(
    validator: Draft202012Validator, case: str, tmp_path: Path
) -> None:
    text, where = BROKEN[case]
    found = errors(validator, text)
    assert found, f"the schema accepts a rig with {case}"
    assert any(where in e for e in found), found
    rig = tmp_path / "rig.toml"
    rig.write_text(text, encoding="utf-8")
    with pytest.raises(RigValidationError):  # the schema refuses only what the loader does
        load_rig(rig)


def test_the_valid_example_passes_both(validator: Draft202012Validator, tmp_path: Path) -> None:
    assert errors(validator, VALID) == []
    rig = tmp_path / "rig.toml"
    rig.write_text(VALID, encoding="utf-8")
    load_rig(rig)
    replay = VALID.replace("rate_hz = 100", 'run = "replay"\nrecording = "r.mcap"\ngroup = "g"')
    assert errors(validator, replay) == []  # a replay needs no rate and ignores group


@pytest.mark.parametrize("key", [k.name for k in COMPONENT.keys if k.only])
def test_placement_keys_are_refused_where_the_loader_refuses_them(
    validator: Draft202012Validator, key: str, tmp_path: Path
) -> None:
    value = {"endpoint": '"tcp://127.0.0.1:5555"', "insecure": "true", "group": '"g"',
             "source": '"other"'}.get(key, '"some.file"')
    placement = next(p for p in ("inproc", "process", "remote")
                     if p not in (*COMPONENT[key].only, *COMPONENT[key].ignored_by))
    text = VALID.replace("rate_hz = 100", f'rate_hz = 100\nrun = "{placement}"\n{key} = {value}')
    # A key refused by a false schema is reported at its table, naming the value.
    refused = f"components.src: False schema does not allow {tomllib.loads(f'v = {value}')['v']!r}"
    assert refused in errors(validator, text)
    rig = tmp_path / "rig.toml"
    rig.write_text(text, encoding="utf-8")
    with pytest.raises(RigValidationError) as err:
        load_rig(rig)
    assert f"components.src.{key}: is only used with run = " in str(err.value)


def test_the_vocabulary_defaults_are_the_rig_defaults(tmp_path: Path) -> None:
    """The defaults the schema shows are those the loader applies (and the dataclasses')."""
    rig = tmp_path / "rig.toml"
    rig.write_text('[run]\nuntil = "1s"\n[components.a]\nentry = "x:Y"\nrate_hz = 1\n'
                   '[[connections]]\nfrom = "a.o"\nto = "a.i"\n[[plots]]\ntitle = "T"\n'
                   'series = ["a.o:x"]\n', encoding="utf-8")
    loaded = load_rig(rig)
    assert loaded.run == RunConfig(until_ns=1_000_000_000)
    assert loaded.components[0] == ComponentConfig(
        name="a", entry="x:Y", placement="inproc", schedule=Schedule(Fraction(1)),
        base_dir=tmp_path.resolve())
    assert loaded.connections[0].delay_ns == 0 and loaded.plots[0].ylabel == ""
    assert loaded.description == ""


@pytest.mark.parametrize("heading, table", [
    ("Top level", TOP), ("`[run]`", RUN), ("`[components.NAME]`", COMPONENT),
    ("`[[connections]]`", CONNECTION), ("`[[plots]]`", PLOT),
])
def test_docs_list_every_key_of_the_vocabulary(heading: str, table) -> None:
    text = (ROOT / "docs" / "rigs.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    documented = re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.M)
    assert sorted(documented) == sorted(table.names), f"docs/rigs.md, section {heading}"


def test_only_the_sdk_tomlfile_module_imports_tomllib() -> None:
    importers = []
    for folder in ("orchestrator", "components"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module] if isinstance(node, ast.ImportFrom) else [])
                if "tomllib" in names:
                    importers.append(path.relative_to(ROOT).as_posix())
    assert importers == ["components/sdk/tomlfile.py"]
