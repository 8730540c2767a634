"""SSP import: ``moonpool import ssp SYSTEM.ssp`` turns an SSP 1.0 / 2.0 system of FMUs
into a rig (``ssd.py``: the reader and the rig writer; ``cli.py``: the command).
"""

from .ssd import SspError, System, read_ssp, rig_text

__all__ = ["SspError", "System", "read_ssp", "rig_text"]
