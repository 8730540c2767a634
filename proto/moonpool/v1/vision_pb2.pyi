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
