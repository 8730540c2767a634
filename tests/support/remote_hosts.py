"""Helpers of the distributed-run tests and benchmark (named so as not to shadow the
PyPI `distributed` package that sweeps use): keys, component servers on
namespace hosts, rig overrides that move components there."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from netns import Hosts, wait_for_line

from moonpool.components.sdk.security import generate_keys

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Keys:
    """One key pair per host name plus the orchestrator's, in ``folder``."""

    folder: Path

    def public(self, name: str) -> Path:
        return self.folder / f"{name}.key"

    def secret(self, name: str) -> Path:
        return self.folder / f"{name}.key_secret"


def make_keys(folder: Path, names: list[str]) -> Keys:
    for name in names:
        generate_keys(name, folder, force=True)
    return Keys(folder)


@dataclass
class Served:
    proc: subprocess.Popen
    endpoint: str
    log: Path


def serve(hosts: Hosts, host: str, entry: str, port: int, log_dir: Path, *,
          keys: Keys | None = None, client: str = "orchestrator", once: bool = False,
          base_dir: Path = ROOT / "rigs", extra: list[str] = (), wait_s: float = 60.0) -> Served:
    """``moonpool serve ENTRY`` on ``host`` at its address, port ``port``, with its key pair
    (named after the host) allowing ``client``'s public key; waits until it listens."""
    bind = f"tcp://{hosts.addr(host)}:{port}"
    argv = [sys.executable, "-m", "moonpool.orchestrator.cli", "--log-level", "INFO", "serve",
            entry, "--bind", bind,
            "--base-dir", str(base_dir), "--confine", str(ROOT)]  # rigs name ../fmus, ../scenes
    if keys is not None:
        argv += ["--key", str(keys.secret(host)), "--allow", str(keys.public(client))]
    else:
        argv += ["--insecure"]
    if once:
        argv.append("--once")
    argv += list(extra)
    log = log_dir / f"serve-{host}-{port}.log"
    log_dir.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as f:
        proc = hosts.popen(host, argv, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT)
    return Served(proc, bind, log)


def wait_serving(*served: Served, timeout_s: float = 60.0) -> None:
    for s in served:
        wait_for_line(s.log, "serving ", timeout_s, s.proc)


def remote_overrides(name: str, endpoint: str, keys: Keys | None, host: str,
                     client: str = "orchestrator") -> list[str]:
    """``--set`` texts that move rig component ``name`` to ``endpoint``."""
    sets = [f"components.{name}.run=remote", f"components.{name}.endpoint={endpoint}"]
    if keys is not None:
        sets += [f"components.{name}.server_key={keys.public(host)}",
                 f"components.{name}.client_key={keys.secret(client)}"]
    else:
        sets += [f"components.{name}.insecure=true"]
    out = []
    for s in sets:
        out += ["--set", s]
    return out


def stop(*served: Served) -> None:
    """End servers started by ``serve`` (SIGTERM: they terminate their session first)."""
    for s in served:
        if s.proc.poll() is None:
            s.proc.terminate()
    for s in served:
        try:
            s.proc.wait(10)
        except subprocess.TimeoutExpired:
            s.proc.kill()
            s.proc.wait(5)
