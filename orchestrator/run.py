"""One run, end to end: adapters, execution, recording, summary.json and plots.

Call order::

    result = run_rig(rig, out_dir)      never raises for a failed run: the failure is
                                        in result.summary["status"/"error"]
    result.exit_code                    0 ok, 1 failed (DESIGN.md / the CLI)

Whatever happens after the recording is opened — a component raising, hanging or
dying, Ctrl-C, SIGTERM — the components are shut down (no orphan processes), the
recording is closed readable, and summary.json says what happened.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq

from moonpool.components.sdk.errors import (
    ComponentError,
    Interrupted,
    MoonpoolError,
    RecordingFailed,
    RigError,
    SimulationError,
    StepTimeout,
)
from moonpool.components.sdk.loading import load_entry
from moonpool.components.sdk.scheduling import fifo_allowed, fifo_io_threads
from moonpool.components.sdk.security import ClientSecurity, leaves_loopback

from . import summary as summary_mod
from .adapters.base import Adapter
from .adapters.group import GroupMember, ProcessGroup, local_routes
from .adapters.inprocess import InProcessAdapter, abandon_stuck_steps
from .adapters.command import CommandAdapter, command_values
from .adapters.process import ProcessAdapter
from .adapters.remote import RemoteAdapter
from .adapters.replay import ReplayAdapter
from .execution import Execution
from .realtime import IDLE_SLICE_S, Pacer, verdict, verdict_line
from .recording import INITIALIZE_METADATA, Digest, DiskReserve, Recorder
from .rig import Rig

log = logging.getLogger("moonpool.run")


class RunObserver:
    """Feeds every message to the digest and, when recording, to the MCAP file (and,
    with ``--live``, to the live view)."""

    def __init__(self, recorder: Recorder | None, exclude: Iterable[str] = (),
                 live: Any = None) -> None:
        self.recorder = recorder
        self.live = live  # orchestrator/live.py LiveView, or None (--live)
        self._live: list[int] = []
        self.digest = Digest()
        # Bound once: write() runs for every message of the run.
        self._hash = self.digest.update_prefixed
        self._record = recorder.write if recorder is not None else None
        self._topics: list[tuple[bytes, int]] = []  # (digest prefix, recorder channel)
        # run.record_exclude: COMPONENT.PORT -> topic /COMPONENT/PORT (hashed, not written)
        self._exclude = {"/" + ref.replace(".", "/", 1) for ref in exclude}
        if live is not None:  # without --live, write() has no live-view code at all
            self.write = self._write_live  # type: ignore[method-assign]

    def add_topic(self, topic: str, type_name: str, extra_schemas: bytes = b"") -> int:
        recorded = self.recorder is not None and topic not in self._exclude
        channel = self.recorder.add_topic(topic, type_name, extra_schemas) if recorded else -1
        self._topics.append((Digest.topic_prefix(topic), channel))
        if self.live is not None:
            self._live.append(self.live.add_topic(topic, type_name, extra_schemas))
        return len(self._topics) - 1

    def idle(self, now: float) -> None:
        """While the run waits: the recorder writes out its open chunk when due."""
        if self.recorder is not None:
            self.recorder.idle(now)

    def write(self, index: int, log_time_ns: int, payload: bytes, attachment: Any = None) -> None:
        prefix, channel = self._topics[index]
        self._hash(prefix, log_time_ns, payload, attachment)
        if channel >= 0:
            self._record(channel, log_time_ns, payload, None, attachment)

    def _write_live(self, index: int, log_time_ns: int, payload: bytes,
                    attachment: Any = None) -> None:
        """``write`` with the live view on: the same, then the message to the viewer."""
        RunObserver.write(self, index, log_time_ns, payload, attachment)
        self.live.write(self._live[index], log_time_ns, payload, attachment)


@dataclass
class RunResult:
    summary: dict[str, Any]
    out_dir: Path

    @property
    def ok(self) -> bool:
        """Ended well: ran to the end, or a component ended it (status "terminated")."""
        return self.summary["status"] in ("ok", "terminated")

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1


def realtime_context(rig: Rig) -> zmq.Context | None:
    """For a real-time run at SCHED_FIFO N (``run.realtime_priority``): a ZeroMQ context
    of its own whose I/O threads run at N too (the caller destroys it after the run);
    None otherwise, or where SCHED_FIFO is not allowed (the pacer warns)."""
    priority = rig.run.realtime_priority if rig.run.realtime else 0
    if not priority or not fifo_allowed(priority):
        return None
    ctx = zmq.Context()
    fifo_io_threads(ctx, priority)
    return ctx


def child_priorities(rig: Rig, priority: int) -> dict[str, int]:
    """The SCHED_FIFO priority of each component in a child process (``run =
    "process"``, a process group's members sharing theirs) of a real-time run whose
    stepping thread runs at ``priority``: rate-monotonic below it — N - 1 for the
    children whose fastest component has the highest rate, N - 2 for the next rate,
    and so on, never below 1 — so that a fast child's step is not held up behind a
    slow child's long one on a busy core (two FIFO threads of one priority do not
    preempt each other). Empty for ``priority`` 0."""
    if not priority:
        return {}
    rate: dict[str, Any] = {}  # child (component or "group:NAME") -> its fastest rate
    child_of: dict[str, str] = {}
    for c in rig.components:
        if c.placement == "process":
            key = f"group:{c.group}" if c.group else c.name
            child_of[c.name] = key
            rate[key] = max(rate.get(key, c.schedule.rate_hz), c.schedule.rate_hz)
    ranks = {r: i for i, r in enumerate(sorted(set(rate.values()), reverse=True))}
    return {name: max(1, priority - 1 - ranks[rate[key]]) for name, key in child_of.items()}


def build_adapters(rig: Rig, sock_dir: Path, log_dir: Path | None,
                   context: zmq.Context | None = None) -> dict[str, Adapter]:
    """One adapter per component; child processes are spawned here (in parallel).
    ``context``: the ZeroMQ context of the run (default: the process's shared one).
    ``sock_dir``: the run's folder of ipc sockets and of its children's temporary
    files (``tmpN``, their TMPDIR); the caller removes it after the run."""
    adapters: dict[str, Adapter] = {}
    ctx = context or zmq.Context.instance()
    # Real time at SCHED_FIFO N: the components' child processes step below the
    # stepping thread (rate-monotonic: N - 1 for the fastest, child_priorities), above
    # everything else, and their ZeroMQ I/O threads too, so a loaded machine delays
    # neither their work nor their messages (docs/realtime.md "Priorities").
    priority = rig.run.realtime_priority if rig.run.realtime else 0
    fifo = child_priorities(rig, priority) if priority and fifo_allowed(priority) else {}
    groups: dict[str, ProcessGroup] = {}
    routes = local_routes(wired_rig(rig))
    try:
        for i, c in enumerate(rig.components):
            common = dict(
                step_timeout_ns=c.step_timeout_ns,
                setup_timeout_ns=c.setup_timeout_ns,
                heartbeat_interval_ns=rig.run.heartbeat_interval_ns,
                peer_timeout_ns=rig.run.peer_timeout_ns,
                max_message_bytes=rig.run.max_message_bytes,
                context=ctx,
            )
            if c.placement == "replay":
                assert c.recording is not None
                adapters[c.name] = ReplayAdapter(
                    c.name, c.recording, c.source, algorithm=rig.run.algorithm,
                    schedule=c.schedule,
                )
            elif c.placement == "inproc":
                cls = load_entry(c.entry, c.base_dir)
                adapters[c.name] = InProcessAdapter(
                    c.name, cls(), step_timeout_ns=c.step_timeout_ns, base_dir=c.base_dir
                )
            elif c.placement == "process" and c.group:
                group = groups.get(c.group)
                if group is None:
                    members = [m for m in rig.components
                               if m.placement == "process" and m.group == c.group]
                    conn = ProcessAdapter(
                        f"group:{c.group}", {m.name: m.entry for m in members},
                        f"ipc://{sock_dir}/g{i}.sock", base_dir=c.base_dir,
                        log_path=(log_dir / f"group-{c.group}.log") if log_dir else None,
                        realtime_priority=fifo.get(c.name, 0), temp_dir=sock_dir / f"tmp{i}",
                        local_routes=[r for r in routes if r.target in {m.name for m in members}],
                        **{**common, "step_timeout_ns": max(m.step_timeout_ns for m in members),
                           "setup_timeout_ns": max(m.setup_timeout_ns for m in members)},
                    )
                    group = groups[c.group] = ProcessGroup(c.group, conn, [m.name for m in members])
                adapters[c.name] = GroupMember(c.name, group, step_timeout_ns=c.step_timeout_ns)
            elif c.placement == "command":
                adapters[c.name] = CommandAdapter(
                    c.name, c.command, f"ipc://{sock_dir}/{i}.sock",
                    cwd=c.cwd or c.base_dir, env=dict(c.env),
                    values=command_values(c, rig.run.seed),
                    log_path=(log_dir / f"{c.name}.log") if log_dir else None, **common,
                )
            elif c.placement == "process":
                adapters[c.name] = ProcessAdapter(
                    c.name, c.entry, f"ipc://{sock_dir}/{i}.sock", base_dir=c.base_dir,
                    log_path=(log_dir / f"{c.name}.log") if log_dir else None,
                    realtime_priority=fifo.get(c.name, 0), temp_dir=sock_dir / f"tmp{i}",
                    **common,
                )
            else:
                security = (ClientSecurity.from_files(c.server_key, c.client_key)
                            if c.server_key and c.client_key else None)
                adapters[c.name] = RemoteAdapter(c.name, c.endpoint, security=security, **common)
    except BaseException:
        for a in adapters.values():
            a.close()
        for g in groups.values():
            g.conn.close()
        raise
    return adapters


def wired_rig(rig: Rig) -> Rig:
    """The rig the execution wires: connections into a replayed component are left out
    (a replay ignores its inputs; their sources still run and are recorded)."""
    replays = {c.name for c in rig.components if c.placement == "replay"}
    if not replays:
        return rig
    kept = tuple(c for c in rig.connections if c.target not in replays)
    for c in rig.connections:
        if c.target in replays:
            log.info("not wired: %s (%s is a replay and ignores its inputs)", c, c.target)
    return dataclasses.replace(rig, connections=kept)


def make_pacer(rig: Rig, adapters: dict[str, Adapter],
               sleep: Callable[[float], Any] = time.sleep,
               recorder: Recorder | None = None) -> Pacer | None:
    """The real-time pacer of the rig (``run.realtime``), or None to run flat out.
    ``sleep``: how the pacer waits (the execution's ``wait`` collects replies meanwhile);
    ``recorder``: its writer thread starts jobs only while the pacer sleeps."""
    if rig.run.realtime is None:
        return None

    def idle() -> None:  # heartbeats while a slow factor sleeps long
        now = time.monotonic()
        for a in adapters.values():
            a.keepalive(now)

    period = min(c.schedule.nominal_period_ns for c in rig.components)
    # Sleep at most a quarter heartbeat interval between keepalives, so a connection
    # silent for the interval gets its heartbeat within 1.25 intervals, however slow
    # the factor (peer_timeout only has to exceed the interval).
    slice_s = min(IDLE_SLICE_S, rig.run.heartbeat_interval_ns * 0.25e-9)
    return Pacer(rig.run.realtime, rig.run.overrun, period_ns=max(period, 1), idle=idle,
                 idle_slice_s=slice_s, sleep=sleep, priority=rig.run.realtime_priority,
                 spin_ns=rig.run.realtime_spin_ns,
                 writer_slack=recorder.queue.slack if recorder is not None else None)


def insecure_components(rig: Rig) -> list[str]:
    """Remote components reached without keys over a network (``insecure = true``)."""
    return [c.name for c in rig.components
            if c.placement == "remote" and not c.server_key and leaves_loopback(c.endpoint)]


def _realtime_summary(rig: Rig, pacer: Pacer | None) -> dict[str, Any] | None:
    """summary.json ``realtime``: the pacer's figures and the verdict against
    ``run.realtime_tolerance`` (default: one period of the fastest component)."""
    if pacer is None:
        return None
    tolerance = rig.run.realtime_tolerance_ns or pacer.period_wall_ns
    return {**pacer.summary(), **verdict(pacer.lateness, tolerance),
            "strict": rig.run.realtime_strict}


def _sigint(handler: Any) -> None:
    """Set the SIGINT handler (nothing when not on the main thread)."""
    try:
        signal.signal(signal.SIGINT, handler)
    except ValueError:
        pass


def _draw_plots(rig: Rig, out_dir: Path, recording: Path | None, pacer: Pacer | None,
                summary: dict[str, Any]) -> None:
    """The PNG plots (from the recording, and the pacer's lateness); appended to
    ``summary["plots"]`` as they are written. Only KeyboardInterrupt escapes."""
    if recording is not None:
        try:
            from .plots import make_plots

            paths = make_plots(recording, out_dir / "plots", rig.plots)
            summary["plots"] += [str(p.relative_to(out_dir)) for p in paths]
        except Exception as exc:  # noqa: BLE001 - plots must never lose a run
            log.warning("plotting failed: %s", exc)
    if pacer is not None and len(pacer.lateness):
        try:
            path = pacer.plot(out_dir / "plots" / "realtime_lateness.png")
            summary["plots"].append(str(path.relative_to(out_dir)))
        except Exception as exc:  # noqa: BLE001
            log.warning("plotting the lateness failed: %s", exc)


def _write_summary(path: Path, summary: dict[str, Any], say: Callable[[str], None]) -> bool:
    """Write summary.json; on a file-system error say why, once, and return False."""
    try:
        summary_mod.write_summary(path, summary)
    except OSError as exc:
        path.with_name(path.name + ".tmp").unlink(missing_ok=True)
        say(f"error: summary.json could not be written into {path.parent}: "
            f"{exc.strerror or exc}")
        return False
    return True


def _on_sigterm(signum: int, frame: Any) -> None:
    raise Interrupted("stopped by SIGTERM", fix="")


def run_rig(
    rig: Rig,
    out_dir: Path,
    *,
    progress: Callable[[int], None] | None = None,
    notify: Callable[[str], None] | None = None,
    live: Any = None,
    abandon_stuck: bool = False,
) -> RunResult:
    """Run a validated rig; write recording.mcap, summary.json and plots/ in out_dir.

    ``notify`` receives what a person waiting at the terminal should read (what a
    Ctrl-C does, that plots are being drawn); default: the log at WARNING level.

    ``abandon_stuck`` (the command line's runs): an in-process step stuck in native
    code (an FMU's doStep that never returns: neither its step timeout nor Ctrl-C can
    interrupt it) is abandoned a second after its deadline: the stream, the other
    components and the recording are closed and summary.json written (status
    "failed", the StepTimeout) from the step watchdog's thread, which then **exits the
    process** with status 1 — this function does not return then. Without it such a
    run waits for the step, with a warning that says what to do.

    Interrupts: the first Ctrl-C (or SIGTERM) stops the run; the components are shut
    down, the recording closed and summary.json written (status "failed", ``error``
    "interrupted ...", ``interrupted`` true) **before** any plot is drawn, and again
    after the plots. A Ctrl-C while plotting skips the remaining plots (the summary
    says so); nothing an interrupt does can lose summary.json.
    """
    say = notify or (lambda text: log.warning("%s", text))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    recording_path = out_dir / "recording.mcap"
    recorder = None
    # Room for summary.json and the recording's end when the disk fills (nothing is
    # left on disk by it, whatever happens).
    reserve = DiskReserve(out_dir)
    opening: RecordingFailed | None = None
    if rig.run.record:
        try:
            recorder = Recorder(
                recording_path,
                metadata={"rig": rig.name, "seed": str(rig.run.seed),
                          "algorithm": rig.run.algorithm},
                foxglove_images=rig.run.foxglove_images,
            )
            recorder.add_attachment(rig.path.name, rig.source_text.encode(), "application/toml")
        except RecordingFailed as exc:
            opening = exc
    observer = RunObserver(recorder, rig.run.record_exclude, live)
    insecure = insecure_components(rig)
    for name in insecure:
        log.warning("INSECURE: component '%s' at %s is reached WITHOUT authentication or "
                    "encryption (insecure = true): anyone on that network can read the stream "
                    "and drive it; use server_key/client_key (docs/distributed.md)",
                    name, rig.component(name).endpoint)
    sock_dir = Path(tempfile.mkdtemp(prefix="moonpool-"))
    old_term = old_int = None
    try:
        old_term = signal.signal(signal.SIGTERM, _on_sigterm)
        # Explicitly, since a process started in the background by a shell inherits
        # SIGINT ignored, and Ctrl-C / `kill -INT` must still stop a run cleanly.
        old_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    except ValueError:  # not the main thread
        pass
    status, error, failed_component = "ok", None, None
    interrupted = False
    execution: Execution | None = None
    pacer: Pacer | None = None
    adapters: dict[str, Adapter] = {}
    wall0 = time.perf_counter()
    loop_wall = 0.0
    context = realtime_context(rig)
    loop0 = wall0

    def make_summary(status: str, error: str | None, failed_component: str | None,
                     interrupted: bool, shutdown_problems: list[str],
                     loop_wall: float) -> tuple[dict[str, Any], Any]:
        """summary.json's content, and the recording's failure (or None)."""
        wall = time.perf_counter() - wall0
        sim_ns = execution.time_ns if execution is not None else 0
        broken = recorder.failure if recorder is not None else None
        if status == "ok" and broken is not None:  # (its index could not be written)
            status, error = "failed", str(broken)
        if status == "ok" and shutdown_problems:
            status, error = "failed", "; ".join(shutdown_problems)
            failed_component = execution.shutdown_failed if execution is not None else None
        terminated = None
        if status == "ok" and execution is not None and execution.finished is not None:
            by, at_ns, why, finished_failed = execution.finished
            status = "terminated"
            terminated = {"component": by, "time_s": at_ns * 1e-9, "reason": why}
            if finished_failed:  # the component ended the run as a failure (a safe abort)
                status, error, failed_component = "failed", f"{by}: {why}", by
                terminated["failed"] = True
        components = {}
        for c in rig.components:
            a = adapters.get(c.name)
            steps = execution.by_name[c.name].steps if execution is not None else 0
            stats = summary_mod.step_stats_us(a.times.values() if a is not None else [])
            components[c.name] = {"steps": steps, **stats, "placement": c.placement}
            compute = getattr(a, "compute", None)
            if compute is not None and compute.count:  # its own step, as it reported it
                own = summary_mod.step_stats_us(compute.values())
                components[c.name].update({f"compute_{k}": v for k, v in own.items()})
            if a is not None and a.rejected:
                components[c.name]["rejected_frames"] = a.rejected
        summary = {
            "status": status,
            "error": error,
            "failed_component": failed_component,
            **({"terminated": terminated} if terminated else {}),
            "rig": rig.name,
            "seed": rig.run.seed,
            "algorithm": rig.run.algorithm,
            "sim_time_s": sim_ns * 1e-9,
            "wall_time_s": wall,
            "real_time_factor": (sim_ns * 1e-9 / wall) if wall > 0 else None,
            "loop_wall_time_s": loop_wall,
            "ticks": execution.ticks if execution is not None else 0,
            "messages": execution.messages if execution is not None else 0,
            "components": components,
            "metrics": execution.metrics if execution is not None else {},
            "digest": observer.digest.hexdigest(),
            "realtime": _realtime_summary(rig, pacer),
            "recording": recording_path.name if recorder is not None else None,
            "plots": [],
            "provenance": summary_mod.provenance(rig.path, rig.source_text),
        }
        if insecure:
            summary["insecure"] = insecure
        if execution is not None and getattr(execution, "t0_warnings", None):
            summary["warnings"] = list(execution.t0_warnings)  # t0 inputs that cannot be given
        rt = summary["realtime"]
        if rt and rt["verdict"] == "missed" and rig.run.realtime_strict and summary["status"] == "ok":
            summary["status"] = "failed"
            summary["error"] = (verdict_line(rt) + " (fix: the rig sets run.realtime_strict = "
                                "true or --strict-realtime was given: a missed deadline fails "
                                "the run)")
        if interrupted:
            summary["interrupted"] = True
        return summary, broken

    def close_all(ok: bool) -> list[str]:
        """Terminate (when ``ok``) and close every component, close the recording and
        the run's sockets; the problems met on the way."""
        shutdown_problems: list[str] = []
        if execution is not None:
            try:
                shutdown_problems = execution.shutdown(ok)
            except KeyboardInterrupt:
                for a in adapters.values():
                    a.close()
        else:
            for a in adapters.values():
                a.close()
        if context is not None:
            context.destroy(linger=0)
        if recorder is not None:
            if recorder.failure is not None:
                reserve.release()  # room for the end of the file
            recorder.close()  # never raises: a failed file ends at its last whole record
        reserve.release()
        shutil.rmtree(sock_dir, ignore_errors=True)
        return shutdown_problems

    def abandon(adapter: Adapter, late_s: float) -> None:
        """A step stuck in native code (``abandon_stuck``): end the run from the step
        watchdog's thread, as the main thread's failure path would, and exit."""
        try:
            adapter.failed = True
            exc = StepTimeout(
                f"step did not return within {adapter.step_timeout_s:g} s: it is stuck in "
                f"native code (e.g. an FMU's doStep), which cannot be interrupted in the "
                f"orchestrator's process; the run was ended {late_s:.1f} s after the "
                "deadline", component=adapter.name,
                fix='give this component run = "process" in the rig (a step that hangs '
                    "there is killed at its timeout), or fix the hang")
            if execution is not None:
                execution.end_stream()
            problems = close_all(False)
            summary, broken = make_summary("failed", str(exc), adapter.name, False, problems,
                                           time.perf_counter() - loop0)
            if broken is not None:
                summary["recording_complete"] = False
            summary["plots_skipped"] = "the run was ended from the step watchdog's thread"
            _write_summary(out_dir / "summary.json", summary, say)
            say(f"run failed: {summary['error']}; outputs in {out_dir}/ (summary.json"
                + (", recording.mcap" if recorder is not None else "") + ")")
        except BaseException:  # noqa: BLE001 - the process ends here whatever happens
            log.exception("ending the run after a stuck step failed")
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)

    try:
        try:
            if opening is not None:
                raise opening
            adapters = build_adapters(rig, sock_dir, out_dir / "logs", context)
            execution = Execution(wired_rig(rig), adapters, observer)
            if recorder is not None:
                for c in rig.components:
                    recorder.add_metadata(f"component/{c.name}", {
                        "entry": c.entry or "", "placement": c.placement,
                        "endpoint": c.endpoint, "period_ns": str(c.schedule.nominal_period_ns),
                        "rate_hz": str(c.schedule.rate_hz), "offset_ns": str(c.schedule.offset_ns),
                        "not_recorded": ",".join(
                            ref.partition(".")[2] for ref in rig.run.record_exclude
                            if ref.partition(".")[0] == c.name),
                        **({"security": "curve" if c.server_key else
                            "insecure" if c.name in insecure else "local"}
                           if c.placement == "remote" else {}),
                    })
            execution.setup()
            if recorder is not None:  # the first N recorded messages are Initialize outputs
                recorder.add_metadata(INITIALIZE_METADATA, {"messages": str(recorder.messages)})
            pacer = execution.pace = make_pacer(rig, adapters, execution.wait, recorder)
            loop0 = time.perf_counter()
            try:
                with (abandon_stuck_steps(abandon) if abandon_stuck
                      else contextlib.nullcontext()):
                    execution.run(progress)
            finally:
                loop_wall = time.perf_counter() - loop0
                if pacer is not None:
                    pacer.close()
        except KeyboardInterrupt as exc:
            say("Ctrl-C: stopping the components and closing the recording; summary.json "
                "is written next, then the plots (press Ctrl-C again to skip the plots)")
            raise Interrupted("interrupted by the user (Ctrl-C)") from exc
    except (SimulationError, ComponentError, RigError) as exc:
        status, error = "failed", str(exc)
        failed_component = getattr(exc, "component", None) or None
        interrupted = isinstance(exc, Interrupted)
        log.info("run failed: %s", exc)  # the caller reports it (once)
    except MoonpoolError as exc:
        status, error = "failed", str(exc)
    except OSError as exc:  # the run folder (logs of child processes) cannot be written
        status, error = "failed", (f"cannot write into {out_dir}: {exc.strerror or exc} (fix: "
                                   "free space there, or give --out a folder you may write)")
    finally:
        if old_term is not None:
            signal.signal(signal.SIGTERM, old_term)
        shutdown_problems = close_all(status == "ok")
    _sigint(signal.SIG_IGN)  # until summary.json is on disk
    summary, broken = make_summary(status, error, failed_component, interrupted,
                                   shutdown_problems, loop_wall)
    summary_path = out_dir / "summary.json"
    if broken is not None:
        summary["recording_complete"] = False  # cut at its last whole record: see error
        if rig.run.plots:
            summary["plots_skipped"] = "the recording could not be written"
    # Written before plotting, so that no interrupt while drawing can lose it.
    written = _write_summary(summary_path, summary, say)
    # Nothing to draw from a run that stepped nothing (it failed before its first
    # step, or ran --until 0), and no "skipped" warnings about it; nor into a folder
    # that cannot be written.
    draw = (written and recorder is not None and broken is None and rig.run.plots
            and bool(summary["ticks"]))
    if draw or (written and pacer is not None and rig.run.plots and len(pacer.lateness)):
        say(f"drawing the plots into {out_dir / 'plots'} (Ctrl-C skips them; "
            "summary.json is already written)")
        _sigint(signal.default_int_handler)
        try:
            _draw_plots(rig, out_dir, recording_path if draw else None, pacer, summary)
        except KeyboardInterrupt:
            say("plots skipped (Ctrl-C); summary.json says so")
            summary["plots_skipped"] = "interrupted by the user (Ctrl-C)"
            summary["interrupted"] = True
            if summary["status"] == "ok":
                summary["status"] = "failed"
                summary["error"] = ("interrupted by the user (Ctrl-C) while drawing the plots; "
                                    "the simulation had completed: recording.mcap and the "
                                    "digest are whole")
        _sigint(signal.SIG_IGN)  # a Ctrl-C now must not stop the rewrite
        _write_summary(summary_path, summary, say)
    if old_int is not None:
        signal.signal(signal.SIGINT, old_int)
    return RunResult(summary, out_dir)
