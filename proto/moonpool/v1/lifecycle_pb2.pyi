from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ProtocolVersion(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROTOCOL_VERSION_UNSPECIFIED: _ClassVar[ProtocolVersion]
    PROTOCOL_VERSION_1: _ClassVar[ProtocolVersion]

class PortDirection(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PORT_DIRECTION_UNSPECIFIED: _ClassVar[PortDirection]
    PORT_DIRECTION_INPUT: _ClassVar[PortDirection]
    PORT_DIRECTION_OUTPUT: _ClassVar[PortDirection]

class ParameterType(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PARAMETER_TYPE_UNSPECIFIED: _ClassVar[ParameterType]
    PARAMETER_TYPE_DOUBLE: _ClassVar[ParameterType]
    PARAMETER_TYPE_INT: _ClassVar[ParameterType]
    PARAMETER_TYPE_BOOL: _ClassVar[ParameterType]
    PARAMETER_TYPE_STRING: _ClassVar[ParameterType]
    PARAMETER_TYPE_DOUBLE_ARRAY: _ClassVar[ParameterType]
    PARAMETER_TYPE_STRING_ARRAY: _ClassVar[ParameterType]
    PARAMETER_TYPE_JSON: _ClassVar[ParameterType]

class ComponentState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COMPONENT_STATE_UNSPECIFIED: _ClassVar[ComponentState]
    COMPONENT_STATE_CREATED: _ClassVar[ComponentState]
    COMPONENT_STATE_CONFIGURED: _ClassVar[ComponentState]
    COMPONENT_STATE_INITIALIZED: _ClassVar[ComponentState]
    COMPONENT_STATE_TERMINATED: _ClassVar[ComponentState]
    COMPONENT_STATE_FAILED: _ClassVar[ComponentState]

class ErrorCode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_CODE_UNSPECIFIED: _ClassVar[ErrorCode]
    ERROR_CODE_MALFORMED: _ClassVar[ErrorCode]
    ERROR_CODE_PROTOCOL_VERSION: _ClassVar[ErrorCode]
    ERROR_CODE_INVALID_STATE: _ClassVar[ErrorCode]
    ERROR_CODE_INVALID_PARAMETER: _ClassVar[ErrorCode]
    ERROR_CODE_INVALID_INPUT: _ClassVar[ErrorCode]
    ERROR_CODE_STEP_FAILED: _ClassVar[ErrorCode]
    ERROR_CODE_BUSY: _ClassVar[ErrorCode]
    ERROR_CODE_INTERNAL: _ClassVar[ErrorCode]
PROTOCOL_VERSION_UNSPECIFIED: ProtocolVersion
PROTOCOL_VERSION_1: ProtocolVersion
PORT_DIRECTION_UNSPECIFIED: PortDirection
PORT_DIRECTION_INPUT: PortDirection
PORT_DIRECTION_OUTPUT: PortDirection
PARAMETER_TYPE_UNSPECIFIED: ParameterType
PARAMETER_TYPE_DOUBLE: ParameterType
PARAMETER_TYPE_INT: ParameterType
PARAMETER_TYPE_BOOL: ParameterType
PARAMETER_TYPE_STRING: ParameterType
PARAMETER_TYPE_DOUBLE_ARRAY: ParameterType
PARAMETER_TYPE_STRING_ARRAY: ParameterType
PARAMETER_TYPE_JSON: ParameterType
COMPONENT_STATE_UNSPECIFIED: ComponentState
COMPONENT_STATE_CREATED: ComponentState
COMPONENT_STATE_CONFIGURED: ComponentState
COMPONENT_STATE_INITIALIZED: ComponentState
COMPONENT_STATE_TERMINATED: ComponentState
COMPONENT_STATE_FAILED: ComponentState
ERROR_CODE_UNSPECIFIED: ErrorCode
ERROR_CODE_MALFORMED: ErrorCode
ERROR_CODE_PROTOCOL_VERSION: ErrorCode
ERROR_CODE_INVALID_STATE: ErrorCode
ERROR_CODE_INVALID_PARAMETER: ErrorCode
ERROR_CODE_INVALID_INPUT: ErrorCode
ERROR_CODE_STEP_FAILED: ErrorCode
ERROR_CODE_BUSY: ErrorCode
ERROR_CODE_INTERNAL: ErrorCode

class Request(_message.Message):
    __slots__ = ("protocol_version", "request_id", "instance", "describe", "configure", "initialize", "step", "terminate", "heartbeat", "step_batch")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    DESCRIBE_FIELD_NUMBER: _ClassVar[int]
    CONFIGURE_FIELD_NUMBER: _ClassVar[int]
    INITIALIZE_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    TERMINATE_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    STEP_BATCH_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    request_id: int
    instance: str
    describe: Describe
    configure: Configure
    initialize: Initialize
    step: Step
    terminate: Terminate
    heartbeat: Heartbeat
    step_batch: StepBatch
    def __init__(self, protocol_version: _Optional[int] = ..., request_id: _Optional[int] = ..., instance: _Optional[str] = ..., describe: _Optional[_Union[Describe, _Mapping]] = ..., configure: _Optional[_Union[Configure, _Mapping]] = ..., initialize: _Optional[_Union[Initialize, _Mapping]] = ..., step: _Optional[_Union[Step, _Mapping]] = ..., terminate: _Optional[_Union[Terminate, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ..., step_batch: _Optional[_Union[StepBatch, _Mapping]] = ...) -> None: ...

class Reply(_message.Message):
    __slots__ = ("protocol_version", "request_id", "instance", "description", "ack", "initialized", "step_result", "terminated", "heartbeat", "error", "step_batch_result")
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ACK_FIELD_NUMBER: _ClassVar[int]
    INITIALIZED_FIELD_NUMBER: _ClassVar[int]
    STEP_RESULT_FIELD_NUMBER: _ClassVar[int]
    TERMINATED_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    STEP_BATCH_RESULT_FIELD_NUMBER: _ClassVar[int]
    protocol_version: int
    request_id: int
    instance: str
    description: Description
    ack: Ack
    initialized: Initialized
    step_result: StepResult
    terminated: Terminated
    heartbeat: Heartbeat
    error: Error
    step_batch_result: StepBatchResult
    def __init__(self, protocol_version: _Optional[int] = ..., request_id: _Optional[int] = ..., instance: _Optional[str] = ..., description: _Optional[_Union[Description, _Mapping]] = ..., ack: _Optional[_Union[Ack, _Mapping]] = ..., initialized: _Optional[_Union[Initialized, _Mapping]] = ..., step_result: _Optional[_Union[StepResult, _Mapping]] = ..., terminated: _Optional[_Union[Terminated, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ..., error: _Optional[_Union[Error, _Mapping]] = ..., step_batch_result: _Optional[_Union[StepBatchResult, _Mapping]] = ...) -> None: ...

class Describe(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PortSpec(_message.Message):
    __slots__ = ("name", "direction", "type", "queued", "description", "attachment")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    QUEUED_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENT_FIELD_NUMBER: _ClassVar[int]
    name: str
    direction: PortDirection
    type: str
    queued: bool
    description: str
    attachment: bool
    def __init__(self, name: _Optional[str] = ..., direction: _Optional[_Union[PortDirection, str]] = ..., type: _Optional[str] = ..., queued: _Optional[bool] = ..., description: _Optional[str] = ..., attachment: _Optional[bool] = ...) -> None: ...

class DoubleArray(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, values: _Optional[_Iterable[float]] = ...) -> None: ...

class StringArray(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, values: _Optional[_Iterable[str]] = ...) -> None: ...

class ParameterValue(_message.Message):
    __slots__ = ("double_value", "int_value", "bool_value", "string_value", "double_array", "string_array", "json_value")
    DOUBLE_VALUE_FIELD_NUMBER: _ClassVar[int]
    INT_VALUE_FIELD_NUMBER: _ClassVar[int]
    BOOL_VALUE_FIELD_NUMBER: _ClassVar[int]
    STRING_VALUE_FIELD_NUMBER: _ClassVar[int]
    DOUBLE_ARRAY_FIELD_NUMBER: _ClassVar[int]
    STRING_ARRAY_FIELD_NUMBER: _ClassVar[int]
    JSON_VALUE_FIELD_NUMBER: _ClassVar[int]
    double_value: float
    int_value: int
    bool_value: bool
    string_value: str
    double_array: DoubleArray
    string_array: StringArray
    json_value: str
    def __init__(self, double_value: _Optional[float] = ..., int_value: _Optional[int] = ..., bool_value: _Optional[bool] = ..., string_value: _Optional[str] = ..., double_array: _Optional[_Union[DoubleArray, _Mapping]] = ..., string_array: _Optional[_Union[StringArray, _Mapping]] = ..., json_value: _Optional[str] = ...) -> None: ...

class ParameterSpec(_message.Message):
    __slots__ = ("name", "type", "description", "unit", "default_value", "required")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    UNIT_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_VALUE_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: ParameterType
    description: str
    unit: str
    default_value: ParameterValue
    required: bool
    def __init__(self, name: _Optional[str] = ..., type: _Optional[_Union[ParameterType, str]] = ..., description: _Optional[str] = ..., unit: _Optional[str] = ..., default_value: _Optional[_Union[ParameterValue, _Mapping]] = ..., required: _Optional[bool] = ...) -> None: ...

class NamedParameter(_message.Message):
    __slots__ = ("name", "value")
    NAME_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    name: str
    value: ParameterValue
    def __init__(self, name: _Optional[str] = ..., value: _Optional[_Union[ParameterValue, _Mapping]] = ...) -> None: ...

class Description(_message.Message):
    __slots__ = ("kind", "description", "inputs", "outputs", "parameters", "protocol_version", "extra_schemas", "tunable_parameters", "initial_inputs")
    KIND_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    EXTRA_SCHEMAS_FIELD_NUMBER: _ClassVar[int]
    TUNABLE_PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    INITIAL_INPUTS_FIELD_NUMBER: _ClassVar[int]
    kind: str
    description: str
    inputs: _containers.RepeatedCompositeFieldContainer[PortSpec]
    outputs: _containers.RepeatedCompositeFieldContainer[PortSpec]
    parameters: _containers.RepeatedCompositeFieldContainer[ParameterSpec]
    protocol_version: int
    extra_schemas: bytes
    tunable_parameters: _containers.RepeatedScalarFieldContainer[str]
    initial_inputs: bool
    def __init__(self, kind: _Optional[str] = ..., description: _Optional[str] = ..., inputs: _Optional[_Iterable[_Union[PortSpec, _Mapping]]] = ..., outputs: _Optional[_Iterable[_Union[PortSpec, _Mapping]]] = ..., parameters: _Optional[_Iterable[_Union[ParameterSpec, _Mapping]]] = ..., protocol_version: _Optional[int] = ..., extra_schemas: _Optional[bytes] = ..., tunable_parameters: _Optional[_Iterable[str]] = ..., initial_inputs: _Optional[bool] = ...) -> None: ...

class Configure(_message.Message):
    __slots__ = ("instance_name", "seed", "parameters", "period_ns", "peer_timeout_ns")
    INSTANCE_NAME_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    PERIOD_NS_FIELD_NUMBER: _ClassVar[int]
    PEER_TIMEOUT_NS_FIELD_NUMBER: _ClassVar[int]
    instance_name: str
    seed: int
    parameters: _containers.RepeatedCompositeFieldContainer[NamedParameter]
    period_ns: int
    peer_timeout_ns: int
    def __init__(self, instance_name: _Optional[str] = ..., seed: _Optional[int] = ..., parameters: _Optional[_Iterable[_Union[NamedParameter, _Mapping]]] = ..., period_ns: _Optional[int] = ..., peer_timeout_ns: _Optional[int] = ...) -> None: ...

class Initialize(_message.Message):
    __slots__ = ("start_time_ns", "inputs")
    START_TIME_NS_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    start_time_ns: int
    inputs: _containers.RepeatedCompositeFieldContainer[PortValue]
    def __init__(self, start_time_ns: _Optional[int] = ..., inputs: _Optional[_Iterable[_Union[PortValue, _Mapping]]] = ...) -> None: ...

class PortValue(_message.Message):
    __slots__ = ("port", "type", "payload", "attachment")
    PORT_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    ATTACHMENT_FIELD_NUMBER: _ClassVar[int]
    port: str
    type: str
    payload: bytes
    attachment: int
    def __init__(self, port: _Optional[str] = ..., type: _Optional[str] = ..., payload: _Optional[bytes] = ..., attachment: _Optional[int] = ...) -> None: ...

class Step(_message.Message):
    __slots__ = ("time_ns", "step_ns", "inputs", "parameters")
    TIME_NS_FIELD_NUMBER: _ClassVar[int]
    STEP_NS_FIELD_NUMBER: _ClassVar[int]
    INPUTS_FIELD_NUMBER: _ClassVar[int]
    PARAMETERS_FIELD_NUMBER: _ClassVar[int]
    time_ns: int
    step_ns: int
    inputs: _containers.RepeatedCompositeFieldContainer[PortValue]
    parameters: _containers.RepeatedCompositeFieldContainer[NamedParameter]
    def __init__(self, time_ns: _Optional[int] = ..., step_ns: _Optional[int] = ..., inputs: _Optional[_Iterable[_Union[PortValue, _Mapping]]] = ..., parameters: _Optional[_Iterable[_Union[NamedParameter, _Mapping]]] = ...) -> None: ...

class StepBatch(_message.Message):
    __slots__ = ("steps",)
    STEPS_FIELD_NUMBER: _ClassVar[int]
    steps: _containers.RepeatedCompositeFieldContainer[InstanceStep]
    def __init__(self, steps: _Optional[_Iterable[_Union[InstanceStep, _Mapping]]] = ...) -> None: ...

class InstanceStep(_message.Message):
    __slots__ = ("instance", "step")
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    instance: str
    step: Step
    def __init__(self, instance: _Optional[str] = ..., step: _Optional[_Union[Step, _Mapping]] = ...) -> None: ...

class StepBatchResult(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[InstanceStepResult]
    def __init__(self, results: _Optional[_Iterable[_Union[InstanceStepResult, _Mapping]]] = ...) -> None: ...

class InstanceStepResult(_message.Message):
    __slots__ = ("instance", "result", "error")
    INSTANCE_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    instance: str
    result: StepResult
    error: Error
    def __init__(self, instance: _Optional[str] = ..., result: _Optional[_Union[StepResult, _Mapping]] = ..., error: _Optional[_Union[Error, _Mapping]] = ...) -> None: ...

class Ack(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Initialized(_message.Message):
    __slots__ = ("outputs",)
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    outputs: _containers.RepeatedCompositeFieldContainer[PortValue]
    def __init__(self, outputs: _Optional[_Iterable[_Union[PortValue, _Mapping]]] = ...) -> None: ...

class StepResult(_message.Message):
    __slots__ = ("time_ns", "outputs", "compute_ns", "finished", "failed")
    TIME_NS_FIELD_NUMBER: _ClassVar[int]
    OUTPUTS_FIELD_NUMBER: _ClassVar[int]
    COMPUTE_NS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    FAILED_FIELD_NUMBER: _ClassVar[int]
    time_ns: int
    outputs: _containers.RepeatedCompositeFieldContainer[PortValue]
    compute_ns: int
    finished: str
    failed: bool
    def __init__(self, time_ns: _Optional[int] = ..., outputs: _Optional[_Iterable[_Union[PortValue, _Mapping]]] = ..., compute_ns: _Optional[int] = ..., finished: _Optional[str] = ..., failed: _Optional[bool] = ...) -> None: ...

class Terminate(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Terminated(_message.Message):
    __slots__ = ("metrics_json",)
    METRICS_JSON_FIELD_NUMBER: _ClassVar[int]
    metrics_json: str
    def __init__(self, metrics_json: _Optional[str] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ("state", "counter")
    STATE_FIELD_NUMBER: _ClassVar[int]
    COUNTER_FIELD_NUMBER: _ClassVar[int]
    state: ComponentState
    counter: int
    def __init__(self, state: _Optional[_Union[ComponentState, str]] = ..., counter: _Optional[int] = ...) -> None: ...

class Error(_message.Message):
    __slots__ = ("code", "component", "message", "fix")
    CODE_FIELD_NUMBER: _ClassVar[int]
    COMPONENT_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    FIX_FIELD_NUMBER: _ClassVar[int]
    code: ErrorCode
    component: str
    message: str
    fix: str
    def __init__(self, code: _Optional[_Union[ErrorCode, str]] = ..., component: _Optional[str] = ..., message: _Optional[str] = ..., fix: _Optional[str] = ...) -> None: ...
