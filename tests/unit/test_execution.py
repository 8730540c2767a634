"""Execution semantics: schedules, Jacobi and Gauss-Seidel visibility, delays,
queued inputs, initial outputs, wiring checks."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from moonpool.components.sdk.errors import RigValidationError
from moonpool.orchestrator.adapters.inprocess import InProcessAdapter
from moonpool.orchestrator.execution import Execution
from moonpool.orchestrator.rig import ComponentConfig, ConnectionConfig, Rig, RunConfig, Schedule
from moonpool.v1 import signals_pb2

import probes


class Memory:
    """Observer keeping (topic, log_time_ns, decoded Signals)."""

    def __init__(self):
        self.topics = []
        self.rows = []

    def add_topic(self, topic, type_name, extra_schemas=b""):
        self.topics.append(topic)
        return len(self.topics) - 1

    def write(self, channel, log_time_ns, payload, attachment=None):
        self.rows.append((self.topics[channel], log_time_ns, payload))

    def values(self, topic):
        out = []
        for t, time_ns, payload in self.rows:
            if t == topic:
                m = signals_pb2.Signals.FromString(payload)
                out.append((time_ns, [s.value for s in m.signals]))
        return out


def make(components, connections, until_ns, algorithm="jacobi", order=()):
    comps = tuple(
        ComponentConfig(name, f"probes:{cls}", "inproc", Schedule(Fraction(rate), offset),
                        parameters=params)
        for name, cls, rate, offset, params in components
    )
    conns = tuple(ConnectionConfig(*c) for c in connections)
    rig = Rig(Path("test.toml"), "test",
              RunConfig(until_ns=until_ns, algorithm=algorithm, order=tuple(order)), comps, conns)
    adapters = {
        c.name: InProcessAdapter(c.name, getattr(probes, c.entry.split(":")[1])(),
                                 step_timeout_ns=10**9)
        for c in comps
    }
    memory = Memory()
    ex = Execution(rig, adapters, memory)
    ex.setup()
    ex.run()
    ex.shutdown(True)
    return ex, memory


def test_schedule_instants_are_exact_integers():
    s = Schedule(Fraction(30))
    assert [s.instant(k) for k in range(4)] == [0, 33_333_333, 66_666_667, 100_000_000]
    assert s.instant(30 * 3600) == 3600 * 10**9  # no drift after an hour
    assert Schedule(Fraction(10**9, 10_000_000), 5).instant(3) == 30_000_005
    assert Schedule(Fraction("29.97")).instant(2997) == 100 * 10**9


def test_multirate_ticks_are_the_union_of_instants():
    ex, mem = make([("a", "Count", 30, 0, {}), ("b", "Count", 100, 0, {})], [], 10**9)
    a = {Schedule(Fraction(30)).instant(k) for k in range(30)}
    b = {Schedule(Fraction(100)).instant(k) for k in range(100)}
    assert ex.ticks == len(a | b)
    assert ex.by_name["a"].steps == 30 and ex.by_name["b"].steps == 100


def test_components_on_one_schedule_share_a_cohort_and_keep_the_rank_order():
    # a and c run at 100 Hz, b and d at 50 Hz, e at 50 Hz shifted by 5 ms: three
    # cohorts. At an instant where several are due, the components are stepped (and
    # publish, in-process) in rank order across cohorts: the declaration order under
    # Jacobi, run.order under Gauss-Seidel.
    comps = [("a", "Count", 100, 0, {}), ("b", "Count", 50, 0, {}), ("c", "Count", 100, 0, {}),
             ("d", "Count", 50, 0, {}), ("e", "Count", 50, 5_000_000, {})]
    ex, mem = make(comps, [], 40_000_000)
    assert sorted(sorted(s.name for s in c.members) for c in ex.cohorts) == [
        ["a", "c"], ["b", "d"], ["e"]]
    assert [topic for topic, _, _ in mem.rows[:5]] == [  # t = 0, then e at 5 ms
        "/a/out", "/b/out", "/c/out", "/d/out", "/e/out"]
    assert [ex.by_name[n].steps for n in "abcde"] == [4, 2, 4, 2, 2]
    ex, mem = make(comps, [], 40_000_000, "gauss-seidel", order=["c", "e", "b", "a", "d"])
    at_zero = [topic for topic, t, _ in mem.rows if t == 0]
    assert at_zero == ["/c/out", "/b/out", "/a/out", "/d/out"]
    at_20ms = [topic for topic, t, _ in mem.rows if t == 20_000_000]
    assert at_20ms == ["/c/out", "/b/out", "/a/out", "/d/out"]
    assert [topic for topic, t, _ in mem.rows if t == 25_000_000] == ["/e/out"]


def test_jacobi_output_is_visible_at_the_end_of_the_step():
    ex, mem = make([("src", "Count", 100, 0, {}), ("probe", "Probe", 100, 0, {})],
                   [("src", "out", "probe", "in")], 100_000_000)
    # Count's step at t_k produces k, visible at t_{k+1}; the probe at t_{k+1} sees k.
    seen = mem.values("/probe/seen")
    assert seen[0] == (10_000_000, [])  # nothing visible at t=0
    assert seen[1] == (20_000_000, [0.0])
    assert seen[5] == (60_000_000, [4.0])
    src = mem.values("/src/out")
    assert src[0][0] == 10_000_000  # recorded at its visibility time


def test_gauss_seidel_adds_no_delay_in_order():
    ex, mem = make([("src", "Count", 100, 0, {}), ("probe", "Probe", 100, 0, {})],
                   [("src", "out", "probe", "in")], 100_000_000, "gauss-seidel")
    seen = mem.values("/probe/seen")
    assert seen[0] == (0, [0.0]) and seen[5] == (50_000_000, [5.0])


def test_gauss_seidel_order_reversed_reads_the_previous_instant():
    ex, mem = make([("src", "Count", 100, 0, {}), ("probe", "Probe", 100, 0, {})],
                   [("src", "out", "probe", "in")], 100_000_000, "gauss-seidel",
                   order=["probe", "src"])
    seen = mem.values("/probe/seen")
    assert seen[0] == (0, []) and seen[5] == (50_000_000, [4.0])


def test_connection_delay_shifts_delivery():
    ex, mem = make([("src", "Count", 100, 0, {}), ("probe", "Probe", 100, 0, {})],
                   [("src", "out", "probe", "in", 25_000_000)], 200_000_000)
    seen = dict(mem.values("/probe/seen"))
    # value k visible at (k+1)*10 ms, delivered at (k+1)*10 + 25 ms; probe steps every 10 ms
    # so at t = 50 ms it has the value visible at <= 25 ms, i.e. k = 1.
    assert seen[60_000_000] == [1.0]
    assert seen[40_000_000] == []


def test_queued_input_gets_every_message_in_order():
    ex, mem = make([("src", "Count", 100, 0, {}), ("probe", "QueueProbe", 20, 0, {})],
                   [("src", "out", "probe", "in")], 300_000_000)
    seen = mem.values("/probe/seen")
    assert seen[1] == (100_000_000, [0.0, 1.0, 2.0, 3.0, 4.0])  # step at 50 ms
    got = [v for _, vals in seen for v in vals]
    assert got == sorted(got) and len(got) == len(set(got))


def test_initial_outputs_are_visible_at_start():
    ex, mem = make([("src", "Count", 100, 0, {"initial_output": True}),
                    ("probe", "Probe", 100, 0, {})],
                   [("src", "out", "probe", "in")], 50_000_000)
    assert mem.values("/probe/seen")[0] == (10_000_000, [-1.0])
    assert mem.values("/src/out")[0] == (0, [-1.0, 0.0])


def test_offsets_shift_the_schedule():
    ex, mem = make([("src", "Count", 10, 30_000_000, {})], [], 350_000_000)
    times = [t for t, _ in mem.values("/src/out")]
    assert times[:3] == [130_000_000, 230_000_000, 330_000_000]


def test_header_seq_counts_per_port_and_source_is_instance_name():
    ex, mem = make([("alpha", "Count", 100, 0, {})], [], 50_000_000)
    msgs = [signals_pb2.Signals.FromString(p) for t, _, p in mem.rows]
    assert [m.header.seq for m in msgs] == [0, 1, 2, 3, 4]
    assert {m.header.source for m in msgs} == {"alpha"}


def test_wiring_problems_are_all_reported():
    with pytest.raises(RigValidationError) as err:
        make([("src", "Count", 100, 0, {}), ("sink", "WrenchSink", 100, 0, {}),
              ("probe", "Probe", 100, 0, {})],
             [("src", "out", "sink", "in"),          # type mismatch
              ("src", "nope", "probe", "in"),        # unknown output
              ("src", "out", "probe", "missing")],   # unknown input
             10_000_000)
    text = str(err.value)
    assert "3 problems" in text
    assert "moonpool.v1.Signals" in text and "moonpool.v1.Wrench" in text
    assert "no output 'nope'" in text and "no input 'missing'" in text
