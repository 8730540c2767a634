from moonpool.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MissionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MISSION_STATUS_UNSPECIFIED: _ClassVar[MissionStatus]
    MISSION_STATUS_RUNNING: _ClassVar[MissionStatus]
    MISSION_STATUS_SUCCEEDED: _ClassVar[MissionStatus]
    MISSION_STATUS_ABORTED: _ClassVar[MissionStatus]
MISSION_STATUS_UNSPECIFIED: MissionStatus
MISSION_STATUS_RUNNING: MissionStatus
MISSION_STATUS_SUCCEEDED: MissionStatus
MISSION_STATUS_ABORTED: MissionStatus

class MissionState(_message.Message):
    __slots__ = ("header", "status", "phase", "previous_phase", "reason", "phase_time_s", "transitions", "has_target", "target_ned_m", "detections")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    PREVIOUS_PHASE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    PHASE_TIME_S_FIELD_NUMBER: _ClassVar[int]
    TRANSITIONS_FIELD_NUMBER: _ClassVar[int]
    HAS_TARGET_FIELD_NUMBER: _ClassVar[int]
    TARGET_NED_M_FIELD_NUMBER: _ClassVar[int]
    DETECTIONS_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    status: MissionStatus
    phase: str
    previous_phase: str
    reason: str
    phase_time_s: float
    transitions: int
    has_target: bool
    target_ned_m: _common_pb2.Vector3
    detections: int
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., status: _Optional[_Union[MissionStatus, str]] = ..., phase: _Optional[str] = ..., previous_phase: _Optional[str] = ..., reason: _Optional[str] = ..., phase_time_s: _Optional[float] = ..., transitions: _Optional[int] = ..., has_target: _Optional[bool] = ..., target_ned_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., detections: _Optional[int] = ...) -> None: ...
