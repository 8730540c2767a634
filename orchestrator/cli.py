"""The ``moonpool`` command.

    moonpool run RIG [--until T] [--seed N] [--out DIR [--force]] [--set K=V]...
                     [--mode inproc|process] [--realtime [FACTOR]] [--strict-realtime]
    moonpool check RIG [--until T] [--seed N] [--set K=V]... [--mode inproc|process]
                       [--realtime [FACTOR]]
    moonpool serve ENTRY --bind ENDPOINT [--key SECRET --allow PUBLIC...] [--insecure]
    moonpool keys generate NAME [--dir DIR] [--force]
    moonpool describe ENTRY | --list
    moonpool export RECORDING [--topics T...] [--format csv|parquet] --out DIR
    moonpool fmu build [--force]
    moonpool sweep RIG|SWEEP.toml [--grid K=v1,v2]... [--random K=DIST]... [--seeds N] ...
    moonpool sweep report DIR       (orchestrator/sweep/cli.py, docs/sweeps.md)
    moonpool WORD [WORD] ...            commands that component packages register
                                        (``moonpool.components.sdk.commands``): e.g.
                                        localize, dataset pool, calibrate intrinsics|water

Exit codes: 0 success, 1 a run that failed, 2 bad input (rig, flags, entry).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from datetime import datetime
from pathlib import Path

from google.protobuf import json_format

from moonpool.components.sdk.errors import EntryError, RigError, RigValidationError
from moonpool.components.sdk.serve_cli import log_level

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 too; say how to get help
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _factor(text: str) -> float:
    """``--realtime`` value: a real-time factor (checked > 0 with the rig)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a real-time factor such as 1 or 0.5, got {text!r} (write the rig "
            "before the option: moonpool run RIG --realtime)"
        ) from None


_REALTIME_HELP = ("pace the run to the wall clock: FACTOR simulated seconds per second "
                  "(default 1; 0.5 = half speed); overrides run.realtime")


def _until(text: str) -> float | str:
    """``--until`` value: seconds (``20``, ``0.1``) or a duration with a unit (``"10s"``,
    ``"2min"``), as in rig files; checked with the rig (orchestrator/timeparse.py)."""
    try:
        return float(text) if "." in text or "e" in text.lower() else int(text)
    except ValueError:
        return text


_UNTIL_HELP = ("simulated time: seconds (20, 0.5) or a duration (10s, 250ms, 2min), as run.until; "
               "0 sets up and initialises every component, then stops")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="moonpool", description="Co-simulation of underwater robots.")
    p.add_argument("--log-level", type=log_level, default="WARNING",
                   help="DEBUG, INFO, WARNING (default), ERROR, CRITICAL")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    r = sub.add_parser("run", help="run a rig")
    r.add_argument("rig", type=Path, help="rig file (TOML)")
    r.add_argument("--until", type=_until, metavar="T", help=_UNTIL_HELP + " (overrides run.until)")
    r.add_argument("--seed", type=int, metavar="N", help="seed (overrides run.seed)")
    r.add_argument("--out", type=Path, metavar="DIR", help="output folder (default runs/RIG-TIME); "
                   "refused if it holds files, unless --force")
    r.add_argument("--force", action="store_true",
                   help="with --out: replace the run already in DIR (its recording, summary, "
                   "plots/ and logs/)")
    r.add_argument("--set", action="append", default=[], metavar="K=V", dest="overrides",
                   help="override a rig key, e.g. components.pid.parameters.kp=80 (repeatable)")
    r.add_argument("--mode", choices=["inproc", "process"],
                   help="run every component in-process or each in its own process")
    r.add_argument("--realtime", nargs="?", const=1.0, type=_factor, metavar="FACTOR",
                   help=_REALTIME_HELP)
    r.add_argument("--live", nargs="?", const=8765, type=int, metavar="PORT",
                   help="stream the run to Foxglove over WebSocket on PORT (default 8765; "
                   "docs/live.md); needs the live extra")
    r.add_argument("--strict-realtime", action="store_true",
                   help="real time: a missed verdict (a tick later than run.realtime_tolerance) "
                   "fails the run, exit 1 (sets run.realtime_strict; the HIL rigs set it)")
    r.add_argument("--quiet", action="store_true", help="no progress bar and no table")

    c = sub.add_parser("check", help="validate a rig without running it; list every problem")
    c.add_argument("rig", type=Path)
    c.add_argument("--until", type=_until, metavar="T", help=_UNTIL_HELP)
    c.add_argument("--seed", type=int, metavar="N", help="seed (overrides run.seed)")
    c.add_argument("--set", action="append", default=[], metavar="K=V", dest="overrides")
    c.add_argument("--mode", choices=["inproc", "process"])
    c.add_argument("--realtime", nargs="?", const=1.0, type=_factor, metavar="FACTOR",
                   help=_REALTIME_HELP)

    s = sub.add_parser("serve", help="host one component for a remote orchestrator")
    s.add_argument("entry", help="registered name, module:Class or file.py:Class")
    s.add_argument("--bind", required=True, metavar="ENDPOINT", help="e.g. tcp://*:5555")
    s.add_argument("--once", action="store_true", help="exit after one session")
    s.add_argument("--base-dir", metavar="DIR",
                   help="the served folder: relative file.py entries, and every file "
                   "parameter an orchestrator gives must lie inside it (default: the current "
                   "folder)")
    from moonpool.components.sdk.serve_cli import (
        add_confinement_arguments,
        add_limit_arguments,
        add_security_arguments,
    )

    add_confinement_arguments(s)
    add_limit_arguments(s)
    add_security_arguments(s)

    k = sub.add_parser("keys", help="CURVE key pairs for components on other machines")
    ksub = k.add_subparsers(dest="keys_command", required=True, parser_class=_Parser)
    kg = ksub.add_parser("generate", help="write NAME.key (public) and NAME.key_secret (secret)")
    kg.add_argument("name", help="e.g. camera-pc or orchestrator")
    kg.add_argument("--dir", type=Path, default=Path("."), help="folder (default: here)")
    kg.add_argument("--force", action="store_true", help="replace an existing pair")

    rc = sub.add_parser("recover", help="index a recording cut short (a killed run, a full "
                        "disk) so that every tool opens it (docs/recordings.md)")
    rc.add_argument("recording", type=Path, help="a run's recording.mcap")
    rc.add_argument("-o", "--output", type=Path, metavar="FILE",
                    help="write the whole recording here (default: replace the input, "
                    "atomically, once the new file is complete)")

    x = sub.add_parser("export", help="a recording's messages as tables: one CSV or Parquet "
                       "file per topic (docs/recordings.md)")
    x.add_argument("recording", type=Path, help="a run's recording.mcap")
    x.add_argument("--topics", nargs="+", metavar="TOPIC",
                   help="only these topics: /vehicle/state or vehicle.state (default: all)")
    x.add_argument("--format", choices=["csv", "parquet"], default="csv",
                   help="csv (default; needs nothing) or parquet (needs pyarrow: the data extra)")
    x.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="folder for the files (created; COMPONENT.PORT.csv per topic)")

    f = sub.add_parser("fmu", help="FMU tools")
    fsub = f.add_subparsers(dest="fmu_command", required=True, parser_class=_Parser)
    fb = fsub.add_parser("build", help="(re)build the FMUs moonpool ships into fmus/build/")
    fb.add_argument("--force", action="store_true", help="rebuild even if up to date")
    fb.add_argument("--cc", help="C compiler (default: cc)")

    from .sweep.cli import add_arguments as add_sweep_arguments

    add_sweep_arguments(sub.add_parser(
        "sweep", help="parameter sweeps and Monte Carlo on Dask; 'sweep report DIR'"))

    _add_registered_commands(sub)

    cf = sub.add_parser("conformance", help="send the protocol's edge cases to a served "
                        "component; print a pass/fail table (docs/protocol.md)")
    cf.add_argument("endpoint", help="where it serves, e.g. tcp://127.0.0.1:5555 (it must "
                    "serve several sessions: moonpool serve, not --once)")
    cf.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", dest="params",
                    help="a parameter for its Configure, as a TOML value (repeatable; "
                    "required ones must be given)")
    cf.add_argument("--cheap", action="store_true",
                    help="only the cases that need no session (no Configure)")
    cf.add_argument("--timeout", type=float, default=3.0, metavar="S",
                    help="seconds to wait for each answer (default 3)")
    cf.add_argument("--peer-timeout", type=float, default=0.3, metavar="S",
                    help="peer_timeout the silent-peer case configures (default 0.3)")

    d = sub.add_parser("describe", help="print a component's ports and parameters")
    d.add_argument("entry", nargs="?", help="registered name, module:Class or file.py:Class")
    d.add_argument("--list", action="store_true", help="list the registered components")
    d.add_argument("--json", action="store_true", help="print the Description as JSON")
    return p


def _add_registered_commands(sub) -> None:
    """The subcommands component packages register (``moonpool.commands`` entry points):
    one word (``localize``) or a group word and a leaf (``dataset pool``)."""
    from moonpool.components.sdk.commands import Command, CommandGroup, registered_commands

    commands, problems = registered_commands()
    for exc in problems:
        print(f"warning: {exc}", file=sys.stderr)
    groups: dict[str, object] = {}

    def group(word: str, help_text: str):
        if word not in groups:
            g = sub.add_parser(word, help=help_text)
            groups[word] = g.add_subparsers(dest=f"{word}_command", required=True,
                                            parser_class=_Parser)
        return groups[word]

    for name, obj in sorted(commands.items(), key=lambda kv: (len(kv[0].split()), kv[0])):
        words = name.split()
        if isinstance(obj, CommandGroup):
            group(words[0], obj.help)
            continue
        assert isinstance(obj, Command)
        parent = sub if len(words) == 1 else group(words[0], f"{words[0]} tools")
        leaf = parent.add_parser(words[-1], help=obj.help, description=obj.help)
        obj.add_arguments(leaf)
        leaf.set_defaults(registered_command=obj)


class Progress:
    """A one-line progress bar on a terminal (stderr)."""

    def __init__(self, until_ns: int, stream=sys.stderr) -> None:
        self.until_ns = until_ns
        self.stream = stream
        self.t0 = time.perf_counter()
        self.shown = False

    def __call__(self, t_ns: int) -> None:
        frac = min(max(t_ns / self.until_ns, 0.0), 1.0) if self.until_ns else 1.0
        wall = time.perf_counter() - self.t0
        rtf = t_ns * 1e-9 / wall if wall > 0 else 0.0
        width = 30
        bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
        eta = wall * (1 - frac) / frac if frac > 0 else 0.0
        self.stream.write(
            f"\r[{bar}] {frac * 100:5.1f}%  t={t_ns * 1e-9:8.2f} s  {rtf:7.1f}x real time  ETA {eta:5.0f} s"
        )
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * 90 + "\r")
            self.stream.flush()


def _load(args) -> "object":
    from .rigfile import load_and_check

    overrides = list(args.overrides)
    if getattr(args, "strict_realtime", False):
        overrides.append("run.realtime_strict=true")
    return load_and_check(
        args.rig, overrides, until_s=getattr(args, "until", None),
        seed=getattr(args, "seed", None), mode=args.mode,
        realtime=getattr(args, "realtime", None),
    )


def _fresh_dir(base: Path) -> Path:
    """base, or base-2, base-3, ... if a run already wrote there (two runs in one second)."""
    out, k = base, 1
    while out.exists():
        k += 1
        out = base.with_name(f"{base.name}-{k}")
    return out


RUN_OUTPUTS = ("recording.mcap", "summary.json", "summary.json.tmp", "plots", "logs")
"""What a run writes into its folder (and ``--force`` removes)."""


def _prepare_out(out: Path, *, force: bool) -> str | None:
    """Make ``--out`` ready: a folder that does not exist or is empty is used; one that
    holds files is refused (a problem text, exit 2) unless ``force``, which removes
    the outputs of the run in it (RUN_OUTPUTS; anything else stays)."""
    if not out.exists():
        return None
    if not out.is_dir():
        return f"--out {out} is a file, not a folder; give a folder name"
    entries = list(out.iterdir())
    if not entries:
        return None
    if not force:
        held = ", ".join(sorted(e.name for e in entries)[:5]) + (", ..." if len(entries) > 5 else "")
        return (f"--out {out} already holds files ({held}); a run there would mix with them "
                f"(fix: give a fresh folder, or add --force to replace the run in {out})")
    import shutil

    for name in RUN_OUTPUTS:
        path = out / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists() or path.is_symlink():
            path.unlink()
    return None


def cmd_run(args) -> int:
    try:
        rig = _load(args)
    except RigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    live = None
    if args.live is not None:  # before --out is touched: a taken port is bad input
        from .live import LiveView

        try:
            live = LiveView(args.live)
        except RigError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    try:
        return _run(args, rig, live)
    finally:
        if live is not None:
            live.close()


def _run(args, rig, live) -> int:
    """``moonpool run`` once the rig is loaded (and the live view, if any, serving)."""
    from .run import run_rig

    out = args.out or _fresh_dir(Path("runs") / f"{rig.name}-{datetime.now().strftime('%Y%m%d-%H%M%S')}")
    if args.out is not None:
        problem = _prepare_out(args.out, force=args.force)
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return EXIT_BAD_INPUT
    try:  # before anything starts: a bad --out is bad input, not a crash mid-run
        Path(out).mkdir(parents=True, exist_ok=True)
        probe = Path(out) / ".moonpool-write-test"
        probe.touch()
        probe.unlink()
    except OSError as exc:
        print(f"error: --out {out}: cannot write a run folder there "
              f"({exc.strerror or exc}) (fix: give --out a folder you may write, e.g. "
              "runs/NAME)", file=sys.stderr)
        return EXIT_BAD_INPUT
    show = not args.quiet and sys.stderr.isatty()
    progress = Progress(rig.run.until_ns) if show else None
    if not args.quiet:
        pace = (f", real time x{float(rig.run.realtime):g} (overrun: {rig.run.overrun})"
                if rig.run.realtime is not None else "")
        print(f"running {rig.path} until {rig.run.until_ns * 1e-9:g} s (seed {rig.run.seed}"
              f"{pace}) -> {out}", file=sys.stderr)

    def notify(text: str) -> None:
        if text.startswith("drawing the plots") and not show:
            return  # only for someone watching a terminal; what Ctrl-C does is always said
        if progress is not None:
            progress.done()
        print(text, file=sys.stderr, flush=True)

    if live is not None:
        from .livescene import rig_scene

        live.set_scene(rig_scene(rig))
        print(f"live view: ws://127.0.0.1:{live.port} once the components are set up "
              "(Foxglove: Open connection; layout: docs/foxglove-layout.json)",
              file=sys.stderr, flush=True)
    try:
        # A step stuck in native code cannot be interrupted here: the run is ended from
        # the step watchdog's thread, which exits the process (run_rig's docstring).
        result = run_rig(rig, out, progress=progress, notify=notify, live=live,
                         abandon_stuck=True)
    except KeyboardInterrupt:  # only outside the run's own handling (e.g. before it)
        notify(f"interrupted (Ctrl-C); see {out}/summary.json if it was written")
        return EXIT_FAILED
    if progress is not None:
        progress.done()
    # Everything is on disk: a Ctrl-C from now on would only cut the report short and
    # end the process by the signal (exit -2, a traceback); the command ignores it
    # until the process exits.
    import signal

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        pass
    _report(result.summary, out, quiet=args.quiet)
    return result.exit_code


def _report(summary: dict, out: Path, *, quiet: bool) -> None:
    """What the terminal shows after a run: the table (not after a failure before
    the first tick: it would be all zeros), where the outputs are, and the error once."""
    from .summary import format_table

    ok = summary["status"] in ("ok", "terminated")  # terminated: a component ended it well
    if not quiet:
        if ok or summary.get("ticks"):
            print(format_table(summary, with_error=False))
        print(f"outputs in {out}/ (summary.json"
              + (", recording.mcap" if summary.get("recording") else "")
              + (", plots/" if summary.get("plots") else "") + ")")
    if not ok:
        print(f"error: run failed: {summary['error']}", file=sys.stderr)
    rt = summary.get("realtime") or {}
    if rt.get("verdict") == "missed" and not rt.get("strict"):
        from .realtime import verdict_line

        print(verdict_line(rt), file=sys.stderr)  # the last line: loud


def cmd_check(args) -> int:
    try:
        rig = _load(args)
    except RigValidationError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_BAD_INPUT
    except RigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    pace = f", real time x{float(rig.run.realtime):g}" if rig.run.realtime is not None else ""
    print(f"{args.rig}: ok ({len(rig.components)} components, {len(rig.connections)} connections, "
          f"until {rig.run.until_ns * 1e-9:g} s, {rig.run.algorithm}{pace})")
    from moonpool.orchestrator.run import insecure_components

    insecure = insecure_components(rig)
    if insecure:
        print(f"WARNING: INSECURE: {', '.join(insecure)} reached over the network without "
              "authentication or encryption (insecure = true)", file=sys.stderr)
    return EXIT_OK


def cmd_serve(args) -> int:
    from moonpool.components.sdk import serve_cli as serve

    argv = [args.entry, "--bind", args.bind, "--log-level", args.log_level]
    if args.once:
        argv.append("--once")
    if args.base_dir:
        argv += ["--base-dir", args.base_dir]
    if args.confine:
        argv += ["--confine", args.confine]
    for device in args.device:
        argv += ["--device", device]
    if args.key:
        argv += ["--key", args.key]
    for allowed in args.allow:
        argv += ["--allow", allowed]
    if args.insecure:
        argv.append("--insecure")
    if args.allow_insecure_key_permissions:
        argv.append("--allow-insecure-key-permissions")
    return serve.main(argv + serve.limit_argv(args))


def cmd_keys(args) -> int:
    from moonpool.components.sdk.errors import KeyFileError
    from moonpool.components.sdk.security import generate_keys, read_public_key

    try:
        public, secret = generate_keys(args.name, args.dir, force=args.force)
    except KeyFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"wrote {public} (public key {read_public_key(public).decode()}: give it to the "
          f"other side)\nwrote {secret} (secret, mode 0600: keep it on this machine)")
    return EXIT_OK


def cmd_describe(args) -> int:
    from moonpool.components.sdk.loading import load_entry, registered
    from moonpool.components.sdk.wire import describe_class, from_parameter_value

    if args.list or not args.entry:
        for name, target in sorted(registered().items()):
            print(f"{name:28s} {target}")
        return EXIT_OK
    try:
        desc = describe_class(load_entry(args.entry, Path.cwd()))
    except EntryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        print(json_format.MessageToJson(desc, preserving_proto_field_name=True))
        return EXIT_OK
    print(f"{desc.kind}\n  {desc.description}\n")
    for title, ports in (("inputs", desc.inputs), ("outputs", desc.outputs)):
        print(f"{title}:")
        for p in ports:
            q = " (queued)" if p.queued else ""
            print(f"  {p.name:20s} {p.type}{q}  {p.description}")
        if not ports:
            print("  (none)")
    print("parameters:")
    for prm in desc.parameters:
        default = (
            "required" if prm.required
            else f"default {json.dumps(from_parameter_value(prm.default_value))}"
        )
        unit = f" [{prm.unit}]" if prm.unit else ""
        print(f"  {prm.name:20s} {default}{unit}  {prm.description}")
    if not desc.parameters:
        print("  (none)")
    return EXIT_OK


def cmd_conformance(args) -> int:
    from .conformance import run_suite, table
    from .rigfile.reading import _override_value as parse_value  # TOML value, else text

    params = {}
    for text in args.params:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            print(f"error: --set {text!r}: write NAME=VALUE, e.g. --set gain=2", file=sys.stderr)
            return EXIT_BAD_INPUT
        params[name.strip()] = parse_value(value)
    import zmq

    try:
        results = run_suite(args.endpoint, params, timeout_s=args.timeout,
                            peer_timeout_s=args.peer_timeout, cheap=args.cheap)
    except zmq.ZMQError as exc:
        print(f"error: cannot connect to {args.endpoint}: {exc} (fix: give a ZeroMQ endpoint "
              "such as tcp://127.0.0.1:5555 or ipc://PATH)", file=sys.stderr)
        return EXIT_BAD_INPUT
    table(results)
    if results and results[0].name == "describe" and results[0].got == "no answer":
        print(f"error: nothing answered at {args.endpoint} within {args.timeout:g} s (fix: "
              f"serve a component there, e.g. moonpool serve ENTRY --bind {args.endpoint}, "
              "or raise --timeout)", file=sys.stderr)
    return EXIT_OK if all(r.ok for r in results) else EXIT_FAILED


def cmd_export(args) -> int:
    from moonpool.components.sdk.errors import MoonpoolError

    from .export import export

    if not args.recording.exists():
        print(f"error: no recording at {args.recording} (fix: give a run's recording.mcap)",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        paths = export(args.recording, args.out, args.format, args.topics)
    except MoonpoolError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    for path in paths:
        print(path)
    return EXIT_OK


def cmd_recover(args) -> int:
    from moonpool.components.sdk.errors import MoonpoolError, RecordingFailed

    from .recording import recover

    if not args.recording.is_file():
        print(f"error: no recording at {args.recording} (fix: give a run's recording.mcap)",
              file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        done = recover(args.recording, args.output)
    except RecordingFailed as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except MoonpoolError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    how = ("it was already complete; copied with its index" if done.complete else
           "it had no index; now it has one")
    cut = (f"; {done.dropped_bytes} bytes of a cut record at its end left out"
           if done.dropped_bytes else "")
    print(f"{done.path}: {done.messages} messages ({how}{cut})")
    return EXIT_OK


def cmd_fmu(args) -> int:
    import subprocess

    # The FMU sources live in the source checkout (fmus/), beside orchestrator/.
    script = Path(__file__).resolve().parent.parent / "fmus" / "build_fmus.py"
    if not script.exists():
        print("error: fmus/build_fmus.py not found; `moonpool fmu build` works from a source "
              "checkout installed with `pip install -e .`", file=sys.stderr)
        return EXIT_BAD_INPUT
    cmd = [sys.executable, str(script)] + (["--force"] if args.force else [])
    cmd += ["--cc", args.cc] if args.cc else []
    return subprocess.call(cmd)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=args.log_level,
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    from moonpool.components.sdk.serve import escape_log_lines

    escape_log_lines()  # remote text in a log line cannot forge lines or drive the terminal
    registered = getattr(args, "registered_command", None)
    if registered is not None:
        return registered.run(args)
    if args.command == "sweep":
        from .sweep.cli import main as cmd_sweep

        return cmd_sweep(args)
    handler = {"run": cmd_run, "check": cmd_check, "serve": cmd_serve, "describe": cmd_describe,
               "fmu": cmd_fmu, "keys": cmd_keys, "conformance": cmd_conformance,
               "export": cmd_export, "recover": cmd_recover}
    return handler[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
