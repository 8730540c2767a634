from moonpool.v1 import common_pb2 as _common_pb2
from moonpool.v1 import navigation_pb2 as _navigation_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ImageHeader(_message.Message):
    __slots__ = ("header", "width", "height", "encoding", "step_bytes", "exposure_s", "arrival_unix_ns")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    ENCODING_FIELD_NUMBER: _ClassVar[int]
    STEP_BYTES_FIELD_NUMBER: _ClassVar[int]
    EXPOSURE_S_FIELD_NUMBER: _ClassVar[int]
    ARRIVAL_UNIX_NS_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    width: int
    height: int
    encoding: str
    step_bytes: int
    exposure_s: float
    arrival_unix_ns: int
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., width: _Optional[int] = ..., height: _Optional[int] = ..., encoding: _Optional[str] = ..., step_bytes: _Optional[int] = ..., exposure_s: _Optional[float] = ..., arrival_unix_ns: _Optional[int] = ...) -> None: ...

class Point2(_message.Message):
    __slots__ = ("x", "y")
    X_FIELD_NUMBER: _ClassVar[int]
    Y_FIELD_NUMBER: _ClassVar[int]
    x: float
    y: float
    def __init__(self, x: _Optional[float] = ..., y: _Optional[float] = ...) -> None: ...

class TagDetection(_message.Message):
    __slots__ = ("family", "id", "corners_px", "center_px", "hamming", "decision_margin")
    FAMILY_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    CORNERS_PX_FIELD_NUMBER: _ClassVar[int]
    CENTER_PX_FIELD_NUMBER: _ClassVar[int]
    HAMMING_FIELD_NUMBER: _ClassVar[int]
    DECISION_MARGIN_FIELD_NUMBER: _ClassVar[int]
    family: str
    id: int
    corners_px: _containers.RepeatedCompositeFieldContainer[Point2]
    center_px: Point2
    hamming: int
    decision_margin: float
    def __init__(self, family: _Optional[str] = ..., id: _Optional[int] = ..., corners_px: _Optional[_Iterable[_Union[Point2, _Mapping]]] = ..., center_px: _Optional[_Union[Point2, _Mapping]] = ..., hamming: _Optional[int] = ..., decision_margin: _Optional[float] = ...) -> None: ...

class TagDetections(_message.Message):
    __slots__ = ("header", "validity", "detections", "image_seq", "truth")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    DETECTIONS_FIELD_NUMBER: _ClassVar[int]
    IMAGE_SEQ_FIELD_NUMBER: _ClassVar[int]
    TRUTH_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    detections: _containers.RepeatedCompositeFieldContainer[TagDetection]
    image_seq: int
    truth: _navigation_pb2.PoseMeasurement
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., detections: _Optional[_Iterable[_Union[TagDetection, _Mapping]]] = ..., image_seq: _Optional[int] = ..., truth: _Optional[_Union[_navigation_pb2.PoseMeasurement, _Mapping]] = ...) -> None: ...

class CameraInfo(_message.Message):
    __slots__ = ("header", "width", "height", "k", "distortion_model", "d", "mount_position_body_m", "mount_orientation", "position_ned_m", "orientation", "image_seq")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    WIDTH_FIELD_NUMBER: _ClassVar[int]
    HEIGHT_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    DISTORTION_MODEL_FIELD_NUMBER: _ClassVar[int]
    D_FIELD_NUMBER: _ClassVar[int]
    MOUNT_POSITION_BODY_M_FIELD_NUMBER: _ClassVar[int]
    MOUNT_ORIENTATION_FIELD_NUMBER: _ClassVar[int]
    POSITION_NED_M_FIELD_NUMBER: _ClassVar[int]
    ORIENTATION_FIELD_NUMBER: _ClassVar[int]
    IMAGE_SEQ_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    width: int
    height: int
    k: _containers.RepeatedScalarFieldContainer[float]
    distortion_model: str
    d: _containers.RepeatedScalarFieldContainer[float]
    mount_position_body_m: _common_pb2.Vector3
    mount_orientation: _common_pb2.Quaternion
    position_ned_m: _common_pb2.Vector3
    orientation: _common_pb2.Quaternion
    image_seq: int
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., width: _Optional[int] = ..., height: _Optional[int] = ..., k: _Optional[_Iterable[float]] = ..., distortion_model: _Optional[str] = ..., d: _Optional[_Iterable[float]] = ..., mount_position_body_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., mount_orientation: _Optional[_Union[_common_pb2.Quaternion, _Mapping]] = ..., position_ned_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., orientation: _Optional[_Union[_common_pb2.Quaternion, _Mapping]] = ..., image_seq: _Optional[int] = ...) -> None: ...

class TargetDetection(_message.Message):
    __slots__ = ("header", "validity", "target", "center_px", "area_px", "bearing_camera", "bearing_ned", "altitude_m", "has_position", "position_ned_m", "score", "image_seq")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    VALIDITY_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    CENTER_PX_FIELD_NUMBER: _ClassVar[int]
    AREA_PX_FIELD_NUMBER: _ClassVar[int]
    BEARING_CAMERA_FIELD_NUMBER: _ClassVar[int]
    BEARING_NED_FIELD_NUMBER: _ClassVar[int]
    ALTITUDE_M_FIELD_NUMBER: _ClassVar[int]
    HAS_POSITION_FIELD_NUMBER: _ClassVar[int]
    POSITION_NED_M_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    IMAGE_SEQ_FIELD_NUMBER: _ClassVar[int]
    header: _common_pb2.Header
    validity: _common_pb2.Validity
    target: str
    center_px: Point2
    area_px: float
    bearing_camera: _common_pb2.Vector3
    bearing_ned: _common_pb2.Vector3
    altitude_m: float
    has_position: bool
    position_ned_m: _common_pb2.Vector3
    score: float
    image_seq: int
    def __init__(self, header: _Optional[_Union[_common_pb2.Header, _Mapping]] = ..., validity: _Optional[_Union[_common_pb2.Validity, _Mapping]] = ..., target: _Optional[str] = ..., center_px: _Optional[_Union[Point2, _Mapping]] = ..., area_px: _Optional[float] = ..., bearing_camera: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., bearing_ned: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., altitude_m: _Optional[float] = ..., has_position: _Optional[bool] = ..., position_ned_m: _Optional[_Union[_common_pb2.Vector3, _Mapping]] = ..., score: _Optional[float] = ..., image_seq: _Optional[int] = ...) -> None: ...
