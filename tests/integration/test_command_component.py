"""`run = "command"`: a component in another language started by the rig.

The C component of tests/support/c_component/ (written from docs/protocol.md),
compiled here, started by the orchestrator from its command line:

- the rig gives the same digest, messages and metrics as its Python twin in-process;
- `moonpool check` starts it, asks Describe and refuses a misspelt or ill-typed
  parameter (exit 2), and leaves no process behind;
- killed by SIGKILL mid-run, the run fails at once naming it (summary.json), and
  nothing it started survives; a helper it forked into its process group is killed
  when the run ends; the orchestrator itself killed by SIGKILL takes the child with it
  (PR_SET_PDEATHSIG set before exec);
- the rig file's command, cwd, env and placeholders are checked (exit 2).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import zmq
from conftest import ROOT, SUPPORT, alive, c_compiler, children_of, moonpool

pytestmark = pytest.mark.slow

RIG = """
[run]
until = "{until}"
seed = 7
plots = false
peer_timeout = "2s"
{extra}

[components.wave]
entry = "c_scaler_twin:Wave"
rate_hz = 20

[components.scaler]
{placement}
rate_hz = 50
[components.scaler.parameters]
gain = 2
offset = 0.5
noise_std = 0.01
every = 2
frame_id = "scaled"

[[connections]]
from = "wave.signals"
to = "scaler.in"

[[plots]]
title = "scaled"
series = ["scaler.out:signals[a].value"]
"""


@pytest.fixture(scope="module")
def scaler_bin(tmp_path_factory) -> Path:
    """scaler.c compiled against the libzmq of pyzmq's wheel."""
    cc = c_compiler()
    libdir = Path(zmq.__file__).resolve().parent.parent / "pyzmq.libs"
    libs = sorted(libdir.glob("libzmq*.so*"))
    assert libs, f"pyzmq bundles no libzmq in {libdir}"
    out = tmp_path_factory.mktemp("c_build") / "scaler"
    cmd = [cc, "-std=c11", "-O2", "-ffp-contract=off", "-o", str(out),
           str(SUPPORT / "c_component" / "scaler.c"), str(libs[0]),
           f"-Wl,-rpath,{libs[0].parent}", "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return out


def _rig(folder: Path, name: str, placement: str, until="2s", extra="") -> Path:
    path = folder / f"{name}.toml"
    path.write_text(RIG.format(placement=placement, until=until, extra=extra))
    return path


def _command(binary: Path, *more: str) -> str:
    # The binary is copied into the rig's folder: a relative program path is taken
    # from cwd (the rig's folder by default).
    return ('run = "command"\ncommand = ["./scaler", "{endpoint}", "--once"]'
            if not more else 'run = "command"\n' + "\n".join(more))


@pytest.fixture
def rig_dir(tmp_path, scaler_bin) -> Path:
    (tmp_path / "scaler").write_bytes(scaler_bin.read_bytes())
    (tmp_path / "scaler").chmod(0o755)
    return tmp_path


def _scaler_pids(pid: int) -> list[int]:
    """The scaler processes among pid's descendants."""
    out = []
    for p in children_of(pid):
        try:
            argv0 = Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if argv0.endswith(b"/scaler"):
            out.append(p)
    return out


def _summary(out: Path) -> dict:
    return json.loads((out / "summary.json").read_text())


def test_the_c_component_started_by_the_rig_gives_its_python_twins_digest(rig_dir):
    out = rig_dir / "c-out"
    proc = moonpool("run", str(_rig(rig_dir, "c", _command(rig_dir))), "--out", str(out),
                    "--quiet", timeout=60)
    assert proc.returncode == 0, proc.stderr
    c = _summary(out)
    assert c["components"]["scaler"]["placement"] == "command"
    assert c["components"]["scaler"]["steps"] == 100
    assert "scaler: serving c:Scaler on ipc://" in (out / "logs" / "scaler.log").read_text()
    twin_out = rig_dir / "twin-out"
    proc = moonpool("run", str(_rig(rig_dir, "twin", 'entry = "c_scaler_twin:Scaler"')),
                    "--out", str(twin_out), "--quiet", timeout=60)
    assert proc.returncode == 0, proc.stderr
    twin = _summary(twin_out)
    assert twin["components"]["scaler"]["placement"] == "inproc"
    assert (twin["digest"], twin["messages"], twin["metrics"]) == (
        c["digest"], c["messages"], c["metrics"])


def test_check_asks_the_command_and_refuses_a_misspelt_parameter(rig_dir):
    rig = _rig(rig_dir, "check", _command(rig_dir))
    before = set(children_of(os.getpid()))
    proc = moonpool("check", str(rig), timeout=60)
    assert proc.returncode == 0, proc.stderr
    proc = moonpool("check", str(rig), "--set", "components.scaler.parameters.gian=1",
                    "--set", "components.scaler.parameters.every=1.5",
                    "--set", 'plots[0].series=["scaler.out:signals[a].vlaue"]',
                    "--set", 'connections[0].to="scaler.input"', timeout=60)
    assert proc.returncode == 2, proc.stderr
    for words in ("components.scaler.parameters.gian", "unknown parameter 'gian'",
                  "did you mean 'gain'", "parameter 'every' expects an integer",
                  "plots[0].series[0]", "vlaue", "has no input port 'input'"):
        assert words in proc.stderr, (words, proc.stderr)
    assert set(children_of(os.getpid())) <= before  # the component was stopped


def test_check_reports_a_command_that_does_not_start(rig_dir):
    rig = _rig(rig_dir, "nostart", _command(
        rig_dir, 'command = ["./no_such_program", "{endpoint}"]'))
    proc = moonpool("check", str(rig), timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "components.scaler.command" in proc.stderr and "cannot start" in proc.stderr


def test_killing_it_mid_run_fails_the_run_and_leaves_nothing(rig_dir):
    # A helper forked into the component's process group must die with the run too.
    placement = _command(rig_dir, 'command = ["sh", "-c", "sleep 300 & echo $! > helper.pid; '
                         'exec ./scaler {endpoint} --once"]')
    rig = _rig(rig_dir, "kill", placement, until="60s", extra="realtime = true")
    out = rig_dir / "kill-out"
    run = subprocess.Popen(
        [sys.executable, "-m", "moonpool.orchestrator.cli", "run", str(rig), "--out", str(out),
         "--quiet"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        log = out / "logs" / "scaler.log"
        for _ in range(300):  # the component serves (its first line), then is stepped
            if log.exists() and "serving" in log.read_text():
                break
            time.sleep(0.05)
        time.sleep(0.5)
        helper = int((rig_dir / "helper.pid").read_text())
        scaler = _scaler_pids(run.pid)
        assert len(scaler) == 1 and alive(helper)
        os.kill(scaler[0], signal.SIGKILL)
        _, stderr = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 1, stderr
    summary = _summary(out)
    assert summary["status"] == "failed" and summary["failed_component"] == "scaler"
    assert "killed by SIGKILL" in summary["error"]
    assert not alive(scaler[0]) and not alive(helper)


def test_killed_between_steps_it_is_named_at_the_next_heartbeat(rig_dir):
    # Steps 5 s apart; heartbeats every 0.2 s; peer timeout 10 s: the death must be
    # reported as a crash (the process is gone), not as a connection lost 10 s later.
    rig = _rig(rig_dir, "between", _command(rig_dir), until="60s",
               extra='realtime = true\nheartbeat_interval = "0.2s"')
    text = rig.read_text().replace('peer_timeout = "2s"', 'peer_timeout = "10s"')
    rig.write_text(text.replace("rate_hz = 50", "rate_hz = 0.2"))
    out = rig_dir / "between-out"
    run = subprocess.Popen(
        [sys.executable, "-m", "moonpool.orchestrator.cli", "run", str(rig), "--out", str(out),
         "--quiet"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        log = out / "logs" / "scaler.log"
        for _ in range(300):
            if log.exists() and "serving" in log.read_text():
                break
            time.sleep(0.05)
        time.sleep(1.0)  # configured, initialized, stepped at 0 s; the next step at 5 s
        scaler = _scaler_pids(run.pid)
        assert len(scaler) == 1
        os.kill(scaler[0], signal.SIGKILL)
        _, stderr = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    summary = _summary(out)
    assert run.returncode == 1 and summary["failed_component"] == "scaler", stderr
    assert "killed by SIGKILL" in summary["error"], summary["error"]
    assert summary["components"]["scaler"]["steps"] == 1


def test_the_orchestrator_killed_takes_the_command_with_it(rig_dir):
    rig = _rig(rig_dir, "orphan", _command(rig_dir), until="60s",
               extra="realtime = true")
    out = rig_dir / "orphan-out"
    run = subprocess.Popen(
        [sys.executable, "-m", "moonpool.orchestrator.cli", "run", str(rig), "--out", str(out),
         "--quiet"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        log = out / "logs" / "scaler.log"
        for _ in range(300):
            if log.exists() and "serving" in log.read_text():
                break
            time.sleep(0.05)
        scaler = _scaler_pids(run.pid)
        assert len(scaler) == 1
    finally:
        run.kill()
        run.wait()
    for _ in range(100):  # the kernel delivers the parent-death signal at once
        if not alive(scaler[0]):
            break
        time.sleep(0.05)
    assert not alive(scaler[0]), "the command outlived the orchestrator"


@pytest.mark.parametrize("placement, key, words", [
    ('run = "command"', "components.scaler.command", "missing"),
    ('run = "command"\ncommand = []', "components.scaler.command", "non-empty list"),
    ('run = "command"\ncommand = ["./scaler"]', "components.scaler.command",
     "no argument holds {endpoint}"),
    ('run = "command"\ncommand = ["./scaler", "{endpoint}", "{port}"]',
     "components.scaler.command[2]", "unknown placeholder {port}"),
    ('run = "command"\ncommand = ["./scaler", "{endpoint}", "{parameters.gian}"]',
     "components.scaler.command[2]", "parameter 'gian', which the rig does not set"),
    ('run = "command"\ncommand = ["./scaler", "{endpoint"]', "components.scaler.command[1]",
     "'{endpoint'"),
    ('run = "command"\ncommand = ["./scaler", "{endpoint}"]\ncwd = ".."',
     "components.scaler.cwd", "outside the rig file's folder"),
    ('run = "command"\ncommand = ["./scaler", "{endpoint}"]\nenv = { N = 1 }',
     "components.scaler.env.N", "expected a string"),
    ('entry = "c_scaler_twin:Scaler"\ncommand = ["./scaler", "{endpoint}"]',
     "components.scaler.command", 'is only used with run = "command"'),
])
def test_rig_file_mistakes_in_a_command_are_named(tmp_path, placement, key, words):
    from moonpool.components.sdk.errors import RigValidationError
    from moonpool.orchestrator.rigfile import load_rig

    with pytest.raises(RigValidationError) as err:
        load_rig(_rig(tmp_path, "bad", placement))
    text = str(err.value)
    assert key in text and words in text, text


def test_placeholders_are_expanded(tmp_path):
    from moonpool.orchestrator.adapters.command import command_values, expand
    from moonpool.orchestrator.rigfile import load_rig

    rig = load_rig(_rig(tmp_path, "ok", 'run = "command"\ncommand = ["./scaler", '
                        '"--at={endpoint}", "{instance}", "{parameters.gain}", '
                        '"{{literal}}", "{seed}"]\nenv = { FRAME = "{parameters.frame_id}" }'))
    c = rig.components[1]
    values = {**command_values(c, rig.run.seed), "endpoint": "ipc://x"}
    assert [expand(a, values) for a in c.command] == [
        "./scaler", "--at=ipc://x", "scaler", "2", "{literal}", "7"]
    assert c.cwd == tmp_path.resolve() and dict(c.env) == {"FRAME": "{parameters.frame_id}"}
    assert expand(dict(c.env)["FRAME"], values) == "scaled"
