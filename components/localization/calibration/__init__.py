"""Calibration of the overhead pool camera (docs/localization.md, "Calibration").

Two steps, two commands, one ``setup.json``:

1. **Intrinsics** (``calibrate_intrinsics``; ``moonpool calibrate intrinsics``): K and the
   k1 k2 p1 p2 k3 distortion (OpenCV order) by ``cv2.calibrateCameraExtended`` from
   15-30 photos, taken in air, of a printed checkerboard (``findChessboardCornersSB``
   with ``CALIB_CB_ACCURACY``; ``findChessboardCorners`` + ``cornerSubPix`` as a
   fallback) or ChArUco board (``cv2.aruco.CharucoDetector``, OpenCV >= 4.7 API).
   ``--cols`` / ``--rows`` count the board's **squares** for both boards (a checkerboard
   of 9 x 6 squares has 8 x 5 inner corners). Images where the board is not found, or
   whose reprojection RMS is an outlier (> max(3 x median, 0.5 px)), are rejected with
   the reason; the RMS reprojection error, each image's error and the standard
   deviations of the intrinsics are reported.

2. **Extrinsics and water plane** (``calibrate_water``; ``moonpool calibrate water``):
   R_wc, t_wc and the camera height above the water from images of AprilTags (the
   vehicle, or a tag board) at known depths, by nonlinear least squares (Levenberg-
   Marquardt, the per-image poses eliminated by the Schur complement) of the tag
   corners' reprojection error **through the refraction model** (``refraction.py``:
   forward projection through the flat surface, exact to 1e-9 px); the covariance
   from the Jacobian. Unknowns: the
   camera's roll and pitch about the vertical, its height h above the water, and per
   image the body's horizontal position and yaw (unless the manifest gives them).

Observability and the gauge (what the data can and cannot tell):

- Depths from a pressure sensor or a tape are measured **from the water surface**: a
  shift of the water plane and the camera together along z changes no image. Only the
  camera height h = water_z - t_wc.z is observable; ``water_z`` stays at the value in
  the setup (0 by the world frame's definition: origin on the still surface) and
  t_wc.z = water_z - h.
- Horizontal translation of the world and rotation about the vertical are gauge
  freedoms unless the manifest gives known positions (x_m, y_m, or a dataset line's
  truth: one image fixes the camera's x, y) and a known yaw (yaw_rad) or two known
  positions >= 5 cm apart (fix the heading). Without them the camera's x, y and heading (the horizontal direction
  of the image's +x axis) keep the setup's values (x = y = 0, heading 0 without one).
- With world heights from a survey instead (``z_m``: world z of the body origin, not
  relative to the surface) water_z becomes a free parameter, but weakly: paraxially a
  tag's apparent distance is h + (z - water_z) / n_w, which fixes only
  (1 - 1/n_w) water_z - t_wc.z; off-axis views separate them (its sigma is reported).
- Tilt (2 DOF) comes from the perspective of tags whose own tilt is known (level, or
  roll/pitch from the IMU); h from the tags' known size and depths. Both rest on the
  intrinsics, tag_size_m and n_water: the sensitivities of h to a common depth bias,
  to n_water and to the focal length are reported beside the fit's sigma.

Modules, one purpose each:

- ``images.py``: image paths from the command line, reading them as 8-bit grey;
- ``boards.py``: the printed boards (``BoardSpec``) and their detection;
- ``intrinsics.py``: step 1, ``calibrate_intrinsics`` (OpenCV's calibration, outliers,
  coverage);
- ``manifest.py``: step 2's input, ``manifest.jsonl`` (``WaterSample``);
- ``water_model.py``: step 2's camera parameters, residuals through the refraction
  model, Jacobian and Levenberg-Marquardt solve;
- ``water_start.py``: step 2's gauge freedoms and initial estimates;
- ``water.py``: step 2, ``calibrate_water`` (the fit, outlier rounds, covariance,
  sensitivities);
- ``setup_file.py``: reading and updating ``setup.json`` (``write_intrinsics``,
  ``write_water``, ``check_output``) and the tag layout (``layout.json``);
- ``report.py``: the text reports ``moonpool calibrate`` prints;
- ``common.py``: ``CalibrationFailed`` and the listing of many problems at once.
"""

from .boards import BOARDS, BoardSpec, dictionary_name
from .common import CalibrationFailed
from .images import IMAGE_SUFFIXES, expand_images, read_gray
from .intrinsics import (
    ImageReport,
    IntrinsicsOptions,
    IntrinsicsResult,
    calibrate_intrinsics,
)
from .manifest import MANIFEST_FILE, WaterSample, read_water_manifest
from .report import format_intrinsics_report, format_water_report
from .setup_file import (
    LAYOUT_FILE,
    check_output,
    read_json_object,
    write_intrinsics,
    write_water,
)
from .water import WaterImageReport, WaterOptions, WaterResult, calibrate_water
from .water_model import camera_angles

__all__ = [
    "BOARDS", "IMAGE_SUFFIXES", "LAYOUT_FILE", "MANIFEST_FILE",
    "BoardSpec", "CalibrationFailed", "ImageReport", "IntrinsicsOptions", "IntrinsicsResult",
    "WaterImageReport", "WaterOptions", "WaterResult", "WaterSample",
    "calibrate_intrinsics", "calibrate_water", "camera_angles", "check_output",
    "dictionary_name", "expand_images", "format_intrinsics_report", "format_water_report",
    "read_gray", "read_json_object", "read_water_manifest", "write_intrinsics", "write_water",
]
