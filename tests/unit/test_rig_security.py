"""The rig's CURVE settings (server_key, client_key, insecure) and run.safe_stop."""

from __future__ import annotations

from pathlib import Path

from moonpool.components.sdk import security
from moonpool.components.sdk.errors import RigValidationError
from moonpool.orchestrator.rigfile import load_rig

RIG = """
[run]
until = 1
[components.cam]
run = "remote"
endpoint = "{endpoint}"
rate_hz = 1
{extra}
[components.local]
entry = "x:Y"
rate_hz = 1
{local}
"""


def _problems(tmp_path: Path, endpoint: str, extra: str = "", local: str = "") -> dict[str, str]:
    path = tmp_path / "rig.toml"
    path.write_text(RIG.format(endpoint=endpoint, extra=extra, local=local))
    try:
        load_rig(path)
    except RigValidationError as exc:
        return {p.key: f"{p.line}: {p.message}" for p in exc.problems}
    return {}


def test_rig_security_keys(tmp_path):
    security.generate_keys("cam", tmp_path / "keys")
    security.generate_keys("orchestrator", tmp_path / "keys")
    keys = 'server_key = "keys/cam.key"\nclient_key = "keys/orchestrator.key_secret"'
    # Loopback, ipc and inproc need nothing; a network endpoint needs keys or insecure.
    for ep in ("tcp://127.0.0.1:5555", "tcp://[::1]:5555", "ipc://x.sock", "inproc://x"):
        assert _problems(tmp_path, ep) == {}
    p = _problems(tmp_path, "tcp://10.0.0.2:5555")
    assert list(p) == ["components.cam.endpoint"]
    assert p["components.cam.endpoint"].startswith("6: ") and "no keys" in p[
        "components.cam.endpoint"] and "insecure = true" in p["components.cam.endpoint"]
    assert _problems(tmp_path, "tcp://10.0.0.2:5555", keys) == {}
    assert _problems(tmp_path, "tcp://10.0.0.2:5555", "insecure = true") == {}
    rig = load_rig(tmp_path / "rig.toml")  # (the last one written: insecure)
    assert rig.component("cam").insecure and rig.component("cam").server_key is None
    (tmp_path / "rig.toml").write_text(RIG.format(endpoint="tcp://cam-pc:1", local="",
                                                  extra=keys + '\nentry = "x:Y"'))
    cam = load_rig(tmp_path / "rig.toml").component("cam")
    assert cam.server_key == tmp_path / "keys/cam.key"
    assert cam.client_key == tmp_path / "keys/orchestrator.key_secret" and not cam.insecure
    # --mode runs everything here: the keys are dropped, and not needed.
    assert load_rig(tmp_path / "rig.toml", mode="process").component("cam").server_key is None

    p = _problems(tmp_path, "tcp://10.0.0.2:5555", keys + "\ninsecure = true",
                  local='insecure = true\nserver_key = "keys/cam.key"')
    assert "contradicts" in p["components.cam.insecure"]
    assert 'only used with run = "remote"' in p["components.local.insecure"]
    assert 'only used with run = "remote"' in p["components.local.server_key"]
    p = _problems(tmp_path, "tcp://10.0.0.2:5555", 'server_key = "keys/cam.key"')
    assert "missing: server_key is given" in p["components.cam.client_key"]
    p = _problems(tmp_path, "tcp://10.0.0.2:5555",
                  'server_key = "keys/nope.key"\nclient_key = "keys/cam.key"\ninsecure = "yes"')
    assert "keys/nope.key does not exist" in p["components.cam.server_key"]
    assert "holds only a public key" in p["components.cam.client_key"]
    assert "expected true or false" in p["components.cam.insecure"]


def test_rig_safe_stop(tmp_path):
    def problems(value: str) -> dict[str, str]:
        path = tmp_path / "rig.toml"
        path.write_text(f"[run]\nuntil = 1\nsafe_stop = {value}\n"
                        '[components.mcu]\nentry = "x:Y"\nrate_hz = 1\n')
        try:
            assert load_rig(path).run.safe_stop == ("mcu",)
        except RigValidationError as exc:
            return {p.key: p.message for p in exc.problems}
        return {}

    assert problems('["mcu"]') == {}
    assert "no component named 'mcx' (did you mean 'mcu'?)" in problems('["mcx"]')["run.safe_stop[0]"]
    assert "twice" in problems('["mcu", "mcu"]')["run.safe_stop[1]"]
    assert "expected a list" in problems('"mcu"')["run.safe_stop"]
