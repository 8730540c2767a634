"""`moonpool serve` says when a session starts and ends (issue 22), so whoever watches
a served component knows an orchestrator is driving it."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from conftest import RIGS, ROOT, moonpool


def test_serve_logs_session_start_and_end(tmp_path):
    endpoint = f"ipc://{tmp_path}/pressure.sock"
    server = subprocess.Popen(
        [sys.executable, "-m", "moonpool.orchestrator.cli", "serve", "quickstart.pressure",
         "--bind", endpoint, "--once"], cwd=ROOT, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ))
    try:
        deadline = time.time() + 30
        while not (tmp_path / "pressure.sock").exists() and time.time() < deadline:
            time.sleep(0.05)
        proc = moonpool("run", str(RIGS / "quickstart.toml"), "--until", "1", "--quiet",
                        "--out", str(tmp_path / "out"), "--set", "components.sensor.run=remote",
                        "--set", f'components.sensor.endpoint="{endpoint}"')
        assert proc.returncode == 0, proc.stderr
        _, err = server.communicate(timeout=30)
    finally:
        server.kill()
    assert "session 1 started: sensor configured by an orchestrator" in err, err
    assert "session 1 ended after" in err and "terminated" in err, err
    assert err.index("started") < err.index("ended")
