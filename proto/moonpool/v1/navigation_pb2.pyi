from moonpool.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PoseMeasurement(_message.Message):
    __slots__ = ("header", "validity", "position_m", "orientation", "yaw_rad", "covariance", "components", "features", "true_position_m", "true_yaw_rad")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    POSITION_M_FIELD_NUMBER: _ClassVar[int]
    ORIENTATION_FIELD_NUMBER: _ClassVar[int]
    YAW_RAD_FIELD_NUMBER: _ClassVar[int]
    COVARIANCE_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_FIELD_NUMBER: _ClassVar[int]
    FEATURES_FIELD_NUMBER: _ClassVar[int]
    TRUE_POSITION_M_FIELD_NUMBER: _ClassVar[int]
    TRUE_YAW_RAD_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    position_m: _common_pb2.Vector3
    orientation: _common_pb2.Quaternion
    yaw_rad: float
    covariance: _common_pb2.Covariance
    components: _containers.RepeatedScalarFieldContainer[str]
    features: int
    true_position_m: _common_pb2.Vector3
    true_yaw_rad: float
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., position_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., orientation: _Optional[_Union[_common_pb2.Quaternion, _Mapping]] = ..., yaw_rad: _Optional[float] = ..., covariance: _Optional[_Union[_common_pb2.Covariance, _Mapping]] = ..., components: _Optional[_Iterable[str]] = ..., features: _Optional[int] = ..., true_position_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., true_yaw_rad: _Optional[float] = ...) -> None: ...

class NavigationState(_message.Message):
    __slots__ = ("header", "validity", "position_ned_m", "velocity_ned_mps", "orientation", "yaw_rad", "angular_velocity_body_radps", "covariance", "yaw_variance_rad2", "true_position_ned_m", "true_velocity_ned_mps", "true_yaw_rad")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    POSITION_NED_M_FIELD_NUMBER: _ClassVar[int]
    VELOCITY_NED_MPS_FIELD_NUMBER: _ClassVar[int]
    ORIENTATION_FIELD_NUMBER: _ClassVar[int]
    YAW_RAD_FIELD_NUMBER: _ClassVar[int]
    ANGULAR_VELOCITY_BODY_RADPS_FIELD_NUMBER: _ClassVar[int]
    COVARIANCE_FIELD_NUMBER: _ClassVar[int]
    YAW_VARIANCE_RAD2_FIELD_NUMBER: _ClassVar[int]
    TRUE_POSITION_NED_M_FIELD_NUMBER: _ClassVar[int]
    TRUE_VELOCITY_NED_MPS_FIELD_NUMBER: _ClassVar[int]
    TRUE_YAW_RAD_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    position_ned_m: _common_pb2.Vector3
    velocity_ned_mps: _common_pb2.Vector3
    orientation: _common_pb2.Quaternion
    yaw_rad: float
    angular_velocity_body_radps: _common_pb2.Vector3
    covariance: _common_pb2.Covariance
    yaw_variance_rad2: float
    true_position_ned_m: _common_pb2.Vector3
    true_velocity_ned_mps: _common_pb2.Vector3
    true_yaw_rad: float
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., position_ned_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., velocity_ned_mps: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., orientation: _Optional[_Union[_common_pb2.Quaternion, _Mapping]] = ..., yaw_rad: _Optional[float] = ..., angular_velocity_body_radps: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., covariance: _Optional[_Union[_common_pb2.Covariance, _Mapping]] = ..., yaw_variance_rad2: _Optional[float] = ..., true_position_ned_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., true_velocity_ned_mps: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., true_yaw_rad: _Optional[float] = ...) -> None: ...

class Setpoint(_message.Message):
    __slots__ = ("header", "position_ned_m", "yaw_rad", "velocity_ned_mps", "yaw_rate_radps", "acceleration_ned_mps2", "index", "phase")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    POSITION_NED_M_FIELD_NUMBER: _ClassVar[int]
    YAW_RAD_FIELD_NUMBER: _ClassVar[int]
    VELOCITY_NED_MPS_FIELD_NUMBER: _ClassVar[int]
    YAW_RATE_RADPS_FIELD_NUMBER: _ClassVar[int]
    ACCELERATION_NED_MPS2_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    position_ned_m: _common_pb2.Vector3
    yaw_rad: float
    velocity_ned_mps: _common_pb2.Vector3
    yaw_rate_radps: float
    acceleration_ned_mps2: _common_pb2.Vector3
    index: int
    phase: str
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., position_ned_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., yaw_rad: _Optional[float] = ..., velocity_ned_mps: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., yaw_rate_radps: _Optional[float] = ..., acceleration_ned_mps2: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., index: _Optional[int] = ..., phase: _Optional[str] = ...) -> None: ...
