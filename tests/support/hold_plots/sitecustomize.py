"""A test double for matplotlib, for tests/integration/test_interrupts.py only: on the
PYTHONPATH of a process started with ``MOONPOOL_TEST_HOLD_PLOTS=1``, every
``Figure.savefig`` first waits (at most 60 s) for the Ctrl-C the test sends, so a
Ctrl-C after "drawing the plots" always lands while the plots are being drawn,
however fast the machine draws them. Python imports ``sitecustomize`` at start-up
from the first folder on its path that has one; nothing of moonpool is changed."""

import os
import sys
import time

if os.environ.get("MOONPOOL_TEST_HOLD_PLOTS") == "1":
    from matplotlib.figure import Figure

    _savefig = Figure.savefig

    def _held_savefig(self, *args, **kwargs):
        sys.stderr.write("[test] plotting held until Ctrl-C\n")
        sys.stderr.flush()
        deadline = time.monotonic() + 60.0
        while time.monotonic() < deadline:  # KeyboardInterrupt ends the wait
            time.sleep(0.05)
        return _savefig(self, *args, **kwargs)

    Figure.savefig = _held_savefig
