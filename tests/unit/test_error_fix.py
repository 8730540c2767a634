"""Every Error the SDK sends has a fix (docs/protocol.md §9): the raise sites give one,
and error_to_wire fills the code's default for any raised without."""

from __future__ import annotations

import pytest
from moonpool.components.sdk import errors
from moonpool.components.sdk.errors import DEFAULT_FIX, error_to_wire
from moonpool.v1 import lifecycle_pb2 as lc

CODES = [v for k, v in lc.ErrorCode.items() if v]


def test_every_code_has_a_default_fix():
    assert sorted(DEFAULT_FIX) == sorted(CODES)
    assert all(text.strip() for text in DEFAULT_FIX.values())


@pytest.mark.parametrize("cls", [errors.ParameterError, errors.PortError, errors.LifecycleError,
                                 errors.StepFailed, errors.ProtocolError])
@pytest.mark.parametrize("code", CODES)
def test_an_error_raised_without_a_fix_gets_one_on_the_wire(cls, code):
    exc = cls("something went wrong", component="c")
    exc.code = code
    err = error_to_wire(exc, "c")
    assert err.code == code and err.fix == DEFAULT_FIX[code]


def test_a_given_fix_is_kept_and_foreign_exceptions_get_one():
    assert error_to_wire(errors.PortError("x", fix="do y"), "c").fix == "do y"
    assert error_to_wire(ValueError("boom"), "c").fix


def test_the_malformed_answers_name_a_fix():
    from moonpool.components.sdk import wire

    with pytest.raises(errors.ProtocolError) as info:
        wire.decode_envelope([b"\xff\xff\xff"], lc.Request)
    assert info.value.fix and "UTF-8" in info.value.fix
