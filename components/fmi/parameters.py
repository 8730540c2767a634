"""The parameters of the ``fmu`` component (the rig's ``[components.X.parameters]``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..sdk.component import param
from ..sdk.errors import ParameterError

FMI_TYPES = ("auto", "cs", "me")
SOLVERS = ("cvode", "rk4")


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
    water_column: Path | None = param(
        None, "a scene file (relative to the rig file's folder) whose water column (TEOS-10) "
        "sets the FMU's tabulated water column: water_points, water_depth_K, water_rho_K (the "
        "hydrodynamics FMU's; docs/hydrodynamics.md), so the FMU's buoyancy uses the density "
        "the sensors sense")
    profile: dict[str, Any] = param(
        {}, "a profile file's content (the rig's profile key; 'file' is its path); its "
        "[parameters] are start values, its [mesh] files hull meshes checked before the run"
    )
    fmi_type: str = param("auto", "auto (co-simulation if the FMU has it), cs or me")
    solver: str = param(
        "cvode", "model exchange: cvode (variable-step BDF of SUNDIALS, through fmpy, with "
        "root finding on the event indicators) or rk4 (fixed-step classical Runge-Kutta, state "
        "events located by bisection)"
    )
    rtol: float = param(1e-6, "model exchange with cvode: relative tolerance (absolute "
                        "tolerance: rtol times each state's nominal value)")
    max_step: float = param(0.0, "model exchange with cvode: largest internal step (0: no "
                            "limit)", unit="s")
    step_size: float = param(
        0.001, "model exchange with rk4: largest RK4 step; each communication step is divided into "
        "equal sub-steps no longer than this (0: use substeps)", unit="s"
    )
    substeps: int = param(1, "model exchange with step_size = 0: RK4 steps per communication step")
    terminate_is_error: bool = param(
        False, "an FMU that requests termination fails the run (exit 1) instead of ending "
        "it cleanly (status terminated, exit 0)"
    )
    log_fmu: bool = param(False, "turn the FMU's debug logging on (its messages go to the log)")

    def __post_init__(self) -> None:
        if self.fmi_type not in FMI_TYPES:
            raise ParameterError(f"fmi_type '{self.fmi_type}' is not one of {', '.join(FMI_TYPES)}")
        if self.solver not in SOLVERS:
            raise ParameterError(f"solver '{self.solver}' is not one of {', '.join(SOLVERS)}",
                                 fix="write solver = \"cvode\" or solver = \"rk4\"")
        if not 0 < self.rtol < 1:
            raise ParameterError(f"rtol must be in (0, 1), got {self.rtol}")
        if not self.max_step >= 0:
            raise ParameterError(f"max_step must be >= 0 s, got {self.max_step}")
        if self.substeps < 1:
            raise ParameterError(f"substeps must be >= 1, got {self.substeps}")
        if not self.step_size >= 0:
            raise ParameterError(f"step_size must be >= 0 s, got {self.step_size}")
