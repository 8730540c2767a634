from moonpool.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Altimeter(_message.Message):
    __slots__ = ("header", "validity", "range_m", "two_way_travel_time_s", "nominal_sound_speed_mps", "true_range_m", "true_point_ned_m", "true_label", "true_instance", "true_harmonic_sound_speed_mps")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    RANGE_M_FIELD_NUMBER: _ClassVar[int]
    TWO_WAY_TRAVEL_TIME_S_FIELD_NUMBER: _ClassVar[int]
    NOMINAL_SOUND_SPEED_MPS_FIELD_NUMBER: _ClassVar[int]
    TRUE_RANGE_M_FIELD_NUMBER: _ClassVar[int]
    TRUE_POINT_NED_M_FIELD_NUMBER: _ClassVar[int]
    TRUE_LABEL_FIELD_NUMBER: _ClassVar[int]
    TRUE_INSTANCE_FIELD_NUMBER: _ClassVar[int]
    TRUE_HARMONIC_SOUND_SPEED_MPS_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    range_m: float
    two_way_travel_time_s: float
    nominal_sound_speed_mps: float
    true_range_m: float
    true_point_ned_m: _common_pb2.Vector3
    true_label: int
    true_instance: int
    true_harmonic_sound_speed_mps: float
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., range_m: _Optional[float] = ..., two_way_travel_time_s: _Optional[float] = ..., nominal_sound_speed_mps: _Optional[float] = ..., true_range_m: _Optional[float] = ..., true_point_ned_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., true_label: _Optional[int] = ..., true_instance: _Optional[int] = ..., true_harmonic_sound_speed_mps: _Optional[float] = ...) -> None: ...

class Multibeam(_message.Message):
    __slots__ = ("header", "validity", "beams", "nominal_sound_speed_mps", "true_sound_speed_mps", "true_sound_speed_gradient_per_s")
    class Beam(_message.Message):
        __slots__ = ("validity", "angle_rad", "range_m", "two_way_travel_time_s", "true_range_m", "true_point_ned_m", "true_label", "true_instance", "true_two_way_travel_time_s")
        VALIDITY_FIELD_NUMBER: _ClassVar[int]
        ANGLE_RAD_FIELD_NUMBER: _ClassVar[int]
        RANGE_M_FIELD_NUMBER: _ClassVar[int]
        TWO_WAY_TRAVEL_TIME_S_FIELD_NUMBER: _ClassVar[int]
        TRUE_RANGE_M_FIELD_NUMBER: _ClassVar[int]
        TRUE_POINT_NED_M_FIELD_NUMBER: _ClassVar[int]
        TRUE_LABEL_FIELD_NUMBER: _ClassVar[int]
        TRUE_INSTANCE_FIELD_NUMBER: _ClassVar[int]
        TRUE_TWO_WAY_TRAVEL_TIME_S_FIELD_NUMBER: _ClassVar[int]
        validity: _common_pb2.Validity
        angle_rad: float
        range_m: float
        two_way_travel_time_s: float
        true_range_m: float
        true_point_ned_m: _common_pb2.Vector3
        true_label: int
        true_instance: int
        true_two_way_travel_time_s: float
        def __init__(self, validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., angle_rad: _Optional[float] = ..., range_m: _Optional[float] = ..., two_way_travel_time_s: _Optional[float] = ..., true_range_m: _Optional[float] = ..., true_point_ned_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., true_label: _Optional[int] = ..., true_instance: _Optional[int] = ..., true_two_way_travel_time_s: _Optional[float] = ...) -> None: ...
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    BEAMS_FIELD_NUMBER: _ClassVar[int]
    NOMINAL_SOUND_SPEED_MPS_FIELD_NUMBER: _ClassVar[int]
    TRUE_SOUND_SPEED_MPS_FIELD_NUMBER: _ClassVar[int]
    TRUE_SOUND_SPEED_GRADIENT_PER_S_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    beams: _containers.RepeatedCompositeFieldContainer[Multibeam.Beam]
    nominal_sound_speed_mps: float
    true_sound_speed_mps: float
    true_sound_speed_gradient_per_s: float
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., beams: _Optional[_Iterable[_Union[Multibeam.Beam, _Mapping]]] = ..., nominal_sound_speed_mps: _Optional[float] = ..., true_sound_speed_mps: _Optional[float] = ..., true_sound_speed_gradient_per_s: _Optional[float] = ...) -> None: ...

class Ctd(_message.Message):
    __slots__ = ("header", "validity", "temperature_c", "salinity_psu", "pressure_pa", "sound_speed_mps", "true_temperature_c", "true_salinity_psu", "true_pressure_pa", "true_sound_speed_mps", "true_depth_m")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    TEMPERATURE_C_FIELD_NUMBER: _ClassVar[int]
    SALINITY_PSU_FIELD_NUMBER: _ClassVar[int]
    PRESSURE_PA_FIELD_NUMBER: _ClassVar[int]
    SOUND_SPEED_MPS_FIELD_NUMBER: _ClassVar[int]
    TRUE_TEMPERATURE_C_FIELD_NUMBER: _ClassVar[int]
    TRUE_SALINITY_PSU_FIELD_NUMBER: _ClassVar[int]
    TRUE_PRESSURE_PA_FIELD_NUMBER: _ClassVar[int]
    TRUE_SOUND_SPEED_MPS_FIELD_NUMBER: _ClassVar[int]
    TRUE_DEPTH_M_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    temperature_c: float
    salinity_psu: float
    pressure_pa: float
    sound_speed_mps: float
    true_temperature_c: float
    true_salinity_psu: float
    true_pressure_pa: float
    true_sound_speed_mps: float
    true_depth_m: float
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., temperature_c: _Optional[float] = ..., salinity_psu: _Optional[float] = ..., pressure_pa: _Optional[float] = ..., sound_speed_mps: _Optional[float] = ..., true_temperature_c: _Optional[float] = ..., true_salinity_psu: _Optional[float] = ..., true_pressure_pa: _Optional[float] = ..., true_sound_speed_mps: _Optional[float] = ..., true_depth_m: _Optional[float] = ...) -> None: ...

class Lbl(_message.Message):
    __slots__ = ("header", "validity", "ranges", "position_ned_m", "position_covariance", "pdop", "hdop", "vdop", "residual_m", "true_position_ned_m")
    class Range(_message.Message):
        __slots__ = ("validity", "beacon", "beacon_ned_m", "range_m", "travel_time_s", "true_range_m")
        VALIDITY_FIELD_NUMBER: _ClassVar[int]
        BEACON_FIELD_NUMBER: _ClassVar[int]
        BEACON_NED_M_FIELD_NUMBER: _ClassVar[int]
        RANGE_M_FIELD_NUMBER: _ClassVar[int]
        TRAVEL_TIME_S_FIELD_NUMBER: _ClassVar[int]
        TRUE_RANGE_M_FIELD_NUMBER: _ClassVar[int]
        validity: _common_pb2.Validity
        beacon: int
        beacon_ned_m: _common_pb2.Vector3
        range_m: float
        travel_time_s: float
        true_range_m: float
        def __init__(self, validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., beacon: _Optional[int] = ..., beacon_ned_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., range_m: _Optional[float] = ..., travel_time_s: _Optional[float] = ..., true_range_m: _Optional[float] = ...) -> None: ...
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    RANGES_FIELD_NUMBER: _ClassVar[int]
    POSITION_NED_M_FIELD_NUMBER: _ClassVar[int]
    POSITION_COVARIANCE_FIELD_NUMBER: _ClassVar[int]
    PDOP_FIELD_NUMBER: _ClassVar[int]
    HDOP_FIELD_NUMBER: _ClassVar[int]
    VDOP_FIELD_NUMBER: _ClassVar[int]
    RESIDUAL_M_FIELD_NUMBER: _ClassVar[int]
    TRUE_POSITION_NED_M_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    ranges: _containers.RepeatedCompositeFieldContainer[Lbl.Range]
    position_ned_m: _common_pb2.Vector3
    position_covariance: _common_pb2.Covariance
    pdop: float
    hdop: float
    vdop: float
    residual_m: float
    true_position_ned_m: _common_pb2.Vector3
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., ranges: _Optional[_Iterable[_Union[Lbl.Range, _Mapping]]] = ..., position_ned_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., position_covariance: _Optional[_Union[_common_pb2.Covariance, _Mapping]] = ..., pdop: _Optional[float] = ..., hdop: _Optional[float] = ..., vdop: _Optional[float] = ..., residual_m: _Optional[float] = ..., true_position_ned_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ...) -> None: ...

class Adcp(_message.Message):
    __slots__ = ("header", "validity", "bins", "upward", "bin_size_m", "blanking_m", "true_boundary_range_m")
    class Bin(_message.Message):
        __slots__ = ("validity", "distance_m", "velocity_mps", "beam_velocity_mps", "true_velocity_mps", "true_depth_m")
        VALIDITY_FIELD_NUMBER: _ClassVar[int]
        DISTANCE_M_FIELD_NUMBER: _ClassVar[int]
        VELOCITY_MPS_FIELD_NUMBER: _ClassVar[int]
        BEAM_VELOCITY_MPS_FIELD_NUMBER: _ClassVar[int]
        TRUE_VELOCITY_MPS_FIELD_NUMBER: _ClassVar[int]
        TRUE_DEPTH_M_FIELD_NUMBER: _ClassVar[int]
        validity: _common_pb2.Validity
        distance_m: float
        velocity_mps: _common_pb2.Vector3
        beam_velocity_mps: _containers.RepeatedScalarFieldContainer[float]
        true_velocity_mps: _common_pb2.Vector3
        true_depth_m: float
        def __init__(self, validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., distance_m: _Optional[float] = ..., velocity_mps: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., beam_velocity_mps: _Optional[_Iterable[float]] = ..., true_velocity_mps: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., true_depth_m: _Optional[float] = ...) -> None: ...
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    BINS_FIELD_NUMBER: _ClassVar[int]
    UPWARD_FIELD_NUMBER: _ClassVar[int]
    BIN_SIZE_M_FIELD_NUMBER: _ClassVar[int]
    BLANKING_M_FIELD_NUMBER: _ClassVar[int]
    TRUE_BOUNDARY_RANGE_M_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    bins: _containers.RepeatedCompositeFieldContainer[Adcp.Bin]
    upward: bool
    bin_size_m: float
    blanking_m: float
    true_boundary_range_m: float
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., bins: _Optional[_Iterable[_Union[Adcp.Bin, _Mapping]]] = ..., upward: _Optional[bool] = ..., bin_size_m: _Optional[float] = ..., blanking_m: _Optional[float] = ..., true_boundary_range_m: _Optional[float] = ...) -> None: ...

class ImagingSonar(_message.Message):
    __slots__ = ("header", "validity", "range_start_m", "range_resolution_m", "n_ranges", "bearings_rad", "intensity", "true_label", "true_intensity")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    RANGE_START_M_FIELD_NUMBER: _ClassVar[int]
    RANGE_RESOLUTION_M_FIELD_NUMBER: _ClassVar[int]
    N_RANGES_FIELD_NUMBER: _ClassVar[int]
    BEARINGS_RAD_FIELD_NUMBER: _ClassVar[int]
    INTENSITY_FIELD_NUMBER: _ClassVar[int]
    TRUE_LABEL_FIELD_NUMBER: _ClassVar[int]
    TRUE_INTENSITY_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    range_start_m: float
    range_resolution_m: float
    n_ranges: int
    bearings_rad: _containers.RepeatedScalarFieldContainer[float]
    intensity: _containers.RepeatedScalarFieldContainer[float]
    true_label: _containers.RepeatedScalarFieldContainer[int]
    true_intensity: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., range_start_m: _Optional[float] = ..., range_resolution_m: _Optional[float] = ..., n_ranges: _Optional[int] = ..., bearings_rad: _Optional[_Iterable[float]] = ..., intensity: _Optional[_Iterable[float]] = ..., true_label: _Optional[_Iterable[int]] = ..., true_intensity: _Optional[_Iterable[float]] = ...) -> None: ...

class SideScan(_message.Message):
    __slots__ = ("header", "validity", "range_start_m", "range_resolution_m", "port_intensity", "starboard_intensity", "true_port_label", "true_starboard_label", "true_port_intensity", "true_starboard_intensity")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    RANGE_START_M_FIELD_NUMBER: _ClassVar[int]
    RANGE_RESOLUTION_M_FIELD_NUMBER: _ClassVar[int]
    PORT_INTENSITY_FIELD_NUMBER: _ClassVar[int]
    STARBOARD_INTENSITY_FIELD_NUMBER: _ClassVar[int]
    TRUE_PORT_LABEL_FIELD_NUMBER: _ClassVar[int]
    TRUE_STARBOARD_LABEL_FIELD_NUMBER: _ClassVar[int]
    TRUE_PORT_INTENSITY_FIELD_NUMBER: _ClassVar[int]
    TRUE_STARBOARD_INTENSITY_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    range_start_m: float
    range_resolution_m: float
    port_intensity: _containers.RepeatedScalarFieldContainer[float]
    starboard_intensity: _containers.RepeatedScalarFieldContainer[float]
    true_port_label: _containers.RepeatedScalarFieldContainer[int]
    true_starboard_label: _containers.RepeatedScalarFieldContainer[int]
    true_port_intensity: _containers.RepeatedScalarFieldContainer[float]
    true_starboard_intensity: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., range_start_m: _Optional[float] = ..., range_resolution_m: _Optional[float] = ..., port_intensity: _Optional[_Iterable[float]] = ..., starboard_intensity: _Optional[_Iterable[float]] = ..., true_port_label: _Optional[_Iterable[int]] = ..., true_starboard_label: _Optional[_Iterable[int]] = ..., true_port_intensity: _Optional[_Iterable[float]] = ..., true_starboard_intensity: _Optional[_Iterable[float]] = ...) -> None: ...
