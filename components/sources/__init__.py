"""Sources: components with no inputs that drive others on a schedule.

- ``wrench.py``: :class:`ConstantWrench` (short name ``sources.constant_wrench``), a
  body wrench piecewise constant in time.
"""

from .wrench import ConstantWrench

__all__ = ["ConstantWrench"]
