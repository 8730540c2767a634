"""ProcessAdapter: a component in a child process the orchestrator spawns and supervises.

The child runs the SDK's serve loop (``python -m moonpool.components.sdk.serve ENTRY
--bind ipc://... --once``) in its own session (Ctrl-C reaches only the
orchestrator, which then shuts the children down in order). No orphans:

- normal end and failures: ``close()`` waits for the child to exit after Terminate,
  then sends SIGTERM, then SIGKILL;
- the orchestrator dies (even by SIGKILL): the child asked Linux for
  PR_SET_PDEATHSIG = SIGKILL, and also ends when it hears nothing for its peer timeout.

The child's stderr goes to ``log_path`` (``logs/NAME.log`` in the run folder); its
last lines are quoted when it crashes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from moonpool.components.sdk import wire
from moonpool.components.sdk.errors import ComponentCrashed
from moonpool.components.sdk.localroutes import LocalRoute

from .remote import RemoteAdapter


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


class ProcessAdapter(RemoteAdapter):
    placement = "process"
    wait_for_exit = True
    """close() first waits up to 2 s for the child to exit by itself (after Terminate);
    False: SIGTERM at once (a child only asked Describe, by `moonpool check`)."""

    def __init__(
        self,
        name: str,
        entry: str | dict[str, str],
        endpoint: str,
        *,
        base_dir: Path,
        log_path: Path | None = None,
        realtime_priority: int = 0,
        local_routes: Sequence[LocalRoute] = (),
        temp_dir: Path | None = None,
        **kwargs,
    ) -> None:
        """``entry`` is one ENTRY, or {instance: ENTRY} for a process group (see group.py);
        ``realtime_priority`` 1-99: the child steps as a SCHED_FIFO process of that
        priority (``serve --realtime-priority``; real-time runs, docs/realtime.md);
        ``local_routes``: a group's connections its child delivers itself (group.py);
        ``temp_dir``: the child's TMPDIR (created here), a folder of the run that the
        orchestrator removes, so what the child unpacks there (an FMU) goes with the run
        even when the child crashes or is killed."""
        self.entry = entry
        self.log_path = log_path
        self._log: IO[bytes] | None = None
        if isinstance(entry, dict):
            what = [f"--component={n}={e}" for n, e in entry.items()]
        else:
            what = [entry]
        cmd = [
            sys.executable,
            "-m",
            "moonpool.components.sdk.serve",
            *what,
            "--bind",
            endpoint,
            "--once",
            "--parent-pid",
            str(os.getpid()),
            "--base-dir",
            str(base_dir),
            "--unconfined",  # its parameters come from the rig on this machine
            "--max-message-bytes",
            str(kwargs.get("max_message_bytes", wire.DEFAULT_MAX_MESSAGE_BYTES)),
        ]
        if realtime_priority:
            cmd += ["--realtime-priority", str(realtime_priority)]
        self.local_routes = tuple(local_routes)
        cmd += [f"--local-route={r.text()}" for r in self.local_routes]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
        env.setdefault("PYTHONUNBUFFERED", "1")
        if temp_dir is not None:
            temp_dir.mkdir(parents=True, exist_ok=True)
            env["TMPDIR"] = str(temp_dir)
        self._spawn(cmd, env=env)
        super().__init__(name, endpoint, **kwargs)

    def _spawn(self, cmd: list[str], *, env: dict[str, str], cwd: Path | None = None,
               preexec_fn=None) -> None:
        """Start ``cmd`` in its own session (so its own process group), output to the log."""
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = open(self.log_path, "ab")
        try:
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=self._log or None,
                stderr=self._log or None,
                start_new_session=True,
                env=env,
                cwd=cwd,
                preexec_fn=preexec_fn,
            )
        except BaseException:
            if self._log is not None:
                self._log.close()
                self._log = None
            raise

    def _where(self) -> str:
        return f"process {self.proc.pid}"

    def supervise(self) -> None:
        code = self.proc.poll()
        if code is None:
            return
        self.failed = True
        how = f"was killed by {_signal_name(code)}" if code < 0 else f"exited with code {code}"
        tail = self._log_tail()
        raise ComponentCrashed(
            f"process {self.proc.pid} {how}" + (f"; its log ends:\n{tail}" if tail else ""),
            component=self.name,
            fix=f"see {self.log_path}" if self.log_path else "see the component's output above",
        )

    def _log_tail(self, lines: int = 8) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        try:
            text = self.log_path.read_text(errors="replace").rstrip().splitlines()
        except OSError:
            return ""
        return "\n".join("    " + line for line in text[-lines:])

    def close(self) -> None:
        super().close()
        # A healthy child exits by itself after Terminate; a failed one (hung, or
        # already broken) gets a short SIGTERM grace so a run ends promptly.
        if self.proc.poll() is None and not self.failed and self.wait_for_exit:
            deadline = time.monotonic() + 2.0
            while self.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
        grace = 0.3 if self.failed else 1.0
        for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
            if self.proc.poll() is not None:
                break
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(wait)
            except subprocess.TimeoutExpired:
                continue
        self._kill_leftovers()
        if self._log is not None:
            self._log.close()
            self._log = None

    def _kill_leftovers(self) -> None:
        """What the child started and left in its process group (none for the SDK's
        serve loop; a foreign command may fork helpers): SIGKILL to the group. The
        leader has been reaped; Linux does not reuse its pid while the group has
        members, so the group id still names them."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
