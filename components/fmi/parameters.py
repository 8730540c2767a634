"""The parameters of the ``fmu`` component (the rig's ``[components.X.parameters]``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sdk.component import param
from ..sdk.errors import ParameterError

FMI_TYPES = ("auto", "cs", "me")


@dataclass(frozen=True, kw_only=True)
class FmuParameters:
    fmu: Path = param(doc="the .fmu file (FMI 2.0 or 3.0), relative to the rig file's folder")
    inputs: dict[str, Any] = param(
        {}, "input ports: PORT = {type = MESSAGE TYPE, fields = {FIELD PATH or SIGNAL = VARIABLE}}"
    )
    outputs: dict[str, Any] = param(
        {}, "output ports: PORT = {type = MESSAGE TYPE, fields = {FIELD PATH or SIGNAL = VARIABLE}}"
    )
    start_values: dict[str, Any] = param({}, "VARIABLE = value, set before initialization")
    profile: dict[str, Any] = param(
        {}, "a profile file's content (the rig's profile key); its [parameters] are start values"
    )
    fmi_type: str = param("auto", "auto (co-simulation if the FMU has it), cs or me")
    step_size: float = param(
        0.001, "model exchange: largest RK4 step; each communication step is divided into "
        "equal sub-steps no longer than this (0: use substeps)", unit="s"
    )
    substeps: int = param(1, "model exchange with step_size = 0: RK4 steps per communication step")
    log_fmu: bool = param(False, "turn the FMU's debug logging on (its messages go to the log)")

    def __post_init__(self) -> None:
        if self.fmi_type not in FMI_TYPES:
            raise ParameterError(f"fmi_type '{self.fmi_type}' is not one of {', '.join(FMI_TYPES)}")
        if self.substeps < 1:
            raise ParameterError(f"substeps must be >= 1, got {self.substeps}")
        if not self.step_size >= 0:
            raise ParameterError(f"step_size must be >= 0 s, got {self.step_size}")
