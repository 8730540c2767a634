"""The vocabulary of rig files: every key of every table, in one place.

Each :class:`Key` says what a key's value is (a JSON Schema fragment, draft
2020-12), what it means, its default, and for a component where it applies
(``run = "remote"`` only, required with ``run = "replay"``, …). The loader takes its
lists of allowed keys and its defaults from here; :mod:`.schema` derives the JSON
Schema of the format (docs/rig.schema.json) from the same tables. docs/rigs.md is
the reference in prose; what a value must be in detail (and every message) is in
the section modules.
"""

from __future__ import annotations

import copy
from fractions import Fraction
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..realtime import OVERRUN_POLICIES
from ..timeparse import NS_PER_UNIT

# ------------------------------------------------------------------ words and forms

ALGORITHMS = ("jacobi", "gauss-seidel")
PLACEMENTS = ("inproc", "process", "remote", "replay", "command")
"""Where a component runs (its ``run`` key)."""
MODES = ("inproc", "process")
"""What ``--mode`` may force every component to."""

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
"""Component instance names (also groups and replay sources)."""
ENDPOINT_RE = re.compile(
    r"^(?:tcp://(?:\[[0-9A-Fa-f:.]+\]|[^\s:/\[\]]+):(\d+)|ipc://\S+|inproc://\S+)$"
)
"""ZeroMQ endpoints a component can be reached at (tcp needs HOST:PORT; group 1 is
the port). Written so that Python and ECMA-262 (JSON Schema) read it alike."""
_FIELD_SEGMENT = r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]\s]+\])?"
FIELD_PATH = rf"{_FIELD_SEGMENT}(?:\.{_FIELD_SEGMENT})*"
FIELD_RE = re.compile(rf"^{FIELD_PATH}$")
"""A field path as the plots name it: ``position_ned_m.z``, ``force_n[0]``,
``signals[depth].value`` (orchestrator/plots.py)."""

PLOT_KINDS = ("time", "xy", "xyz", "waterfall")
"""What a [[plots]] entry draws (orchestrator/plots.py)."""

SEED_LIMIT = 2**64
MAX_RATE_HZ = 1_000_000_000
MIN_RATE_HZ = Fraction(1, 10**9)
"""The slowest rate: one step per 1e9 s (a period in ns must stay far from int64 limits)."""

# ------------------------------------------------------------------ value schemas

_UNITS = "|".join(sorted(NS_PER_UNIT, key=lambda u: (-len(u), u)))
_DURATION_TEXT = rf"^\s*\+?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*(?:{_UNITS})\s*$"


def duration(*, positive: bool) -> dict[str, Any]:
    """A duration: ``"10ms"``-like text or a number of seconds (orchestrator/timeparse.py)."""
    bound = "exclusiveMinimum" if positive else "minimum"
    return {"anyOf": [
        {"type": "string", "pattern": _DURATION_TEXT, "description": "a number and a unit: "
         '"10ms", "1.5s", "250 us", "2min" (units ns, us, µs, ms, s, min)'},
        {"type": "number", bound: 0, "description": "seconds (0.1 is exactly 100 000 000 ns)"},
    ]}


STRING: Mapping[str, Any] = {"type": "string"}
TEXT: Mapping[str, Any] = {"type": "string", "pattern": r"\S"}
"""A string with something in it (a path, an entry, a title)."""
BOOLEAN: Mapping[str, Any] = {"type": "boolean"}
NAME: Mapping[str, Any] = {"type": "string", "pattern": NAME_RE.pattern}
NAMES: Mapping[str, Any] = {"type": "array", "items": NAME, "uniqueItems": True}
PORT_REF: Mapping[str, Any] = {"type": "string", "pattern": r"^[^.]+\.[^.]+$"}
"""``COMPONENT.PORT``."""
SERIES: Mapping[str, Any] = {
    "type": "array", "minItems": 1,
    "items": {"anyOf": [
        {"type": "string", "pattern": rf"^[^.:]+\.[^.:]+:{FIELD_PATH}$"},
        {"type": "string", "pattern": r"^\s*(diff|norm|unwrap|wrap)\(.*\)\s*$",
         "description": "an expression: diff(A, B), norm(A, B, ...), unwrap(A), wrap(A)"},
    ]},
}
"""A non-empty list of ``COMPONENT.PORT:FIELD`` or expressions of them."""


def enum(options: tuple[str, ...]) -> dict[str, Any]:
    return {"type": "string", "enum": list(options)}


def runs(placements: tuple[str, ...]) -> dict[str, Any]:
    """JSON Schema condition: the component's ``run`` is one of ``placements`` (a
    component without ``run`` runs inproc)."""
    condition: dict[str, Any] = {"properties": {"run": {"enum": list(placements)}}}
    if "inproc" not in placements:
        condition["required"] = ["run"]
    return condition


# ------------------------------------------------------------------ keys and tables

NO_DEFAULT: Any = None
"""No default (TOML has no null, so None never is one)."""


@dataclass(frozen=True)
class Key:
    """One key a rig table may hold."""

    name: str
    schema: Mapping[str, Any]
    """JSON Schema of the value (empty for a nested table: see ``table``)."""
    description: str
    default: Any = NO_DEFAULT
    """The value the loader takes when the key is absent (a TOML value), if any."""
    required: bool = False
    table: Table | None = None
    """The table the value holds, for ``run``, ``components``, ``connections``, ``plots``."""
    shape: str = ""
    """How ``table`` is held: ``"table"``, ``"named"`` (``[components.NAME]``) or
    ``"array"`` (``[[connections]]``)."""
    only: tuple[str, ...] = ()
    """A component key used with these placements only (others refuse it)."""
    ignored_by: tuple[str, ...] = ()
    """Placements that accept the key but ignore it (a replay, so switching back is
    one edit)."""
    required_by: tuple[str, ...] = ()
    """Placements that need the key."""


@dataclass(frozen=True)
class Table:
    """The keys of one kind of table, in the order messages list them."""

    title: str
    """As messages and docs name it: ``[run]``, ``[components.NAME]``."""
    description: str
    keys: tuple[Key, ...]
    rules: tuple[Mapping[str, Any], ...] = ()
    """Constraints between keys that no single key states (JSON Schema)."""
    names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(k.name for k in self.keys))

    def __getitem__(self, name: str) -> Key:
        return next(k for k in self.keys if k.name == name)

    def value(self, table: Mapping[str, Any], name: str) -> Any:
        """``table[name]``, else the key's default (a fresh copy)."""
        return table[name] if name in table else copy.deepcopy(self[name].default)


RUN = Table("[run]", "How long to simulate, with which seed and master algorithm.", (
    Key("until", duration(positive=False), "End of simulated time; steps happen at "
        "instants before it (0: set up and initialise, step nothing). Required unless the "
        "command line gives --until.", required=True),
    Key("seed", {"type": "integer", "minimum": 0, "maximum": SEED_LIMIT - 1},
        "Execution seed, the only source of randomness (noise is keyed by seed, "
        "component, sample and channel).", 0),
    Key("algorithm", enum(ALGORITHMS), "jacobi: the components due at an instant are "
        "stepped in parallel, each seeing the others' previous outputs; gauss-seidel: "
        "one after another, each seeing the outputs just produced.", "jacobi"),
    Key("order", NAMES, "gauss-seidel only: the order at each instant; names every "
        "component exactly once. Empty: the rig's order.", []),
    Key("heartbeat_interval", duration(positive=True), "A process or remote component not "
        "contacted for this long gets a heartbeat.", "1s"),
    Key("peer_timeout", duration(positive=True), "A spawned or served component ends its "
        "session after this long without hearing from the orchestrator, and the "
        "orchestrator gives up on a component whose heartbeat answer is this late. Longer "
        "than heartbeat_interval, at most 300 s (a session must expire).", "10s"),
    Key("max_message_bytes", {"type": "integer", "minimum": 1024, "maximum": 2**31 - 1},
        "The largest frame (request, reply or image attachment), bytes, a process or remote "
        "component may send or receive; a larger one closes the connection (a served "
        "component needs the same --max-message-bytes). Default 16 MiB.", 16 * 2**20),
    Key("record", BOOLEAN, "Write the MCAP recording (the stream digest is computed "
        "either way).", True),
    Key("record_exclude", {"type": "array", "items": PORT_REF}, "Outputs "
        "(\"COMPONENT.PORT\") left out of the recording; still delivered and hashed into "
        "the digest. For bulky streams such as camera pixels.", []),
    Key("foxglove_images", BOOLEAN, "Also write every recorded camera frame as a "
        "foxglove.RawImage on /{component}/{port}/foxglove (a view: the digest does not "
        "change).", False),
    Key("view_scene", STRING, "A scene file (relative to the rig file's folder) that "
        "viewers draw the run in: the live view's 3-D scene (docs/live.md). For rigs in "
        "which no component reads a scene (the pool rigs); components' own scene "
        "parameters are drawn too. Empty: none.", ""),
    Key("plots", BOOLEAN, "Draw PNG plots after the run.", True),
    Key("realtime", {"anyOf": [BOOLEAN, {"type": "number", "exclusiveMinimum": 0}]},
        "Real-time mode (docs/realtime.md): simulated seconds per wall-clock second "
        "(1 or true: real time; 0.5: half speed); false: as fast as possible. "
        "--realtime overrides it.", False),
    Key("overrun", enum(OVERRUN_POLICIES), "Real time: when a tick overruns into the next "
        "one's slot, warn (count and catch up), skip (also re-anchor the schedule when "
        "more than a period late) or abort (fail the run).", "warn"),
    Key("realtime_tolerance", {"anyOf": [duration(positive=True), {"const": "period"}]},
        "Real time: how late a tick may start and the run still count as keeping up "
        "(summary.json realtime.verdict \"met\" or \"missed\"); \"period\": one period "
        "of the fastest component at the factor.", "period"),
    Key("realtime_spin", duration(positive=False), "Real time: the pacer sleeps until "
        "this long before each tick's deadline and busy-waits the rest (at most 10 ms): "
        "a machine that wakes a sleeping thread late by up to that much leaves the tick "
        "on time; the busy-wait costs that much CPU per tick.", "200us"),
    Key("realtime_strict", BOOLEAN, "Real time: a missed verdict fails the run (exit 1); "
        "--strict-realtime sets it. The HIL rigs set it.", False),
    Key("realtime_priority", {"type": "integer", "minimum": 0, "maximum": 99}, "Real time: "
        "0 paces at normal priority; 1-99 runs the stepping thread as a Linux SCHED_FIFO "
        "thread of that priority, ZeroMQ's I/O threads too, and the components' child "
        "processes one below.", 0),
    Key("safe_stop", NAMES, "Components terminated first, in this order, when the run "
        "fails (e.g. [\"mcu\"], whose terminate sends zero thrust).", []),
))

_REPLAY = ("replay",)
_REMOTE = ("remote",)
_LOCAL = ("inproc", "process")
_COMMAND = ("command",)

COMPONENT = Table(
    "[components.NAME]",
    "One component: what to run, where, how often, with which parameters.",
    (
        Key("entry", TEXT, "The component class: a registered short name "
            "(\"quickstart.vehicle\"), \"package.module:Class\" or \"file.py:Class\" "
            "(relative to the rig file's folder). Optional for a remote component; a "
            "replay and a command ignore it.", required_by=_LOCAL),
        Key("run", enum(PLACEMENTS), "Where it runs: in the orchestrator's process "
            "(inproc), in a child process it supervises (process), behind an endpoint "
            "someone else serves (remote), as a replay of its recorded messages "
            "(replay), or as a program in any language the orchestrator starts from "
            "its command line (command).", "inproc"),
        Key("command", {"type": "array", "minItems": 1, "items": TEXT},
            "run = \"command\": the program and its arguments, e.g. [\"./camera_node\", "
            "\"--endpoint\", \"{endpoint}\"]; placeholders {endpoint}, {instance}, "
            "{rig_dir}, {seed}, {parameters.NAME} ({{ and }} for braces). A relative "
            "program path is taken from cwd.", only=_COMMAND, required_by=_COMMAND),
        Key("cwd", TEXT, "run = \"command\": its working directory, inside the rig "
            "file's folder (relative to it; default: that folder).", only=_COMMAND),
        Key("env", {"type": "object", "additionalProperties": {"type": "string"}},
            "run = \"command\": environment variables set for it (on top of the "
            "orchestrator's environment; the same placeholders).", {}, only=_COMMAND),
        Key("endpoint", {"type": "string", "pattern": ENDPOINT_RE.pattern},
            "run = \"remote\": the ZeroMQ endpoint it is served at, tcp://HOST:PORT "
            "(port 1-65535), ipc://PATH or inproc://NAME. A tcp:// endpoint off the "
            "loopback needs server_key and client_key, or insecure = true.",
            only=_REMOTE, ignored_by=_REPLAY, required_by=_REMOTE),
        Key("group", NAME, "run = \"process\": components naming the same group share one "
            "child process (docs/protocol.md, process groups).",
            only=("process",), ignored_by=_REPLAY),
        Key("rate_hz", {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_RATE_HZ},
            "Step rate in Hz (exact: 29.97 is 2997/100), at most 1e9. Exactly one of "
            "rate_hz and period; a replay may leave both out (the recorded schedule)."),
        Key("period", duration(positive=True), "Time between steps; exactly one of rate_hz "
            "and period."),
        Key("offset", duration(positive=False), "Time of the first step.", 0),
        Key("step_timeout", duration(positive=True), "Longest a step may take before the "
            "run fails.", "2s"),
        Key("setup_timeout", duration(positive=True), "Longest describe, configure, "
            "initialize or terminate may take (imports, model loading).", "30s"),
        Key("parameters", {"type": "object"}, "The component's parameters, passed as "
            "written; `moonpool describe ENTRY` lists them.", {}),
        Key("profile", TEXT, "A TOML file (e.g. a vehicle profile), relative to the rig "
            "file's folder, passed whole as the table parameter `profile`."),
        Key("recording", TEXT, "run = \"replay\": the run's recording.mcap to replay, "
            "relative to the rig file's folder.", only=_REPLAY, required_by=_REPLAY),
        Key("source", NAME, "run = \"replay\": the component's name in the recording, when "
            "it had another one (default: its name here).", only=_REPLAY),
        Key("server_key", TEXT, "run = \"remote\": the server's PUBLIC CURVE key file "
            "(NAME.key); with client_key the connection is encrypted and authenticated "
            "(docs/distributed.md).", only=_REMOTE),
        Key("client_key", TEXT, "run = \"remote\": this orchestrator's SECRET CURVE key "
            "file (NAME.key_secret); given together with server_key.", only=_REMOTE),
        Key("insecure", BOOLEAN, "run = \"remote\": connect off the loopback without keys "
            "(no authentication, no encryption); trusted networks only.", False,
            only=_REMOTE),
    ),
    rules=(
        {"not": {"required": ["rate_hz", "period"]}},
        {"if": runs(("inproc", "process", "remote", "command")),
         "then": {"anyOf": [{"required": ["rate_hz"]}, {"required": ["period"]}]}},
        {"dependentRequired": {"server_key": ["client_key"], "client_key": ["server_key"]}},
        {"if": {"anyOf": [{"required": ["server_key"]}, {"required": ["client_key"]}]},
         "then": {"properties": {"insecure": {"const": False}}}},
    ),
)

CONNECTION = Table("[[connections]]", "An output port feeding an input port.", (
    Key("from", PORT_REF, "The output port, COMPONENT.PORT.", required=True),
    Key("to", PORT_REF, "The input port, COMPONENT.PORT (an input takes one connection).",
        required=True),
    Key("delay", duration(positive=False), "Transport delay: a message visible at t "
        "reaches the input at t + delay.", 0),
))

PLOT = Table("[[plots]]", "An extra figure drawn after the run.", (
    Key("title", TEXT, "Figure title; the PNG is named after it.", required=True),
    Key("series", SERIES, "Signals drawn on one axes, each COMPONENT.PORT:FIELD "
        "(FIELD: position_ned_m.z, force_n[0], signals[depth].value) or an expression of "
        "them: diff(A, B), norm(A, B, ...), unwrap(A), wrap(A). kind = \"xy\": pairs "
        "(x, y).", required=True),
    Key("ylabel", STRING, "Y axis label, with its unit.", ""),
    Key("kind", enum(PLOT_KINDS), "time: the series against simulation time; xy: the "
        "series taken in pairs (x, y), each drawn as a track; xyz: in triples (x, y, z), "
        "each drawn as a 3-D track (z down: NED); waterfall: one image per "
        "series, a row per message, a column per element of the FIELD's [*] "
        "(beams[*].true_point_ned_m.z, port_intensity[*]).", "time"),
    Key("xlabel", STRING, "X axis label of an xy or xyz plot, with its unit.", ""),
    Key("zlabel", STRING, "Z axis label of an xyz plot, with its unit.", ""),
))

SCENARIO_TARGET: Mapping[str, Any] = {
    "type": "string",
    "pattern": rf"^[^.:]+\.(?:[A-Za-z_][A-Za-z0-9_]*|[^.:]+:[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)$",
}
"""``COMPONENT.PARAMETER`` (a tunable parameter) or ``COMPONENT.PORT:FIELD`` (an input)."""
SCENARIO_VALUE: Mapping[str, Any] = {"anyOf": [{"type": "number"}, {"type": "boolean"}]}

SCENARIO = Table("[[scenario]]", "A timed change of a tunable parameter or an input "
                 "during the run (docs/rigs.md#scenarios).", (
    Key("at", duration(positive=False), "When: the change applies at the component's "
        "first step at or after this time.", required=True),
    Key("set", SCENARIO_TARGET, "What: COMPONENT.PARAMETER (a tunable parameter, e.g. "
        "an FMU's) or COMPONENT.PORT:FIELD (a numeric field of an input, overridden from "
        "then on).", required=True),
    Key("value", SCENARIO_VALUE, "The value set (a ramp's final value).", required=True),
    Key("end", duration(positive=False), "Ramp: reach value at this time (after at), "
        "linearly from 'from'."),
    Key("from", {"type": "number"}, "Ramp: the value at 'at' (required with end)."),
))

TOP = Table("the top level", "A moonpool rig file (docs/rigs.md).", (
    Key("name", TEXT, "Name of the rig, used for the output folder (default: the file "
        "name without .toml)."),
    Key("description", STRING, "Free text, shown by tools.", ""),
    Key("run", {}, RUN.description, required=True, table=RUN, shape="table"),
    Key("components", {}, "One [components.NAME] table per component (at least one).",
        required=True, table=COMPONENT, shape="named"),
    Key("connections", {}, "One [[connections]] per connection.", table=CONNECTION,
        shape="array"),
    Key("plots", {}, "One [[plots]] per extra figure.", table=PLOT, shape="array"),
    Key("scenario", {}, "One [[scenario]] per timed change of a parameter or input.",
        table=SCENARIO, shape="array"),
))

TOP_KEYS = TOP.names
RUN_KEYS = RUN.names
COMPONENT_KEYS = COMPONENT.names
CONNECTION_KEYS = CONNECTION.names
PLOT_KEYS = PLOT.names
