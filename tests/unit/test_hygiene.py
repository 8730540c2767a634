"""Hygiene (issue 22): a secret key given as server_key is refused with the fix; fix
hints name the rig's own files; a LICENSE, declared in pyproject.toml and the README;
provenance in summary.json."""

from __future__ import annotations

import hashlib
import json
import subprocess
import tomllib
from pathlib import Path

from moonpool.components.sdk import security
from moonpool.components.sdk.errors import RigValidationError
from moonpool.orchestrator.rigfile import load_rig
from moonpool.orchestrator.run import run_rig

ROOT = Path(__file__).resolve().parents[2]

RIG = """
[run]
until = 1
[components.sonar]
run = "remote"
endpoint = "tcp://10.0.0.2:5555"
rate_hz = 1
{extra}
"""


def _problems(tmp_path: Path, extra: str) -> dict[str, str]:
    path = tmp_path / "rig.toml"
    path.write_text(RIG.format(extra=extra))
    try:
        load_rig(path)
    except RigValidationError as exc:
        return {p.key: p.message for p in exc.problems}
    return {}


def test_a_secret_key_as_server_key_is_refused_with_the_fix(tmp_path):
    security.generate_keys("sonar-pc", tmp_path / "lab")
    security.generate_keys("me", tmp_path / "lab")
    p = _problems(tmp_path, 'server_key = "lab/sonar-pc.key_secret"\n'
                            'client_key = "lab/me.key_secret"')
    message = p["components.sonar.server_key"]
    assert "holds a secret key" in message and "give sonar-pc.key" in message
    assert _problems(tmp_path, 'server_key = "lab/sonar-pc.key"\n'
                               'client_key = "lab/me.key_secret"') == {}


def test_fix_hints_name_this_rigs_files(tmp_path):
    p = _problems(tmp_path, "")
    assert "keys/sonar.key" in p["components.sonar.endpoint"]
    assert "camera-pc" not in p["components.sonar.endpoint"]
    security.generate_keys("me", tmp_path / "lab")
    p = _problems(tmp_path, 'client_key = "lab/me.key_secret"')
    assert '"lab/sonar.key"' in p["components.sonar.server_key"]  # the folder the rig uses


def test_license_is_shipped_and_declared():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert "MIT ([LICENSE](LICENSE))" in (ROOT / "README.md").read_text()


def test_summary_has_provenance(tmp_path):
    from moonpool.orchestrator.rigfile import load_and_check

    rig_path = ROOT / "rigs" / "quickstart.toml"
    rig = load_and_check(rig_path, ["run.until=0.1", "run.plots=false"])
    result = run_rig(rig, tmp_path / "out")
    p = json.loads((tmp_path / "out" / "summary.json").read_text())["provenance"]
    assert p == result.summary["provenance"]
    assert p["moonpool"] and p["python"] and p["packages"]["numpy"]
    assert p["rig_file_sha256"] == hashlib.sha256(rig_path.read_bytes()).hexdigest()
    assert p["rig_text_sha256"] == hashlib.sha256(rig.source_text.encode()).hexdigest()
    if (ROOT / ".git").exists():
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
        assert p["git"]["commit"] == head and isinstance(p["git"]["dirty"], bool)
