"""pupil-apriltags pitfall 7 (components/localization/detect.py): a process that ran a
full-resolution detection must still exit cleanly (it used to end in a segmentation
fault when the interpreter destroyed the shared C detector)."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import numpy as np
from moonpool.components.localization.detect import DetectorOptions, TagDetector
img = (np.random.default_rng(0).random((720, 1280)) * 255).astype(np.uint8)
det = TagDetector(DetectorOptions(quad_decimate=1.0))
for _ in range(3):
    det.detect(img)
print("detected")
"""


def test_process_exits_cleanly_after_full_resolution_detection():
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "detected", proc.stderr
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
