"""docs/protocol.md §8 "Without a protobuf library" requires a strict, spec-following
decoder. Python protobuf (the SDK's) does what the table says, row by row; a
library that does not (protobufjs, as reported by a JavaScript implementation)
cannot give the documented MALFORMED / INVALID_INPUT answers."""

from __future__ import annotations

import pytest
from google.protobuf.message import DecodeError
from moonpool.components.sdk.wire import varint
from moonpool.v1 import lifecycle_pb2 as lc


def _parse(data: bytes) -> lc.Request:
    msg = lc.Request()
    msg.ParseFromString(data)
    return msg


def test_unknown_fields_and_known_fields_of_another_wire_type_are_skipped():
    # field 30 (unknown, length 0); field 2 (request_id, a varint) sent as fixed64
    req = _parse(b"\x08\x01" + b"\xf2\x01\x00" + b"\x11" + bytes(8) + b"\x52\x00")
    assert req.protocol_version == 1 and req.request_id == 0
    assert req.WhichOneof("body") == "describe"


def test_the_last_value_wins_and_sub_messages_merge():
    # request_id 5 then 7; configure twice: instance_name, then seed: merged
    req = _parse(b"\x10\x05\x10\x07" + b"\x5a\x03\x0a\x01a" + b"\x5a\x02\x10\x09")
    assert req.request_id == 7
    assert (req.configure.instance_name, req.configure.seed) == ("a", 9)


def test_two_bodies_the_last_on_the_wire_wins():
    assert _parse(b"\x52\x00\x7a\x00").WhichOneof("body") == "heartbeat"  # describe, heartbeat
    assert _parse(b"\x7a\x00\x52\x00").WhichOneof("body") == "describe"


def test_repeated_scalars_packed_or_not():
    packed = lc.DoubleArray.FromString(b"\x0a\x10" + bytes(8) + b"\x00" * 7 + b"\x40")
    unpacked = lc.DoubleArray.FromString(b"\x09" + bytes(8) + b"\x09" + b"\x00" * 7 + b"\x40")
    assert list(packed.values) == list(unpacked.values) == [0.0, 2.0]


def test_a_uint32_takes_the_low_32_bits_of_a_long_varint():
    big = (1 << 40) + 1
    assert len(varint(big)) == 6
    assert _parse(b"\x08" + varint(big)).protocol_version == 1


@pytest.mark.parametrize("data", [
    b"\x10" + b"\xff" * 10 + b"\x01",        # a varint longer than 10 bytes
    b"\x1a\x05ab",                            # a length past the end
    b"\x00\x01",                              # field number 0
    b"\x0e",                                  # wire type 6
    b"\x0c",                                  # an unmatched end group (field 1)
    b"\x1a\x02\xff\xfe",                      # instance: not UTF-8
    b"\x6a\x04\x1a\x02\x0a\x05",              # step.inputs[0] cut: the whole Request
])
def test_what_does_not_parse(data):
    with pytest.raises(DecodeError):
        _parse(data)


def test_bytes_are_left_to_the_component():
    # PortValue.payload: any bytes (the component decodes them: INVALID_INPUT)
    req = _parse(b"\x6a\x07\x1a\x05\x1a\x03\xff\xff\xff")
    assert req.step.inputs[0].payload == b"\xff\xff\xff"


# -- the JavaScript libraries (docs/protocol.md, "Which protobuf libraries") -------------

JS_CASES = {
    "unknown_and_wrong_wire_type": b"\x08\x01\xf2\x01\x00\x11" + bytes(8) + b"\x52\x00",
    "last_wins_and_merge": b"\x08\x01\x10\x05\x10\x07\x5a\x03\x0a\x01a\x5a\x02\x10\x09",
    "two_bodies": b"\x08\x01\x52\x00\x7a\x00",
    "long_varint_uint32": b"\x08" + varint((1 << 40) + 1) + b"\x52\x00",
    "invalid_utf8": b"\x08\x01\x1a\x02\xff\xfe\x52\x00",
    "varint_too_long": b"\x10" + b"\xff" * 10 + b"\x01",
    "length_past_end": b"\x1a\x05ab",
    "field_zero": b"\x00\x01",
    "wire_type_6": b"\x0e",
    "unmatched_end_group": b"\x0c",
    "cut_nested": b"\x6a\x04\x1a\x02\x0a\x05",
}
# Where each library decodes otherwise than Python protobuf (measured with protobufjs
# 7 and @bufbuild/protobuf 2; the table in docs/protocol.md says the same).
JS_DEVIATIONS = {
    "protobufjs": {"unknown_and_wrong_wire_type", "last_wins_and_merge", "long_varint_uint32",
                   "invalid_utf8", "length_past_end", "field_zero", "cut_nested"},
    "protobuf-es": {"unknown_and_wrong_wire_type"},
}


def _python_summary(data: bytes) -> dict:
    try:
        m = _parse(data)
    except DecodeError:
        return {"parses": False}
    body = m.WhichOneof("body")
    return {"parses": True, "version": m.protocol_version, "request_id": m.request_id,
            "body": body, "instance": m.instance,
            "configure": [m.configure.instance_name, m.configure.seed]
            if body == "configure" else None}


def test_javascript_libraries_deviate_where_the_doc_says(tmp_path):
    """Needs node and a folder with node_modules/protobufjs and @bufbuild/protobuf
    (`npm install protobufjs@7 @bufbuild/protobuf@2`) named by MOONPOOL_JS_MODULES;
    skipped otherwise (nothing is downloaded by the tests)."""
    import json
    import os
    import shutil
    import subprocess
    from pathlib import Path

    from moonpool.components.sdk.wire import file_descriptor_set

    node, modules = shutil.which("node"), os.environ.get("MOONPOOL_JS_MODULES", "")
    if node is None or not modules or not (Path(modules) / "node_modules").is_dir():
        pytest.skip("set MOONPOOL_JS_MODULES to a folder where `npm install protobufjs@7 "
                    "@bufbuild/protobuf@2` was run (and have node on PATH)")
    root = Path(__file__).resolve().parents[2]
    fds = tmp_path / "lifecycle.fds"
    fds.write_bytes(file_descriptor_set([lc.Request.DESCRIPTOR]).SerializeToString())
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({k: v.hex() for k, v in JS_CASES.items()}))
    proc = subprocess.run(
        [node, str(root / "tests" / "support" / "protobuf_js_rules.mjs"),
         str(root / "proto" / "moonpool" / "v1" / "lifecycle.proto"), str(fds), str(cases)],
        cwd=modules, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    for library, expected in JS_DEVIATIONS.items():
        results = found[library]
        assert "unavailable" not in results, results
        differs = set()
        for name, data in JS_CASES.items():
            py, js = _python_summary(data), results[name]
            if py["parses"] != js["parses"] or (py["parses"] and any(
                    js.get(k) != v for k, v in py.items())):
                differs.add(name)
        assert differs == expected, (library, differs, results)
