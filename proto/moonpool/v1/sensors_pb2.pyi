from moonpool.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DvlTrack(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DVL_TRACK_UNSPECIFIED: _ClassVar[DvlTrack]
    DVL_TRACK_BOTTOM: _ClassVar[DvlTrack]
    DVL_TRACK_WATER: _ClassVar[DvlTrack]
DVL_TRACK_UNSPECIFIED: DvlTrack
DVL_TRACK_BOTTOM: DvlTrack
DVL_TRACK_WATER: DvlTrack

class Imu(_message.Message):
    __slots__ = ("header", "validity", "specific_force_mps2", "angular_rate_radps", "temperature_c", "true_specific_force_mps2", "true_angular_rate_radps", "true_accel_bias_mps2", "true_gyro_bias_radps")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    SPECIFIC_FORCE_MPS2_FIELD_NUMBER: _ClassVar[int]
    ANGULAR_RATE_RADPS_FIELD_NUMBER: _ClassVar[int]
    TEMPERATURE_C_FIELD_NUMBER: _ClassVar[int]
    TRUE_SPECIFIC_FORCE_MPS2_FIELD_NUMBER: _ClassVar[int]
    TRUE_ANGULAR_RATE_RADPS_FIELD_NUMBER: _ClassVar[int]
    TRUE_ACCEL_BIAS_MPS2_FIELD_NUMBER: _ClassVar[int]
    TRUE_GYRO_BIAS_RADPS_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    specific_force_mps2: _common_pb2.Vector3
    angular_rate_radps: _common_pb2.Vector3
    temperature_c: float
    true_specific_force_mps2: _common_pb2.Vector3
    true_angular_rate_radps: _common_pb2.Vector3
    true_accel_bias_mps2: _common_pb2.Vector3
    true_gyro_bias_radps: _common_pb2.Vector3
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., specific_force_mps2: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., angular_rate_radps: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., temperature_c: _Optional[float] = ..., true_specific_force_mps2: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., true_angular_rate_radps: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., true_accel_bias_mps2: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., true_gyro_bias_radps: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ...) -> None: ...

class DvlBeam(_message.Message):
    __slots__ = ("validity", "velocity_mps", "range_m", "true_velocity_mps", "true_range_m")
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    VELOCITY_MPS_FIELD_NUMBER: _ClassVar[int]
    RANGE_M_FIELD_NUMBER: _ClassVar[int]
    TRUE_VELOCITY_MPS_FIELD_NUMBER: _ClassVar[int]
    TRUE_RANGE_M_FIELD_NUMBER: _ClassVar[int]
    validity: _common_pb2.Validity
    velocity_mps: float
    range_m: float
    true_velocity_mps: float
    true_range_m: float
    def __init__(self, validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., velocity_mps: _Optional[float] = ..., range_m: _Optional[float] = ..., true_velocity_mps: _Optional[float] = ..., true_range_m: _Optional[float] = ...) -> None: ...

class Dvl(_message.Message):
    __slots__ = ("header", "validity", "track", "velocity_mps", "velocity_covariance", "residual_mps", "altitude_m", "beams", "true_velocity_mps", "true_altitude_m")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    TRACK_FIELD_NUMBER: _ClassVar[int]
    VELOCITY_MPS_FIELD_NUMBER: _ClassVar[int]
    VELOCITY_COVARIANCE_FIELD_NUMBER: _ClassVar[int]
    RESIDUAL_MPS_FIELD_NUMBER: _ClassVar[int]
    ALTITUDE_M_FIELD_NUMBER: _ClassVar[int]
    BEAMS_FIELD_NUMBER: _ClassVar[int]
    TRUE_VELOCITY_MPS_FIELD_NUMBER: _ClassVar[int]
    TRUE_ALTITUDE_M_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    track: DvlTrack
    velocity_mps: _common_pb2.Vector3
    velocity_covariance: _common_pb2.Covariance
    residual_mps: float
    altitude_m: float
    beams: _containers.RepeatedCompositeFieldContainer[DvlBeam]
    true_velocity_mps: _common_pb2.Vector3
    true_altitude_m: float
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., track: _Optional[_Union[DvlTrack, str]] = ..., velocity_mps: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., velocity_covariance: _Optional[_Union[_common_pb2.Covariance, _Mapping]] = ..., residual_mps: _Optional[float] = ..., altitude_m: _Optional[float] = ..., beams: _Optional[_Iterable[_Union[DvlBeam, _Mapping]]] = ..., true_velocity_mps: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., true_altitude_m: _Optional[float] = ...) -> None: ...

class Pressure(_message.Message):
    __slots__ = ("header", "validity", "pressure_pa", "temperature_c", "true_pressure_pa", "true_depth_m")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    PRESSURE_PA_FIELD_NUMBER: _ClassVar[int]
    TEMPERATURE_C_FIELD_NUMBER: _ClassVar[int]
    TRUE_PRESSURE_PA_FIELD_NUMBER: _ClassVar[int]
    TRUE_DEPTH_M_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    pressure_pa: float
    temperature_c: float
    true_pressure_pa: float
    true_depth_m: float
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., pressure_pa: _Optional[float] = ..., temperature_c: _Optional[float] = ..., true_pressure_pa: _Optional[float] = ..., true_depth_m: _Optional[float] = ...) -> None: ...

class Magnetometer(_message.Message):
    __slots__ = ("header", "validity", "field_nt", "true_field_nt")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    FIELD_NT_FIELD_NUMBER: _ClassVar[int]
    TRUE_FIELD_NT_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    field_nt: _common_pb2.Vector3
    true_field_nt: _common_pb2.Vector3
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., field_nt: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., true_field_nt: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ...) -> None: ...

class Usbl(_message.Message):
    __slots__ = ("header", "validity", "range_m", "bearing_rad", "elevation_rad", "position_m", "position_covariance", "true_range_m", "true_bearing_rad", "true_elevation_rad")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    RANGE_M_FIELD_NUMBER: _ClassVar[int]
    BEARING_RAD_FIELD_NUMBER: _ClassVar[int]
    ELEVATION_RAD_FIELD_NUMBER: _ClassVar[int]
    POSITION_M_FIELD_NUMBER: _ClassVar[int]
    POSITION_COVARIANCE_FIELD_NUMBER: _ClassVar[int]
    TRUE_RANGE_M_FIELD_NUMBER: _ClassVar[int]
    TRUE_BEARING_RAD_FIELD_NUMBER: _ClassVar[int]
    TRUE_ELEVATION_RAD_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    range_m: float
    bearing_rad: float
    elevation_rad: float
    position_m: _common_pb2.Vector3
    position_covariance: _common_pb2.Covariance
    true_range_m: float
    true_bearing_rad: float
    true_elevation_rad: float
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., range_m: _Optional[float] = ..., bearing_rad: _Optional[float] = ..., elevation_rad: _Optional[float] = ..., position_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., position_covariance: _Optional[_Union[_common_pb2.Covariance, _Mapping]] = ..., true_range_m: _Optional[float] = ..., true_bearing_rad: _Optional[float] = ..., true_elevation_rad: _Optional[float] = ...) -> None: ...

class Gnss(_message.Message):
    __slots__ = ("header", "validity", "latitude_deg", "longitude_deg", "altitude_m", "position_ned_m", "position_covariance", "satellites", "true_position_ned_m")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    LATITUDE_DEG_FIELD_NUMBER: _ClassVar[int]
    LONGITUDE_DEG_FIELD_NUMBER: _ClassVar[int]
    ALTITUDE_M_FIELD_NUMBER: _ClassVar[int]
    POSITION_NED_M_FIELD_NUMBER: _ClassVar[int]
    POSITION_COVARIANCE_FIELD_NUMBER: _ClassVar[int]
    SATELLITES_FIELD_NUMBER: _ClassVar[int]
    TRUE_POSITION_NED_M_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    latitude_deg: float
    longitude_deg: float
    altitude_m: float
    position_ned_m: _common_pb2.Vector3
    position_covariance: _common_pb2.Covariance
    satellites: int
    true_position_ned_m: _common_pb2.Vector3
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., latitude_deg: _Optional[float] = ..., longitude_deg: _Optional[float] = ..., altitude_m: _Optional[float] = ..., position_ned_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., position_covariance: _Optional[_Union[_common_pb2.Covariance, _Mapping]] = ..., satellites: _Optional[int] = ..., true_position_ned_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ...) -> None: ...
