"""Sources: components with no inputs that drive others on a schedule.

- ``wrench.py``: :class:`ConstantWrench` (short name ``sources.constant_wrench``), a
  body wrench piecewise constant in time.
- ``signal.py``: :class:`SignalSource` (short name ``sources.signal``): step, ramp,
  sine, chirp (linear, logarithmic), CSV and recording playback on any numeric field
  of any message type, several fields per source.
"""

from .signal import SignalSource
from .wrench import ConstantWrench

__all__ = ["ConstantWrench", "SignalSource"]
