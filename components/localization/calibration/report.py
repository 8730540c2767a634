"""The text reports of the two calibrations (what ``moonpool calibrate`` prints)."""

from __future__ import annotations

import math

from .intrinsics import IntrinsicsResult
from .water import WaterResult
from .water_model import camera_angles


def format_intrinsics_report(res: IntrinsicsResult) -> str:
    fx, fy, cx, cy = res.K
    sd = res.sigma
    n_pts = sum(r.points for r in res.used)
    lines = [f"intrinsic calibration: {res.board.describe()}",
             f"images: {len(res.images)} given, {len(res.used)} used, {len(res.rejected)} rejected",
             (f"RMS reprojection error {res.rms_px:.3f} px ({n_pts} corners, image "
              f"{res.image_size[0]} x {res.image_size[1]} px)")]
    for a, va, b, vb in (("fx", fx, "fy", fy), ("cx", cx, "cy", cy)):
        lines.append(f"  {a} {va:10.3f} ± {sd.get(a, math.nan):.3f}   "
                     f"{b} {vb:10.3f} ± {sd.get(b, math.nan):.3f}")
    lines.append("  dist [k1 k2 p1 p2 k3] = [" + ", ".join(f"{v:.5f}" for v in res.dist) + "]")
    lines.append("per image (RMS px, points, board tilt):")
    for r in res.images:
        if r.used:
            lines.append(f"  {r.path}: {r.rms_px:.3f} px, {r.points} points, {r.tilt_deg:.0f} deg")
    for r in res.rejected:
        lines.append(f"  {r.path}: rejected: {r.reason}")
    lines += [f"note: {n}" for n in res.notes]
    return "\n".join(lines)



def format_water_report(res: WaterResult) -> str:
    sd = res.sigma
    roll, pitch, heading = (math.degrees(v) for v in camera_angles(res.R_wc))
    lines = [(f"water-plane calibration: {len(res.images)} images, {len(res.used)} used, "
             f"{len(res.rejected)} rejected")]
    lines.append(f"RMS reprojection error {res.rms_px:.3f} px ({res.corners} tag corners)")
    lines.append(f"camera height above the water  {res.height_m:.4f} m ± "
                 f"{sd['height_m'] * 1000:.1f} mm (fit {sd['height_fit_m'] * 1000:.1f} mm, "
                 f"depths {sd['height_depth_m'] * 1000:.1f} mm)")
    if res.free["water_z"]:
        lines.append(f"water_z {res.water_z:.4f} m ± {sd['water_z_m'] * 1000:.1f} mm (fitted; "
                     f"correlation with the height {sd.get('corr_height_water_z', math.nan):+.2f})")
    else:
        lines.append(f"water_z {res.water_z:.4f} m (held: gauge)")
    lines.append(f"camera tilt from vertical {res.tilt_deg:.3f} deg (roll {roll:+.3f} ± "
                 f"{sd['roll_deg']:.3f}, pitch {pitch:+.3f} ± {sd['pitch_deg']:.3f} deg)")
    lines.append(f"heading (image +x) {heading:+.3f} deg" + (
        f" ± {sd['heading_deg']:.3f}" if res.free["heading"] else " (held: gauge)"))
    lines.append("t_wc [" + ", ".join(f"{v:.4f}" for v in res.t_wc) + "] m" + (
        f" (x ± {sd['x_m'] * 1000:.1f} mm, y ± {sd['y_m'] * 1000:.1f} mm)" if res.free["x"]
        else " (x, y held: gauge)"))
    sens = res.sensitivity
    lines.append(f"sensitivity of the height: {sens['height_per_depth_bias']:+.2f} mm per mm of "
                 f"common depth bias, {sens['height_per_n_water']:+.2f} mm per +0.001 n_water, "
                 f"{sens['height_per_focal_scale']:+.2f} mm per +0.1 % focal length")
    lines += [f"gauge: {g}" for g in res.gauge]
    lines.append("per image (RMS px, tags, fitted x, y, yaw):")
    for r in res.images:
        if r.used:
            lines.append(f"  {r.image}: {r.rms_px:.3f} px, tags {list(r.tags)}, x {r.x_m:+.4f} "
                         f"y {r.y_m:+.4f} m, yaw {math.degrees(r.yaw_rad):+.2f} deg")
    for r in res.rejected:
        lines.append(f"  {r.image}: rejected: {r.reason}")
    lines += [f"note: {n}" for n in res.notes]
    return "\n".join(lines)
