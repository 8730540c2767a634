"""Every error moonpool raises, in one tree.

The tree lives in the component SDK because both sides need it: components raise
the ``ComponentError`` family, the orchestrator raises and catches all of it, and
the SDK never imports the orchestrator (docs/architecture.md)::

    MoonpoolError                  base of everything below; .fix says what to do
    ├── RigError                   bad input found before anything runs (exit 2)
    │   ├── RigFileError           a rig file cannot be read or parsed as TOML
    │   ├── RigValidationError     one or more problems in a rig (lists them all)
    │   ├── EntryError             an ENTRY ("module:Class" or short name) cannot be loaded
    │   └── KeyFileError           a CURVE key file is missing, unreadable or not a key
    ├── ComponentError             raised by or about one component; .component names it
    │   ├── ParameterError         unknown, missing or ill-typed parameter
    │   ├── PortError              unknown port, wrong message type, undecodable payload
    │   ├── LifecycleError         a call out of order (Step before Initialize, ...)
    │   ├── StepFailed             the component's own code raised (in any call)
    │   └── ProtocolError          a peer broke the wire protocol (malformed, wrong version)
    ├── FitFailed                  a calibration fit did not converge or is not determined
    │                              by its data (``moonpool calibrate …``: exit 1)
    └── SimulationError            the run cannot go on (exit 1)
        ├── StepTimeout            a component did not answer within its timeout
        ├── ComponentCrashed       a component's process died
        ├── ConnectionLost         a remote component stopped answering heartbeats
        ├── DeadlineMissed         real-time mode: a tick overran (overrun policy "abort")
        ├── AuthenticationFailed   a remote endpoint refused our key, or its key was not the expected one
        ├── Interrupted            the user stopped the run (Ctrl-C, SIGTERM)
        └── RecordingFailed        the recording cannot be written (a full disk)

Foreign exceptions (zmq, protobuf, tomllib, importlib) are translated where they
enter, ``raise StepTimeout(...) from exc``, so callers catch only this tree.

Each error maps to a wire ``ErrorCode`` (``ComponentError.code``) so a component in
another process, or written in another language, reports the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from moonpool.v1 import lifecycle_pb2 as _lc


class MoonpoolError(Exception):
    """Base of every moonpool error. ``fix`` tells the user what to do;
    ``component`` names the component concerned, when there is one."""

    def __init__(self, message: str, *, fix: str = "", component: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.component = component

    def __str__(self) -> str:
        text = f"{self.message} (fix: {self.fix})" if self.fix else self.message
        return f"component '{self.component}': {text}" if self.component else text


# ---------------------------------------------------------------- rig errors


class RigError(MoonpoolError):
    """Bad input detected before the execution starts; the CLI exits with 2."""


class RigFileError(RigError):
    """A rig file that cannot be read or is not valid TOML."""


@dataclass(frozen=True)
class Problem:
    """One problem found in a rig: where it is and what is wrong."""

    file: str
    """Path of the rig file (as given by the user)."""
    key: str
    """Dotted key inside the file, e.g. ``components.pid.period``."""
    message: str
    """What is wrong and how to fix it."""
    line: int = 0
    """1-based line of the key in the file, 0 when unknown."""

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"


class RigValidationError(RigError):
    """Every problem found in a rig, reported at once (as mosaik's ``connect``)."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        n = len(self.problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"{n} problem{'s' if n != 1 else ''} in the rig:\n{lines}")


class EntryError(RigError):
    """An ENTRY that cannot be loaded (``module:Class``, a file, or a short name)."""


class KeyFileError(RigError):
    """A CURVE key file (``moonpool keys generate``) that is missing, unreadable, not a
    ZeroMQ certificate, or lacks the secret key this side needs."""


# ---------------------------------------------------------- component errors


class ComponentError(MoonpoolError):
    """Raised by, or about, one component. ``component`` is its instance name."""

    code: int = _lc.ERROR_CODE_STEP_FAILED


class ParameterError(ComponentError):
    """A parameter that is unknown, missing, or of the wrong type or range."""

    code = _lc.ERROR_CODE_INVALID_PARAMETER


class PortError(ComponentError):
    """An unknown port, a message of the wrong type, or an undecodable payload."""

    code = _lc.ERROR_CODE_INVALID_INPUT


class LifecycleError(ComponentError):
    """A call out of the lifecycle order."""

    code = _lc.ERROR_CODE_INVALID_STATE


class StepFailed(ComponentError):
    """The component's own code raised."""

    code = _lc.ERROR_CODE_STEP_FAILED


class ProtocolError(ComponentError):
    """A peer broke the wire protocol (malformed frames, another version, busy)."""

    code = _lc.ERROR_CODE_MALFORMED


_BY_CODE: dict[int, type[ComponentError]] = {
    _lc.ERROR_CODE_MALFORMED: ProtocolError,
    _lc.ERROR_CODE_PROTOCOL_VERSION: ProtocolError,
    _lc.ERROR_CODE_BUSY: ProtocolError,
    _lc.ERROR_CODE_INVALID_STATE: LifecycleError,
    _lc.ERROR_CODE_INVALID_PARAMETER: ParameterError,
    _lc.ERROR_CODE_INVALID_INPUT: PortError,
    _lc.ERROR_CODE_STEP_FAILED: StepFailed,
    _lc.ERROR_CODE_INTERNAL: StepFailed,
}


REMOTE_TEXT_MAX = 2000
"""Characters of a remote Error's message or fix kept (the rest is cut, marked)."""


def remote_text(text: str, limit: int = REMOTE_TEXT_MAX) -> str:
    """Text a peer sent (an Error's message, a finished reason): at most ``limit``
    characters, control characters escaped (:func:`printable`)."""
    if len(text) > limit:
        text = text[:limit] + f"... ({len(text) - limit} more characters)"
    return printable(text)


def error_from_wire(err: _lc.Error, component: str) -> ComponentError:
    """Translate a wire ``Error`` from the peer serving ``component`` into the matching
    exception. The text is untrusted: ``component`` (the rig's name for the peer) is
    what the exception names, whatever ``Error.component`` claims -- a different claim
    is quoted, sanitised, in the message -- and message and fix are cut and escaped
    (:func:`remote_text`). ``from_wire`` is set on the exception."""
    cls = _BY_CODE.get(err.code, ComponentError)
    message = remote_text(err.message) or "unspecified error"
    if err.component and err.component != component and err.code != _lc.ERROR_CODE_BUSY:
        # (BUSY is about the endpoint, not a component: whatever name it carries, maybe
        # one the session's holder chose, is left out.)
        message += f" (the error names component '{remote_text(err.component, 100)}')"
    exc = cls(message, component=component, fix=remote_text(err.fix))
    exc.code = err.code or cls.code
    exc.from_wire = True
    return exc


DEFAULT_FIX: dict[int, str] = {
    _lc.ERROR_CODE_MALFORMED: "send a valid moonpool.v1.Request (docs/protocol.md §2, §3)",
    _lc.ERROR_CODE_PROTOCOL_VERSION: "use an orchestrator and a component of the same "
    "protocol version",
    _lc.ERROR_CODE_INVALID_STATE: "follow the call order configure -> initialize -> step* -> "
    "terminate (docs/protocol.md §5)",
    _lc.ERROR_CODE_INVALID_PARAMETER: "fix the component's [parameters] in the rig "
    "(`moonpool describe ENTRY` lists them)",
    _lc.ERROR_CODE_INVALID_INPUT: "check the rig's connections against the component's ports "
    "(`moonpool describe ENTRY`)",
    _lc.ERROR_CODE_STEP_FAILED: "see the component's log; this is a bug in the component or "
    "its inputs",
    _lc.ERROR_CODE_BUSY: "wait until the other run ends, or serve another endpoint",
    _lc.ERROR_CODE_INTERNAL: "see the component's log; this is a bug in moonpool's serve "
    "loop: report it",
}
"""The ``fix`` sent when an error raised without one reaches the wire: every Error the
SDK sends has a fix (docs/protocol.md §9)."""


def error_to_wire(exc: BaseException, component: str) -> _lc.Error:
    """Translate any exception raised inside a component into a wire ``Error``; an empty
    ``fix`` becomes the code's :data:`DEFAULT_FIX`."""
    if isinstance(exc, ComponentError):
        return _lc.Error(
            code=exc.code, component=exc.component or component, message=exc.message,
            fix=exc.fix or DEFAULT_FIX.get(exc.code, DEFAULT_FIX[_lc.ERROR_CODE_STEP_FAILED]),
        )
    return _lc.Error(
        code=_lc.ERROR_CODE_STEP_FAILED,
        component=component,
        message=f"{type(exc).__name__}: {exc}",
        fix="see the component's traceback in its log; this is a bug in the component",
    )


# --------------------------------------------------------- simulation errors


class FitFailed(MoonpoolError):
    """A calibration fit that did not converge or is not determined by its data (the
    trials, the bollard-pull samples); the message names the file, .fix what to add."""


class SimulationError(MoonpoolError):
    """The execution cannot go on; the run ends with status ``failed`` (exit 1)."""


class StepTimeout(SimulationError):
    """A component did not answer a call within its timeout."""


class ComponentCrashed(SimulationError):
    """A component's process exited or was killed."""


class ConnectionLost(SimulationError):
    """A remote component stopped answering (heartbeats lost)."""


class DeadlineMissed(SimulationError):
    """Real-time mode with ``run.overrun = "abort"``: a tick started after its
    wall-clock deadline because the previous tick's work overran its slot."""


class AuthenticationFailed(SimulationError):
    """The CURVE handshake with a remote component failed: it refused our key, it is not
    the server whose key the rig names, or one side uses CURVE and the other does not."""


class Interrupted(SimulationError):
    """The run was stopped by a signal (Ctrl-C or SIGTERM)."""


class RecordingFailed(SimulationError):
    """The recording could not be written (a full disk, a file system error): the run
    stops; what was written before stays readable."""


def describe_problems(problems: Sequence[Problem]) -> str:
    """Render problems one per line (for the CLI)."""
    return "\n".join(str(p) for p in problems)


def printable(text: str) -> str:
    """``text`` with every non-printable character (newlines, ANSI/OSC escapes, other
    control and format characters such as bidi overrides) written as its Python escape
    (``\\n``, ``\\x1b``, ``\\u202e``): remote or user-given text that goes into a log
    line, a terminal or summary.json can then neither forge lines nor drive the
    terminal. Spaces stay."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii")
                   for c in text)
