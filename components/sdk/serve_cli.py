"""The command line of the serve loop: ``python -m moonpool.components.sdk.serve`` and
the options ``moonpool serve`` shares with it (keys, limits, confinement).

    python -m moonpool.components.sdk.serve ENTRY --bind ENDPOINT [--once] [--base-dir DIR]
        [--confine DIR] [--device PATH]... [--key SECRET --allow PUBLIC...] [--insecure]
        [--max-message-bytes N] [--max-peer-timeout S] [--session-cpu-budget S]

(docs/distributed.md has every option.)
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys

import zmq

from . import wire
from .confine import Confinement
from .errors import EntryError, ParameterError
from .localroutes import LocalRoute
from .scheduling import fifo_io_threads
from .security import ServerSecurity, leaves_loopback
from .serve import Server, escape_log_lines


INSECURE_WARNING = """\
WARNING: INSECURE ENDPOINT {endpoint}
  It is reachable from other machines and is NOT authenticated or encrypted
  (--insecure): anyone who can reach it can read the stream and drive this component.
  Use --key SERVER.key_secret --allow ORCHESTRATOR.key instead (moonpool keys generate).
"""


def security_from_args(args: argparse.Namespace, endpoint: str) -> tuple[ServerSecurity | None, str]:
    """The server's CURVE setup from --key/--allow/--insecure, or (None, error text)."""
    if args.insecure and (args.key or args.allow):
        return None, "--insecure contradicts --key/--allow; give either keys or --insecure"
    if args.key and not args.allow:
        return None, ("--key needs --allow: the public key file(s) of the orchestrators that "
                      "may connect, or a folder of them (fix: --allow keys/orchestrator.key)")
    if args.allow and not args.key:
        return None, ("--allow needs --key, this server's secret key file "
                      "(fix: moonpool keys generate NAME, then --key NAME.key_secret)")
    if not args.key:
        if leaves_loopback(endpoint) and not args.insecure:
            return None, (f"{endpoint} is reachable from other machines and no keys are given: "
                          "refusing to serve it unauthenticated (fix: --key SERVER.key_secret "
                          "--allow ORCHESTRATOR.key, keys from `moonpool keys generate NAME`; "
                          "or bind tcp://127.0.0.1:PORT; or --insecure on a trusted network)")
        return None, ""
    from .errors import KeyFileError

    try:
        return ServerSecurity.from_files(
            args.key, args.allow,
            allow_insecure_permissions=args.allow_insecure_key_permissions), ""
    except KeyFileError as exc:
        return None, str(exc)


def add_security_arguments(parser: argparse.ArgumentParser) -> None:
    """--key, --allow, --insecure (shared by `moonpool serve`)."""
    parser.add_argument("--key", metavar="SERVER_SECRET_FILE",
                        help="this server's secret key file (NAME.key_secret): CURVE "
                        "encryption and authentication; needs --allow")
    parser.add_argument("--allow", action="append", default=[], metavar="CLIENT_PUBLIC_FILE",
                        help="public key file (NAME.key) of an orchestrator allowed to connect, "
                        "or a folder of them (repeatable); every other key is refused")
    parser.add_argument("--insecure", action="store_true",
                        help="serve a non-loopback tcp endpoint without keys (trusted networks "
                        "only; warns loudly)")
    parser.add_argument("--allow-insecure-key-permissions", action="store_true",
                        help="accept a secret key file other users may read, and an --allow "
                        "folder they may write (warns); refused by default")


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def log_level(text: str) -> str:
    """``--log-level`` value: one of LOG_LEVELS, any case (returned in capitals)."""
    level = text.strip().upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a log level; use {', '.join(LOG_LEVELS[:-1])} or {LOG_LEVELS[-1]}")
    return level


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """--max-message-bytes, --max-peer-timeout (shared by `moonpool serve`;
    :func:`limit_argv` gives them back as arguments)."""

    def size(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            n = 0
        if not 1024 <= n <= wire.MAX_MESSAGE_BYTES_LIMIT:
            raise argparse.ArgumentTypeError(
                f"expected a whole number of bytes from 1024 to {wire.MAX_MESSAGE_BYTES_LIMIT}, "
                f"got {text!r}")
        return n

    def seconds(text: str) -> int:
        try:
            ns = round(float(text) * 1e9)
        except (ValueError, OverflowError):
            ns = 0
        if not 0 < ns <= wire.MAX_PEER_TIMEOUT_LIMIT_NS:
            raise argparse.ArgumentTypeError(
                f"expected seconds, more than 0 and at most "
                f"{wire.MAX_PEER_TIMEOUT_LIMIT_NS // 10**9}, got {text!r}")
        return ns

    parser.add_argument("--max-message-bytes", type=size,
                        default=wire.DEFAULT_MAX_MESSAGE_BYTES, metavar="BYTES",
                        help="the largest frame (request, reply or attachment) accepted or "
                        "sent; a peer declaring a larger one is disconnected before anything "
                        f"is allocated (default {wire.DEFAULT_MAX_MESSAGE_BYTES})")
    def budget(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 <= value < float("inf"):
            raise argparse.ArgumentTypeError(f"expected seconds >= 0, got {text!r}")
        return value

    parser.add_argument("--session-cpu-budget", type=budget, default=0.0, metavar="SECONDS",
                        help="CPU seconds one session may use (its component's steps "
                        "included); past it the session is ended with an error, so no "
                        "orchestrator can hold the server longer (default 0: no budget)")
    parser.add_argument("--max-peer-timeout", type=seconds, dest="max_peer_timeout_ns",
                        default=wire.DEFAULT_MAX_PEER_TIMEOUT_NS, metavar="SECONDS",
                        help="the longest peer timeout an orchestrator may ask for: a session "
                        "whose orchestrator fell silent ends at the latest this long after "
                        f"(default {wire.DEFAULT_MAX_PEER_TIMEOUT_NS // 10**9} s)")


def add_confinement_arguments(parser: argparse.ArgumentParser) -> None:
    """--confine, --device (shared by `moonpool serve`; components/sdk/confine.py)."""
    parser.add_argument("--confine", metavar="DIR",
                        help="the served folder: every file parameter, taken from --base-dir, "
                        "must resolve inside it (default: --base-dir itself)")
    parser.add_argument("--device", action="append", default=[], metavar="PATH_OR_URL",
                        help="a device a component may open although it is not in the served "
                        "folder (a serial port /dev/ttyACM0, a camera /dev/video0, a pyserial "
                        "URL), exactly as the orchestrator will name it (repeatable); no "
                        "other device is opened")


def limit_argv(args: argparse.Namespace) -> list[str]:
    """The options of :func:`add_limit_arguments` as command-line arguments again."""
    return ["--max-message-bytes", str(args.max_message_bytes),
            "--max-peer-timeout", repr(args.max_peer_timeout_ns * 1e-9),
            "--session-cpu-budget", repr(args.session_cpu_budget)]


def _die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (no orphans)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m moonpool.components.sdk.serve",
        description="Serve one component, or a group of them (--component), on a ZeroMQ endpoint.",
    )
    parser.add_argument("entry", nargs="?",
                        help="module:Class, file.py:Class or a registered short name")
    parser.add_argument("--component", action="append", default=[], metavar="NAME=ENTRY",
                        help="host a group: one component instance per flag (instead of ENTRY)")
    parser.add_argument("--local-route", action="append", default=[],
                        metavar="SOURCE.PORT>TARGET.PORT@DELAY_NS",
                        help="a group: deliver this connection between two of its components "
                        "here (the orchestrator sets it for the groups it pipelines)")
    parser.add_argument("--bind", required=True, help="endpoint, e.g. ipc:///tmp/c.sock or tcp://*:5555")
    parser.add_argument("--once", action="store_true", help="exit after one session")
    parser.add_argument("--base-dir", default=None,
                        help="the served folder: relative file.py entries, and every file "
                        "parameter an orchestrator gives must lie inside it")
    add_confinement_arguments(parser)
    parser.add_argument("--unconfined", action="store_true",
                        help="path parameters may point anywhere, relative ones from "
                        "--base-dir: only for a component the orchestrator spawns from a "
                        "rig on this machine (never for an endpoint others reach)")
    parser.add_argument("--parent-pid", type=int, default=0, help="exit when this process dies")
    parser.add_argument("--log-level", type=log_level, default="INFO",
                        help="DEBUG, INFO (default), WARNING, ERROR, CRITICAL")
    parser.add_argument("--realtime-priority", type=int, default=0, metavar="N",
                        help="real time: step as a SCHED_FIFO process of priority N (1-99) "
                        "from the first step on, ZeroMQ's I/O threads too (0: normal)")
    add_limit_arguments(parser)
    add_security_arguments(parser)
    args = parser.parse_args(argv)
    if bool(args.entry) == bool(args.component):
        parser.error("give either ENTRY or one or more --component NAME=ENTRY")
    label = args.entry or "group:" + ",".join(c.split("=", 1)[0] for c in args.component)
    logging.basicConfig(
        level=args.log_level,
        format=f"[{label} %(levelname)s] %(message)s",
        stream=sys.stderr,
    )
    escape_log_lines()
    if args.parent_pid:
        _die_with_parent()
        if os.getppid() != args.parent_pid:  # parent died before prctl took effect
            return 1
    from .loading import load_entry

    try:
        if args.entry:
            cls, components = load_entry(args.entry, args.base_dir), None
        else:
            cls, components = None, {}
            for spec in args.component:
                name, sep, entry = spec.partition("=")
                if not sep or not name or not entry:
                    parser.error(f"--component expects NAME=ENTRY, got {spec!r}")
                components[name] = load_entry(entry, args.base_dir)
    except EntryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        routes = [LocalRoute.parse(text) for text in args.local_route]
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    unknown = sorted({m for r in routes for m in (r.source, r.target)} - set(components or ()))
    if unknown:
        print(f"error: --local-route names {', '.join(unknown)}, not a --component of this "
              "group (fix: route only between the group's components)", file=sys.stderr)
        return 2
    confinement = None
    if not args.unconfined:
        try:
            confinement = Confinement.of(args.base_dir, args.confine, args.device)
        except ValueError as exc:
            print(f"error: --base-dir must lie inside --confine: {exc}", file=sys.stderr)
            return 2
    security, problem = security_from_args(args, args.bind)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if not 0 <= args.realtime_priority <= 99:
        print(f"error: --realtime-priority must be 0-99, got {args.realtime_priority}",
              file=sys.stderr)
        return 2
    if args.realtime_priority and not fifo_io_threads(zmq.Context.instance(),
                                                      args.realtime_priority):
        args.realtime_priority = 0
    try:
        server = Server(cls, args.bind, components=components, once=args.once,
                        base_dir=args.base_dir, security=security,
                        max_message_bytes=args.max_message_bytes,
                        max_peer_timeout_ns=args.max_peer_timeout_ns,
                        cpu_budget_s=args.session_cpu_budget,
                        confinement=confinement,
                        realtime_priority=args.realtime_priority, local_routes=routes)
    except zmq.ZMQError as exc:
        print(f"error: cannot bind {args.bind}: {exc} (fix: choose a free endpoint)", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: server.stop())
    if args.once:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if security is None and leaves_loopback(args.bind):
        print(INSECURE_WARNING.format(endpoint=args.bind), file=sys.stderr, flush=True)
    how = (f"CURVE, {len(security.allow.allowed)} allowed client key(s)" if security
           else "no authentication")
    print(f"serving {label} on {server.bound_endpoint} ({how})", file=sys.stderr, flush=True)
    return server.serve_forever()


