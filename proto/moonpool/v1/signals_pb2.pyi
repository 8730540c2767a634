from moonpool.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Signal(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: float
    def __init__(self, name: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...

class Signals(_message.Message):
    __slots__ = ("header", "signals")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    SIGNALS_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    signals: _containers.RepeatedCompositeFieldContainer[Signal]
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., signals: _Optional[_Iterable[_Union[Signal, _Mapping]]] = ...) -> None: ...
