from moonpool.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class VehicleState(_message.Message):
    __slots__ = ("header", "position_ned_m", "orientation", "roll_rad", "pitch_rad", "yaw_rad", "linear_velocity_body_mps", "angular_velocity_body_radps", "linear_acceleration_body_mps2", "angular_acceleration_body_radps2", "water_density_kgpm3")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    POSITION_NED_M_FIELD_NUMBER: _ClassVar[int]
    ORIENTATION_FIELD_NUMBER: _ClassVar[int]
    ROLL_RAD_FIELD_NUMBER: _ClassVar[int]
    PITCH_RAD_FIELD_NUMBER: _ClassVar[int]
    YAW_RAD_FIELD_NUMBER: _ClassVar[int]
    LINEAR_VELOCITY_BODY_MPS_FIELD_NUMBER: _ClassVar[int]
    ANGULAR_VELOCITY_BODY_RADPS_FIELD_NUMBER: _ClassVar[int]
    LINEAR_ACCELERATION_BODY_MPS2_FIELD_NUMBER: _ClassVar[int]
    ANGULAR_ACCELERATION_BODY_RADPS2_FIELD_NUMBER: _ClassVar[int]
    WATER_DENSITY_KGPM3_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    position_ned_m: _common_pb2.Vector3
    orientation: _common_pb2.Quaternion
    roll_rad: float
    pitch_rad: float
    yaw_rad: float
    linear_velocity_body_mps: _common_pb2.Vector3
    angular_velocity_body_radps: _common_pb2.Vector3
    linear_acceleration_body_mps2: _common_pb2.Vector3
    angular_acceleration_body_radps2: _common_pb2.Vector3
    water_density_kgpm3: float
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., position_ned_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., orientation: _Optional[_Union[_common_pb2.Quaternion, _Mapping]] = ..., roll_rad: _Optional[float] = ..., pitch_rad: _Optional[float] = ..., yaw_rad: _Optional[float] = ..., linear_velocity_body_mps: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., angular_velocity_body_radps: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., linear_acceleration_body_mps2: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., angular_acceleration_body_radps2: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., water_density_kgpm3: _Optional[float] = ...) -> None: ...

class WaterCurrent(_message.Message):
    __slots__ = ("header", "velocity_ned_mps", "depth_m")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VELOCITY_NED_MPS_FIELD_NUMBER: _ClassVar[int]
    DEPTH_M_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    velocity_ned_mps: _common_pb2.Vector3
    depth_m: float
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., velocity_ned_mps: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., depth_m: _Optional[float] = ...) -> None: ...

class Wrench(_message.Message):
    __slots__ = ("header", "force_n", "torque_nm")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    FORCE_N_FIELD_NUMBER: _ClassVar[int]
    TORQUE_NM_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    force_n: _common_pb2.Vector3
    torque_nm: _common_pb2.Vector3
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., force_n: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., torque_nm: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ...) -> None: ...

class ThrusterCommand(_message.Message):
    __slots__ = ("header", "force_n", "speed_radps", "saturated", "thruster_saturated", "achieved", "demanded")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    FORCE_N_FIELD_NUMBER: _ClassVar[int]
    SPEED_RADPS_FIELD_NUMBER: _ClassVar[int]
    SATURATED_FIELD_NUMBER: _ClassVar[int]
    THRUSTER_SATURATED_FIELD_NUMBER: _ClassVar[int]
    ACHIEVED_FIELD_NUMBER: _ClassVar[int]
    DEMANDED_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    force_n: _containers.RepeatedScalarFieldContainer[float]
    speed_radps: _containers.RepeatedScalarFieldContainer[float]
    saturated: bool
    thruster_saturated: _containers.RepeatedScalarFieldContainer[bool]
    achieved: Wrench
    demanded: Wrench
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., force_n: _Optional[_Iterable[float]] = ..., speed_radps: _Optional[_Iterable[float]] = ..., saturated: _Optional[bool] = ..., thruster_saturated: _Optional[_Iterable[bool]] = ..., achieved: _Optional[_Union[Wrench, _Mapping]] = ..., demanded: _Optional[_Union[Wrench, _Mapping]] = ...) -> None: ...

class ThrusterState(_message.Message):
    __slots__ = ("speed_radps", "force_n", "current_a", "voltage_v", "validity")
    SPEED_RADPS_FIELD_NUMBER: _ClassVar[int]
    FORCE_N_FIELD_NUMBER: _ClassVar[int]
    CURRENT_A_FIELD_NUMBER: _ClassVar[int]
    VOLTAGE_V_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    speed_radps: float
    force_n: float
    current_a: float
    voltage_v: float
    validity: _common_pb2.Validity
    def __init__(self, speed_radps: _Optional[float] = ..., force_n: _Optional[float] = ..., current_a: _Optional[float] = ..., voltage_v: _Optional[float] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ...) -> None: ...

class ThrusterFeedback(_message.Message):
    __slots__ = ("header", "thrusters")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    THRUSTERS_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    thrusters: _containers.RepeatedCompositeFieldContainer[ThrusterState]
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., thrusters: _Optional[_Iterable[_Union[ThrusterState, _Mapping]]] = ...) -> None: ...
