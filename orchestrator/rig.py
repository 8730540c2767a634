"""The rig: a typed, frozen description of one execution.

Built only by the ``rigfile`` package (the only code that parses TOML); everything else
reads these dataclasses. Times are integer nanoseconds. docs/rigs.md is the
reference of the file format these come from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

Placement = Literal["inproc", "process", "remote", "replay", "command"]
"""Where a component runs: in the orchestrator's process, in a child process the
orchestrator spawns and supervises, behind an endpoint someone else serves, or not at
all: ``replay`` serves its outputs from an MCAP recording (adapters/replay.py)."""

OverrunPolicy = Literal["warn", "skip", "abort"]
"""What real-time mode does when a tick overruns its slot (orchestrator/realtime.py)."""

Algorithm = Literal["jacobi", "gauss-seidel"]
"""How components due at the same instant are stepped (docs/architecture.md)."""


@dataclass(frozen=True)
class Schedule:
    """When a component is stepped: instants ``offset_ns + round(k * 1e9 / rate_hz)``.

    A period given in the rig is stored as the exact rate ``1e9 / period_ns``, so
    both spellings give integer instants that are the same on every run.
    """

    rate_hz: Fraction
    """Exact step rate, Hz (a rational: 30 Hz stays 30, not 29.999...)."""
    offset_ns: int = 0
    """Time of the first step, ns (>= 0)."""

    def instant(self, k: int) -> int:
        """Time of step k, ns: offset + round-half-up(k * 1e9 / rate), in integers only."""
        # rate = p/q  =>  k*1e9/rate = k*1e9*q/p;  round-half-up = floor((2*k*1e9*q + p) / (2p))
        p, q = self.rate_hz.numerator, self.rate_hz.denominator
        return self.offset_ns + (2 * k * 1_000_000_000 * q + p) // (2 * p)

    @property
    def nominal_period_ns(self) -> int:
        """The period rounded to whole nanoseconds (for information only)."""
        return int((Fraction(1_000_000_000) / self.rate_hz + Fraction(1, 2)).__floor__())


@dataclass(frozen=True)
class ComponentConfig:
    """One component of the rig (a ``[components.NAME]`` table)."""

    name: str
    """Instance name: unique in the rig; used in topics, headers and errors."""
    entry: str
    """What to run: a registered short name, ``module:Class`` or ``file.py:Class``
    (a ``command``: its Python twin, for ``--mode``; may be empty)."""
    placement: Placement
    """Where it runs (``run`` key): inproc, process, remote, replay or command."""
    schedule: Schedule
    """When it is stepped."""
    parameters: dict[str, Any] = field(default_factory=dict)
    """Parameter values, passed to the component's configure (validated there)."""
    endpoint: str = ""
    """ZeroMQ endpoint of a remote component (``tcp://host:port``, ``ipc://path``)."""
    group: str = ""
    """Process group (``run = "process"`` only): components naming the same group share
    one child process and are stepped with one message per instant."""
    step_timeout_ns: int = 2_000_000_000
    """Longest a step may take before the run fails with StepTimeout."""
    setup_timeout_ns: int = 30_000_000_000
    """Longest describe/configure/initialize/terminate may take (imports, model loading)."""
    base_dir: Path = Path(".")
    """Folder relative ``file.py`` entries and files in parameters are taken from."""
    recording: Path | None = None
    """``run = "replay"`` only: the MCAP recording whose messages this component replays
    (resolved against the rig file's folder)."""
    source: str = ""
    """``run = "replay"`` only: the component's name in the recording (its topics are
    ``/{source}/{port}``); empty means the same name."""

    @property
    def recorded_name(self) -> str:
        """The name whose topics a replay serves (``source`` or the name)."""
        return self.source or self.name
    server_key: Path | None = None
    """Remote only: the component server's public CURVE key file (``NAME.key``); with
    ``client_key``, the connection is encrypted and both ends authenticated."""
    client_key: Path | None = None
    """Remote only: this orchestrator's secret CURVE key file (``NAME.key_secret``)."""
    insecure: bool = False
    """Remote only: connect without keys although the endpoint leaves the loopback."""
    command: tuple[str, ...] = ()
    """``run = "command"`` only: the program and its arguments, placeholders unexpanded
    (``{endpoint}``, ``{instance}``, ``{rig_dir}``, ``{seed}``, ``{parameters.NAME}``)."""
    cwd: Path | None = None
    """``run = "command"`` only: its working directory (inside the rig's folder)."""
    env: tuple[tuple[str, str], ...] = ()
    """``run = "command"`` only: environment variables (name, template) set for it."""


@dataclass(frozen=True)
class ConnectionConfig:
    """A connection from an output port to an input port (a ``[[connections]]`` entry)."""

    source: str
    """Producing component instance."""
    source_port: str
    """Its output port."""
    target: str
    """Consuming component instance."""
    target_port: str
    """Its input port."""
    delay_ns: int = 0
    """Extra transport delay: a message visible at t reaches the input at t + delay."""

    def __str__(self) -> str:
        d = f" (delay {self.delay_ns} ns)" if self.delay_ns else ""
        return f"{self.source}.{self.source_port} -> {self.target}.{self.target_port}{d}"


@dataclass(frozen=True)
class PlotSpec:
    """A figure the run draws from its recording (a ``[[plots]]`` entry)."""

    title: str
    """Figure title; also the PNG file name (slugified)."""
    series: tuple[str, ...]
    """Signals to draw, each ``component.port:field.path`` (e.g. ``vehicle.state:position_ned_m.z``)."""
    ylabel: str = ""
    """Y axis label, with the unit."""
    kind: str = "time"
    """``time``: every series against simulation time; ``xy``: the series are pairs
    (x, y), each drawn as a track (e.g. east, north); ``xyz``: triples (x, y, z), 3-D
    tracks, z down; ``waterfall``: an image per series, a row per message of its
    ``[*]`` elements (orchestrator/plots.py)."""
    xlabel: str = ""
    """X axis label of an ``xy`` or ``xyz`` plot, with the unit."""
    zlabel: str = ""
    """Z axis label of an ``xyz`` plot, with the unit."""


@dataclass(frozen=True)
class ScenarioEvent:
    """A timed change during the run (a ``[[scenario]]`` entry): from ``at_ns`` on, the
    target holds ``value``; with ``end_ns`` it ramps linearly from ``start`` at ``at_ns``
    to ``value`` at ``end_ns``, then holds it."""

    at_ns: int
    """When the change starts: it applies at the component's first step with t >= at."""
    component: str
    """The component whose parameter or input is changed."""
    parameter: str
    """A tunable parameter of the component (``COMPONENT.PARAMETER``), or "" for an input."""
    port: str
    """An input port (``COMPONENT.PORT:FIELD``), or "" for a parameter."""
    field: str
    """The input's message field path (``force_n.x``), or "" for a parameter."""
    value: float | int | bool
    """The value set (a ramp's final value)."""
    end_ns: int | None = None
    """A ramp's end; None for a step change."""
    start: float | None = None
    """A ramp's value at ``at_ns`` (its ``from``)."""

    @property
    def target(self) -> str:
        """As the rig writes it: ``vehicle.D2_u`` or ``vehicle.wrench:force_n.x``."""
        if self.parameter:
            return f"{self.component}.{self.parameter}"
        return f"{self.component}.{self.port}:{self.field}"


@dataclass(frozen=True)
class RunConfig:
    """The ``[run]`` table: how long, with which seed, with which algorithm."""

    until_ns: int
    """Simulation end time, ns (steps start at 0 and stop before this instant)."""
    seed: int = 0
    """Execution seed; keyed noise depends on it and nothing else random."""
    algorithm: Algorithm = "jacobi"
    """Jacobi (parallel, outputs visible one step later) or Gauss-Seidel (in order, no added delay)."""
    order: tuple[str, ...] = ()
    """Gauss-Seidel order of components due at the same instant (default: rig order)."""
    heartbeat_interval_ns: int = 1_000_000_000
    """A process or remote component that has not been contacted for this long gets a heartbeat."""
    peer_timeout_ns: int = 10_000_000_000
    """A spawned or served component ends its session after this long without a word."""
    max_message_bytes: int = 16 * 2**20
    """The largest frame (request, reply or attachment), bytes, the orchestrator's sockets
    and its spawned components accept (ZMQ_MAXMSGSIZE; docs/protocol.md §2)."""
    record: bool = True
    """Write the MCAP recording (the digest is computed either way)."""
    record_exclude: tuple[str, ...] = ()
    """Outputs (``COMPONENT.PORT``) left out of the recording, e.g. camera pixels: their
    messages are still delivered and hashed into the digest, only not written."""
    foxglove_images: bool = False
    """Also write every recorded camera frame (an ImageHeader output with pixels) as a
    ``foxglove.RawImage`` on ``{topic}/foxglove``, which Foxglove's Image panel shows;
    a view beside the stream: readers skip it and the digest does not change."""
    view_scene: Path | None = None
    """A scene file viewers draw the run in (the live view's 3-D scene), for rigs in
    which no component reads one (the pool rigs); absolute. Components that sense a
    scene name their own (their ``scene`` parameter), which viewers draw too."""
    plots: bool = True
    """Draw PNG plots after the run."""
    realtime: Fraction | None = None
    """Real-time factor: simulated seconds per wall-clock second (1 = real time, 0.5 =
    half speed), exact; None runs as fast as possible."""
    overrun: OverrunPolicy = "warn"
    """Real-time mode: what to do when a tick overruns its slot (warn, skip, abort)."""
    realtime_tolerance_ns: int | None = None
    """Real-time mode: how late (wall clock, ns) a tick may start for the run to count
    as keeping up (``realtime.verdict`` "met"); None: one period of the fastest
    component at the factor."""
    realtime_strict: bool = False
    """Real-time mode: a "missed" verdict fails the run (exit 1)."""
    realtime_priority: int = 0
    """Real-time mode: 0 steps at normal priority; 1-99 as a SCHED_FIFO thread of that
    priority (Linux; needs the right to)."""
    realtime_spin_ns: int = 200_000
    """Real-time mode: the pacer sleeps until this long (ns) before a tick's deadline and
    busy-waits the rest, absorbing the machine's late wake-ups up to that much."""
    safe_stop: tuple[str, ...] = ()
    """Components terminated first, in this order, when the run fails (e.g. the MCU
    bridge, whose terminate zeroes the thrust), before every other component."""


@dataclass(frozen=True)
class Rig:
    """A whole rig, validated."""

    path: Path
    """The rig file it came from."""
    name: str
    """Rig name (``name`` key, default: file stem)."""
    run: RunConfig
    """Run settings."""
    components: tuple[ComponentConfig, ...]
    """Components, in file order (the default Gauss-Seidel order and the order of records)."""
    connections: tuple[ConnectionConfig, ...]
    """Connections between ports."""
    plots: tuple[PlotSpec, ...] = ()
    """Figures to draw in addition to the generic per-component plots."""
    scenarios: tuple[ScenarioEvent, ...] = ()
    """Timed changes of tunable parameters and inputs (``[[scenario]]``), in file order."""
    description: str = ""
    """Free text from the rig's ``description`` key."""
    source_text: str = ""
    """The rig file's text after overrides, recorded beside the run."""

    def component(self, name: str) -> ComponentConfig:
        for c in self.components:
            if c.name == name:
                return c
        raise KeyError(name)
