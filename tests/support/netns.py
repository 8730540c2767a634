"""Separate hosts on one machine: Linux network namespaces joined by veth pairs.

For the distributed-run tests and benchmarks (root, or CAP_NET_ADMIN, needed)::

    with Hosts(["b", "c"]) as hosts:        # "a" is the hub: the orchestrator's host
        hosts.addr("b")                     # 10.77.1.2, b's address as seen from a
        proc = hosts.popen("b", [sys.executable, "-m", ...])   # a process on host b
        hosts.link_down("b")                # pull b's cable (ip link set ... down)

Topology: a star. Host a has one veth pair to each other host; pair i joins
a (10.77.i.1/24) and host i (10.77.i.2/24). Only a can reach the others, as an
orchestrator on one machine and components on two others.

Names start with ``mpd<pid>-<n>`` (pid of the creating process); namespaces left by
a process that no longer exists are removed (with whatever still runs in them) by
``remove_stale()``, which ``Hosts`` calls first. Every process started with
``popen`` is killed and every namespace deleted on ``close()``.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

PREFIX = "mpd"
_STALE = re.compile(rf"^{PREFIX}(\d+)-\d+[a-z]$")
_counter = itertools.count(1)


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=20)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_in(ns: str) -> None:
    """SIGKILL every process in namespace ``ns`` (ours: the namespace is ours)."""
    out = _ip("netns", "pids", ns, check=False).stdout.split()
    for pid in out:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass


def remove_stale() -> list[str]:
    """Delete mpd* namespaces whose creating process is gone; returns their names."""
    removed = []
    listing = _ip("netns", "list", check=False).stdout
    for line in listing.splitlines():
        name = line.split()[0] if line.split() else ""
        m = _STALE.match(name)
        if m and not _alive(int(m.group(1))):
            _kill_in(name)
            _ip("netns", "del", name, check=False)
            removed.append(name)
    return removed


def unavailable() -> str:
    """Why namespaces cannot be made here ("" when they can)."""
    if os.geteuid() != 0:
        return "not root: network namespaces and veth pairs need root (CAP_NET_ADMIN)"
    probe = f"{PREFIX}{os.getpid()}-{next(_counter)}z"
    try:
        r = _ip("netns", "add", probe, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"cannot run `ip netns add`: {exc}"
    if r.returncode != 0:
        return f"`ip netns add` failed: {r.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return ""


class Hosts:
    """Namespace "a" (the hub) plus one namespace per name in ``others``, each joined to
    a by its own veth pair (see the module docstring)."""

    def __init__(self, others: Sequence[str] = ("b", "c")) -> None:
        remove_stale()
        self.tag = f"{PREFIX}{os.getpid()}-{next(_counter)}"
        self.others = list(others)
        self.procs: list[subprocess.Popen] = []
        self.namespaces: list[str] = []
        self._index = {h: i + 1 for i, h in enumerate(self.others)}
        try:
            for host in ["a", *self.others]:
                ns = self.ns(host)
                _ip("netns", "add", ns)
                self.namespaces.append(ns)
                _ip("-n", ns, "link", "set", "lo", "up")
            for host, i in self._index.items():
                hub_end, far_end = self.iface("a", host), self.iface(host, "a")
                _ip("link", "add", hub_end, "netns", self.ns("a"), "type", "veth",
                    "peer", "name", far_end, "netns", self.ns(host))
                _ip("-n", self.ns("a"), "addr", "add", f"10.77.{i}.1/24", "dev", hub_end)
                _ip("-n", self.ns(host), "addr", "add", f"10.77.{i}.2/24", "dev", far_end)
                _ip("-n", self.ns("a"), "link", "set", hub_end, "up")
                _ip("-n", self.ns(host), "link", "set", far_end, "up")
        except BaseException:
            self.close()
            raise

    # -- names -----------------------------------------------------------------

    def ns(self, host: str) -> str:
        return f"{self.tag}{host}"

    def iface(self, host: str, peer: str) -> str:
        """The interface on ``host`` that leads to ``peer`` (<= 15 characters)."""
        return f"{self.tag}{host}{peer}"

    def addr(self, host: str) -> str:
        """The address of ``host`` as seen from the hub a (for a: its address towards b)."""
        if host == "a":
            return "10.77.1.1"
        return f"10.77.{self._index[host]}.2"

    def hub_addr(self, host: str) -> str:
        """The hub's address as seen from ``host``."""
        return f"10.77.{self._index[host]}.1"

    # -- processes and links ----------------------------------------------------

    def popen(self, host: str, argv: Sequence[str], **kw) -> subprocess.Popen:
        """Start ``argv`` inside host's namespace (``ip netns exec`` execs it: the
        returned pid is the program's own)."""
        proc = subprocess.Popen(["ip", "netns", "exec", self.ns(host), *argv], **kw)
        self.procs.append(proc)
        return proc

    def run(self, host: str, argv: Sequence[str], **kw) -> subprocess.CompletedProcess:
        return subprocess.run(["ip", "netns", "exec", self.ns(host), *argv], **kw)

    def link_down(self, host: str) -> None:
        """Pull host's cable: its end of the veth pair to the hub goes down."""
        _ip("-n", self.ns(host), "link", "set", self.iface(host, "a"), "down")

    def link_up(self, host: str) -> None:
        _ip("-n", self.ns(host), "link", "set", self.iface(host, "a"), "up")

    def pids(self, host: str) -> list[int]:
        """Processes running in host's namespace now."""
        return [int(p) for p in _ip("netns", "pids", self.ns(host), check=False).stdout.split()]

    # -- teardown ----------------------------------------------------------------

    def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        for ns in self.namespaces:
            _kill_in(ns)
        for ns in reversed(self.namespaces):
            for _ in range(20):  # a namespace is busy while a killed process is exiting
                if _ip("netns", "del", ns, check=False).returncode == 0:
                    break
                time.sleep(0.05)
        self.namespaces = []

    def __enter__(self) -> Hosts:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def wait_for_line(path: Path, text: str, timeout_s: float, proc: subprocess.Popen | None = None
                  ) -> str:
    """Wait until the file at ``path`` contains ``text``; returns that line. Raises
    TimeoutError (or RuntimeError when ``proc`` exits first), quoting the file."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        content = path.read_text(errors="replace") if path.exists() else ""
        for line in content.splitlines():
            if text in line:
                return line
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode}; {path}:\n{content}")
        time.sleep(0.05)
    content = path.read_text(errors="replace") if path.exists() else "(no file)"
    raise TimeoutError(f"no {text!r} in {path} after {timeout_s} s:\n{content}")
