"""ComponentHost: lifecycle order, parameter validation, output checks, stamping."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from google.protobuf import struct_pb2

from moonpool.components import Component, Port, param
from moonpool.components.sdk.errors import LifecycleError, ParameterError, PortError, StepFailed
from moonpool.components.sdk.host import ComponentHost
from moonpool.components.sdk import wire
from moonpool.v1 import lifecycle_pb2 as lc
from moonpool.v1 import signals_pb2, vehicle_pb2


class Gain(Component):
    """Multiplies its input by a gain."""

    inputs = (Port("in", signals_pb2.Signals),)
    outputs = (Port("out", signals_pb2.Signals), Port("wrench", vehicle_pb2.Wrench))

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        gain: float = param(2.0, "multiplier")
        label: str = param(doc="required label")
        taps: tuple[float, ...] = param((1.0,), "filter taps")
        count: int = param(3, "how many")
        wrong: bool = param(False, "return a wrong type")

    def configure(self, params):
        self.p = params

    def step(self, t_ns, dt_ns, inputs):
        if self.p.wrong:
            return {"out": vehicle_pb2.Wrench()}
        m = inputs.get("in")
        out = signals_pb2.Signals(header=self.header(t_ns))
        out.signals.add(name="y", value=self.p.gain * (m.signals[0].value if m else 0.0))
        return {"out": out}


def configured(**params):
    host = ComponentHost(Gain())
    msg = lc.Configure(instance_name="g", seed=7)
    for k, v in params.items():
        msg.parameters.add(name=k, value=wire.to_parameter_value(v))
    host.configure(msg)
    return host


def test_lifecycle_order_is_enforced():
    host = ComponentHost(Gain())
    with pytest.raises(LifecycleError, match="step called while created"):
        host.step(0, 10, {})
    host = configured(label="x")
    with pytest.raises(LifecycleError):
        host.configure(lc.Configure())
    host.initialize(0)
    host.step(0, 10, {})
    with pytest.raises(LifecycleError, match="back in time"):
        host.step(5, 10, {})
    assert host.terminate() == {}
    with pytest.raises(LifecycleError):
        host.step(20, 10, {})


def test_parameters_are_validated_all_at_once():
    with pytest.raises(ParameterError) as err:
        configured(gian=3.0, count=1.5, taps=["a"])
    text = str(err.value)
    assert "unknown parameter 'gian' (did you mean 'gain'?)" in text
    assert "'count' expects an integer" in text
    assert "'taps' expects an array of numbers" in text
    assert "missing required parameter 'label'" in text
    assert "component 'g'" in text


def test_parameters_are_coerced_to_declared_types():
    host = configured(label="x", gain=3, taps=[1, 2.5], count=4.0)
    p = host.component.p
    assert p.gain == 3.0 and isinstance(p.gain, float)
    assert p.taps == (1.0, 2.5) and p.count == 4


def test_outputs_are_stamped_and_typed():
    host = configured(label="x")
    host.initialize(0)
    inp = signals_pb2.Signals()
    inp.signals.add(name="u", value=1.5)
    outs = [host.step(k * 10, 10, {"in": inp}) for k in range(3)]
    msgs = [o[0].message for o in outs]
    assert [m.header.seq for m in msgs] == [0, 1, 2]
    assert all(m.header.source == "g" for m in msgs)
    assert msgs[0].signals[0].value == 3.0
    assert outs[0][0].payload == wire.serialize(msgs[0])


def test_wrong_output_type_fails_the_component():
    host = configured(label="x", wrong=True)
    host.initialize(0)
    with pytest.raises(PortError, match="output 'out' must be moonpool.v1.Signals"):
        host.step(0, 10, {})
    assert host.state == lc.COMPONENT_STATE_FAILED


def test_exception_in_step_becomes_step_failed_naming_the_component():
    host = configured(label="x")
    host.initialize(0)
    bad = signals_pb2.Signals()  # no signals: m.signals[0] raises IndexError
    with pytest.raises(StepFailed) as err:
        host.step(0, 10, {"in": bad})
    assert "component 'g'" in str(err.value) and "IndexError" in str(err.value)


def test_decode_inputs_rejects_unknown_port_and_wrong_type():
    host = configured(label="x")
    with pytest.raises(PortError, match="unknown port 'zzz'"):
        host.decode_inputs([lc.PortValue(port="zzz", type="moonpool.v1.Signals")], [])
    with pytest.raises(PortError, match="expects moonpool.v1.Signals"):
        host.decode_inputs([lc.PortValue(port="in", type="moonpool.v1.Wrench")], [])
    with pytest.raises(PortError, match="not a valid"):
        host.decode_inputs([lc.PortValue(port="in", type="moonpool.v1.Signals",
                                         payload=b"\xff\xff\xff")], [])


def test_describe_lists_ports_and_parameters():
    d = ComponentHost(Gain()).describe()
    assert [p.name for p in d.inputs] == ["in"]
    assert [p.type for p in d.outputs] == ["moonpool.v1.Signals", "moonpool.v1.Wrench"]
    params = {p.name: p for p in d.parameters}
    assert params["label"].required and not params["gain"].required
    assert params["gain"].default_value.double_value == 2.0
    assert params["taps"].type == lc.PARAMETER_TYPE_DOUBLE_ARRAY
    assert d.description == "Multiplies its input by a gain."


class MapSource(Component):
    """Outputs a google.protobuf.Struct (a map) filled in reverse key order, and a
    Signals (no map anywhere)."""

    inputs = ()
    outputs = (Port("table", struct_pb2.Struct), Port("plain", signals_pb2.Signals))

    @dataclass(frozen=True, kw_only=True)
    class Parameters:
        pass

    def configure(self, params):
        pass

    def step(self, t_ns, dt_ns, inputs):
        table = struct_pb2.Struct()
        for key in ("zulu", "mike", "alpha", "kilo", "bravo"):  # not sorted
            table.fields[key].number_value = len(key)
        plain = signals_pb2.Signals(header=self.header(t_ns))
        plain.signals.add(name="y", value=1.5)
        return {"table": table, "plain": plain}


def test_map_types_are_found_through_nesting_and_cycles():
    assert wire.has_map_fields(struct_pb2.Struct.DESCRIPTOR)
    assert wire.has_map_fields(struct_pb2.Value.DESCRIPTOR)  # Value -> Struct -> Value ...
    assert not wire.has_map_fields(signals_pb2.Signals.DESCRIPTOR)
    assert not wire.has_map_fields(vehicle_pb2.Wrench.DESCRIPTOR)


def test_outputs_are_serialized_deterministically_with_or_without_maps():
    # A type without map fields takes the plain (faster) serialization; one with a map
    # the deterministic one (keys sorted). Both payloads must equal the deterministic
    # serialization, which the digest and the recordings are defined on.
    host = ComponentHost(MapSource())
    host.configure(lc.Configure(instance_name="m", seed=1))
    host.initialize(0)
    outputs = {o.port: o for o in host.step(0, 10, {})}
    table = struct_pb2.Struct.FromString(outputs["table"].payload)
    assert outputs["table"].payload == table.SerializeToString(deterministic=True)
    at = [outputs["table"].payload.find(k.encode()) for k in ("alpha", "bravo", "kilo", "mike",
                                                               "zulu")]
    assert at == sorted(at) and min(at) > 0  # sorted keys on the wire
    plain = signals_pb2.Signals.FromString(outputs["plain"].payload)
    assert outputs["plain"].payload == plain.SerializeToString(deterministic=True)
