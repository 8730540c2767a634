from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RefusalReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REFUSAL_REASON_UNSPECIFIED: _ClassVar[RefusalReason]
    REFUSAL_REASON_OUT_OF_RANGE: _ClassVar[RefusalReason]
    REFUSAL_REASON_ABOVE_SURFACE: _ClassVar[RefusalReason]
    REFUSAL_REASON_UNDER_WATER: _ClassVar[RefusalReason]
    REFUSAL_REASON_NO_LOCK: _ClassVar[RefusalReason]
    REFUSAL_REASON_DROPOUT: _ClassVar[RefusalReason]
    REFUSAL_REASON_SATURATED: _ClassVar[RefusalReason]
    REFUSAL_REASON_NOT_DETECTED: _ClassVar[RefusalReason]
    REFUSAL_REASON_UPSTREAM_INVALID: _ClassVar[RefusalReason]
    REFUSAL_REASON_NOT_READY: _ClassVar[RefusalReason]
    REFUSAL_REASON_FAULT: _ClassVar[RefusalReason]
REFUSAL_REASON_UNSPECIFIED: RefusalReason
REFUSAL_REASON_OUT_OF_RANGE: RefusalReason
REFUSAL_REASON_ABOVE_SURFACE: RefusalReason
REFUSAL_REASON_UNDER_WATER: RefusalReason
REFUSAL_REASON_NO_LOCK: RefusalReason
REFUSAL_REASON_DROPOUT: RefusalReason
REFUSAL_REASON_SATURATED: RefusalReason
REFUSAL_REASON_NOT_DETECTED: RefusalReason
REFUSAL_REASON_UPSTREAM_INVALID: RefusalReason
REFUSAL_REASON_NOT_READY: RefusalReason
REFUSAL_REASON_FAULT: RefusalReason

class Header(_message.Message):
    __slots__ = ("sim_time_ns", "seq", "source", "frame_id")
    SIM_TIME_NS_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    FRAME_ID_FIELD_NUMBER: _ClassVar[int]
    sim_time_ns: int
    seq: int
    source: str
    frame_id: str
    def __init__(self, sim_time_ns: _Optional[int] = ..., seq: _Optional[int] = ..., source: _Optional[str] = ..., frame_id: _Optional[str] = ...) -> None: ...

class Vector3(_message.Message):
    __slots__ = ("x", "y", "z")
    X_FIELD_NUMBER: _ClassVar[int]
    Y_FIELD_NUMBER: _ClassVar[int]
    Z_FIELD_NUMBER: _ClassVar[int]
    x: float
    y: float
    z: float
    def __init__(self, x: _Optional[float] = ..., y: _Optional[float] = ..., z: _Optional[float] = ...) -> None: ...

class Quaternion(_message.Message):
    __slots__ = ("w", "x", "y", "z")
    W_FIELD_NUMBER: _ClassVar[int]
    X_FIELD_NUMBER: _ClassVar[int]
    Y_FIELD_NUMBER: _ClassVar[int]
    Z_FIELD_NUMBER: _ClassVar[int]
    w: float
    x: float
    y: float
    z: float
    def __init__(self, w: _Optional[float] = ..., x: _Optional[float] = ..., y: _Optional[float] = ..., z: _Optional[float] = ...) -> None: ...

class Validity(_message.Message):
    __slots__ = ("valid", "reason", "detail")
    VALID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    valid: bool
    reason: RefusalReason
    detail: str
    def __init__(self, valid: _Optional[bool] = ..., reason: _Optional[_Union[RefusalReason, str]] = ..., detail: _Optional[str] = ...) -> None: ...

class Covariance(_message.Message):
    __slots__ = ("n", "values")
    N_FIELD_NUMBER: _ClassVar[int]
    VALUES_FIELD_NUMBER: _ClassVar[int]
    n: int
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, n: _Optional[int] = ..., values: _Optional[_Iterable[float]] = ...) -> None: ...
