"""Component servers for the tests that play a hostile or broken peer (issue 24):
`moonpool serve` as a real process, and the SDK's serve loop in a thread with its
replies rewritten on their way out.

- :func:`serve_process` starts ``moonpool serve ENTRY --bind tcp://127.0.0.1:*`` with its
  log in a file and returns once it listens (its endpoint read from the log);
- :class:`Rewriting` stands in for a server's ROUTER socket: every reply it sends passes
  through ``rewrite(reply, frames)``, which returns the frames to send instead (or
  None to send nothing): a peer that lies, garbles or falls silent;
- :func:`serving` runs a :class:`~moonpool.components.sdk.serve.Server` in a thread for
  the duration of a ``with`` block.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import zmq

from moonpool.components.sdk import wire
from moonpool.v1 import lifecycle_pb2 as lc

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class ServeProcess:
    proc: subprocess.Popen
    endpoint: str
    log: Path

    def close(self) -> str:
        """Stop the server; its log."""
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.log.read_text()


def serve_process(folder: Path, entry: str, *options: str) -> ServeProcess:
    """``moonpool --log-level INFO serve ENTRY --bind tcp://127.0.0.1:* OPTIONS``, its
    output in folder/serve.log; returns when it serves."""
    log = folder / "serve.log"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")])
    with open(log, "w") as f:
        proc = subprocess.Popen(
            [sys.executable, "-m", "moonpool.orchestrator.cli", "--log-level", "INFO", "serve",
             entry, "--bind", "tcp://127.0.0.1:*", *options],
            cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while "serving" not in log.read_text():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(log.read_text())
        time.sleep(0.05)
    line = next(x for x in log.read_text().splitlines() if "serving" in x)
    return ServeProcess(proc, line.split(" on ", 1)[1].split(" ", 1)[0], log)


Rewrite = Callable[[lc.Reply, list], "list | None"]


class Rewriting:
    """A server's ROUTER socket whose replies go through ``rewrite`` (module docstring)."""

    def __init__(self, sock: zmq.Socket, rewrite: Rewrite) -> None:
        self._sock, self._rewrite = sock, rewrite

    def __getattr__(self, name: str):
        return getattr(self._sock, name)

    def send_multipart(self, frames, copy=True):
        frames = self._rewrite(lc.Reply.FromString(bytes(frames[-1])), list(frames))
        if frames is None:
            return None
        return self._sock.send_multipart(frames, copy=copy)


def replaced(frames: list, reply: lc.Reply, *attachments: bytes) -> list:
    """``frames`` with the envelope replaced by ``reply`` (and the attachments added)."""
    return [*frames[:-1], wire.serialize(reply), *attachments]


@contextlib.contextmanager
def serving(factory, rewrite: Rewrite | None = None) -> Iterator:
    """The SDK's serve loop for ``factory`` on a loopback port, in a thread; with
    ``rewrite``, its replies rewritten. Yields the Server (``bound_endpoint``)."""
    from moonpool.components.sdk.serve import Server

    server = Server(factory, "tcp://127.0.0.1:*", context=zmq.Context())
    if rewrite is not None:
        server.sock = Rewriting(server.sock, rewrite)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop()
        thread.join(5)


def run_against(server, rig_text: str, folder: Path) -> dict:
    """Run the rig ``rig_text`` (``{endpoint}`` replaced by the server's) into
    folder/out; its summary."""
    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    rig = folder / "rig.toml"
    rig.write_text(rig_text.replace("{endpoint}", server.bound_endpoint))
    return run_rig(load_and_check(rig), folder / "out").summary
