"""Camera calibration (components/localization/calibration/).

Intrinsics: checkerboard and ChArUco images synthesized independently of the code
under test — the board's squares (and markers' cells) projected with
``cv2.projectPoints`` through a known K and distortion, edges subdivided so that they
bend with the distortion, filled with ``cv2.fillPoly`` at 8x supersampling, area
averaged, blurred and noised — must give back fx, fy, cx, cy and the distortion.
Water plane: tag images rendered with ``render.py`` through the refraction model by
a known camera, at known depths, must give back the camera height and R_wc."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest
from moonpool.components.sdk.errors import ParameterError
from moonpool.components.localization import calibration as cal
from moonpool.components.localization.pool_setup import (
    PoolSetup,
    TagMount,
    example_setup,
    load_setup,
    setup_to_dict,
)
from moonpool.components.localization.render import Pose, Renderer, RenderOptions

# ------------------------------------------------------------------ board synthesis


def board_polygons(kind: str, cols: int, rows: int, square: float, marker: float | None = None,
                   dictionary: str | None = None) -> list[np.ndarray]:
    """The black areas of a board as polygons (k, 2) in board coordinates (m, z = 0;
    x right, y down on the printed board, origin at its top-left corner)."""
    sq = [np.array([[i, j], [i + 1, j], [i + 1, j + 1], [i, j + 1]], float) * square
          for j in range(rows) for i in range(cols)]
    if kind == "checkerboard":
        return [p for k, p in enumerate(sq) if (k // cols + k % cols) % 2 == 0]
    d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary))
    board = cv2.aruco.CharucoBoard((cols, rows), square, marker, d)
    polys, with_marker = [], set()
    nb = d.markerSize + 2
    for obj, mid in zip(board.getObjPoints(), board.getIds().ravel()):
        obj = np.asarray(obj, float)  # TL, TR, BR, BL of the marker
        c = obj.mean(axis=0)
        with_marker.add((int(c[0] // square), int(c[1] // square)))
        cells = d.generateImageMarker(int(mid), nb)  # one pixel per cell, border included
        cell = (obj[1, 0] - obj[0, 0]) / nb
        for r in range(nb):
            for q in range(nb):
                if cells[r, q] < 128:
                    x0, y0 = obj[0, 0] + q * cell, obj[0, 1] + r * cell
                    polys.append(np.array([[x0, y0], [x0 + cell, y0], [x0 + cell, y0 + cell],
                                           [x0, y0 + cell]]))
    for k, p in enumerate(sq):  # every square without a marker is black
        if (k % cols, k // cols) not in with_marker:
            polys.append(p)
    return polys


def _subdivide(poly: np.ndarray, n: int) -> np.ndarray:
    t = np.arange(n) / n
    return np.concatenate([a + (b - a) * t[:, None] for a, b in zip(poly, np.roll(poly, -1, 0))])


def render_board(polys: list[np.ndarray], paper: np.ndarray, K: np.ndarray, dist: np.ndarray,
                 rvec: np.ndarray, tvec: np.ndarray, size: tuple[int, int],
                 rng: np.random.Generator | None, S: int = 8, blur_px: float = 0.6,
                 noise_dn: float = 2.0, bend_m: float = 0.0) -> np.ndarray:
    """An 8-bit image of the board (black 25, paper 230, background 90). fillPoly
    fills whole supersampled pixels (vertices rounded), so S = 8 leaves < 0.01 px bias.
    ``bend_m``: the board bent into a parabolic trough of that sag across its width."""
    w, h = size
    sub = [_subdivide(p, 4) for p in polys]
    allp = np.concatenate([paper] + sub)
    x0, x1 = paper[:, 0].min(), paper[:, 0].max()
    z = bend_m * (1.0 - ((allp[:, 0] - 0.5 * (x0 + x1)) / (0.5 * (x1 - x0))) ** 2)
    px, _ = cv2.projectPoints(np.c_[allp, z], rvec, tvec, K, dist)
    sp = np.round(((px.reshape(-1, 2) + 0.5) * S - 0.5) * 16).astype(np.int32)
    canvas = np.full((h * S, w * S), 90, np.uint8)
    cv2.fillPoly(canvas, [sp[: len(paper)]], 230, cv2.LINE_8, 4)
    out, k = [], len(paper)
    for p in sub:
        out.append(sp[k:k + len(p)])
        k += len(p)
    cv2.fillPoly(canvas, out, 25, cv2.LINE_8, 4)
    img = cv2.resize(canvas, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)
    if blur_px > 0:
        img = cv2.GaussianBlur(img, (0, 0), blur_px)
    if rng is not None:
        img += noise_dn * rng.standard_normal(img.shape).astype(np.float32)
    return np.clip(img + 0.5, 0, 255).astype(np.uint8)


def board_views(n: int, rng: np.random.Generator, K: np.ndarray, dist: np.ndarray,
                size: tuple[int, int], board_wh: tuple[float, float], fill: float = 0.55,
                whole: bool = True) -> list[tuple[np.ndarray, np.ndarray]]:
    """Board poses (rvec, tvec) tilted 15-45 deg, spread over the image (the first four
    near its corners); with ``whole`` the board is wholly in view."""
    w, h = size
    bw, bh = board_wh
    corners = np.array([[0, 0, 0], [bw, 0, 0], [bw, bh, 0], [0, bh, 0]], float)
    targets = [(0.2, 0.2), (0.8, 0.2), (0.2, 0.8), (0.8, 0.8)]
    out = []
    tries = 0
    while len(out) < n:
        tries += 1
        assert tries < 20000
        k = len(out)
        u, v = targets[k] if k < 4 else (rng.uniform(0.2, 0.8), rng.uniform(0.2, 0.8))
        tilt = math.radians(rng.uniform(15, 45))
        az = rng.uniform(0, 2 * math.pi)
        R = (cv2.Rodrigues(np.array([math.cos(az), math.sin(az), 0.0]) * tilt)[0]
             @ cv2.Rodrigues(np.array([0.0, 0.0, rng.uniform(-0.4, 0.4)]))[0])
        z = K[0, 0] * bw / (fill * (0.7 if k < 4 else 1.0) * w) * rng.uniform(0.85, 1.15)
        ray = np.linalg.solve(K, [u * w, v * h, 1.0])
        t = ray * z - R @ np.array([bw / 2, bh / 2, 0.0])
        if np.min((corners @ R.T + t)[:, 2]) < 0.05:
            continue
        px, _ = cv2.projectPoints(corners, cv2.Rodrigues(R)[0], t, K, dist)
        px = px.reshape(-1, 2)
        inside = (px[:, 0] > 8) & (px[:, 0] < w - 9) & (px[:, 1] > 8) & (px[:, 1] < h - 9)
        if whole and not inside.all():
            continue
        out.append((cv2.Rodrigues(R)[0].ravel(), t))
    return out


def write_board_images(folder: Path, kind: str, cols: int, rows: int, square: float,
                       K: np.ndarray, dist: np.ndarray, size: tuple[int, int], n: int, seed: int,
                       marker: float | None = None, dictionary: str | None = None,
                       whole: bool = True, fill: float = 0.55,
                       bend_m: float = 0.0, S: int = 8) -> tuple[list[Path], list[np.ndarray]]:
    """Images of a board in ``n`` views; also the true pixels of each view's outermost
    corners."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    polys = board_polygons(kind, cols, rows, square, marker, dictionary)
    m = square * 0.5
    paper = _subdivide(np.array([[-m, -m], [cols * square + m, -m],
                                 [cols * square + m, rows * square + m],
                                 [-m, rows * square + m]]), 16)
    paths, outlines = [], []
    ends = np.array([[1, 1, 0], [cols - 1, 1, 0], [cols - 1, rows - 1, 0], [1, rows - 1, 0]],
                    float) * square
    for k, (rv, tv) in enumerate(board_views(n, rng, K, dist, size, (cols * square, rows * square),
                                             fill=fill, whole=whole)):
        p = folder / f"{kind}_{k:02d}.png"
        cv2.imwrite(str(p), render_board(polys, paper, K, dist, rv, tv, size, rng, S=S,
                                         bend_m=bend_m))
        paths.append(p)
        outlines.append(cv2.projectPoints(ends, rv, tv, K, dist)[0].reshape(-1, 2))
    return paths, outlines


def distortion_gap_px(K: np.ndarray, d1, K2: np.ndarray, d2, size,
                      hull: np.ndarray | None = None) -> float:
    """Largest difference of the two cameras' pixel for the same rays over the image
    (within ``hull``, the convex hull of the calibration's corners, when given): K and
    distortion together."""
    w, h = size
    u, v = np.meshgrid(np.linspace(0, w - 1, 41), np.linspace(0, h - 1, 31))
    px = np.stack([u.ravel(), v.ravel()], axis=-1)
    if hull is not None:
        hull = cv2.convexHull(hull.astype(np.float32))
        px = px[[cv2.pointPolygonTest(hull, (float(a), float(b)), False) >= 0 for a, b in px]]
    px = px[:, None, :]
    xn = cv2.undistortPoints(px, K, np.asarray(d1, float), criteria=(
        cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 200, 1e-15))
    P = np.c_[xn.reshape(-1, 2), np.ones(len(px))]
    back, _ = cv2.projectPoints(P, np.zeros(3), np.zeros(3), K2, np.asarray(d2, float))
    return float(np.max(np.linalg.norm(back.reshape(-1, 2) - px.reshape(-1, 2), axis=1)))


# A 800 x 600 camera with visible barrel distortion.
K_TRUE = np.array([[610.0, 0.0, 405.3], [0.0, 612.5, 296.8], [0.0, 0.0, 1.0]])
D_TRUE = np.array([-0.12, 0.045, 0.0006, -0.0004, 0.0])
SIZE = (800, 600)


CHECKER_OUTLINES: list[np.ndarray] = []


@pytest.fixture(scope="module")
def checker_images(tmp_path_factory):
    """12 good views, a blank frame and one view of a bent board (its corners cannot fit
    any camera)."""
    d = tmp_path_factory.mktemp("checker")
    paths, outlines = write_board_images(d, "checkerboard", 9, 7, 0.03, K_TRUE, D_TRUE, SIZE, 12,
                                         seed=1)
    cv2.imwrite(str(d / "blank.png"), np.full(SIZE[::-1], 128, np.uint8))
    bent, _ = write_board_images(d / "bent", "checkerboard", 9, 7, 0.03, K_TRUE, D_TRUE, SIZE, 1,
                                 seed=7, bend_m=0.015)
    CHECKER_OUTLINES[:] = outlines
    return paths + [d / "blank.png"] + bent


def test_checkerboard_intrinsics_recovered(checker_images):
    res = cal.calibrate_intrinsics(checker_images, cal.BoardSpec("checkerboard", 9, 7, 0.03))
    print(cal.format_intrinsics_report(res))
    fx, fy, cx, cy = res.K
    assert abs(fx / K_TRUE[0, 0] - 1) < 1.5e-3 and abs(fy / K_TRUE[1, 1] - 1) < 1.5e-3
    assert abs(cx - K_TRUE[0, 2]) < 1.5 and abs(cy - K_TRUE[1, 2]) < 1.5
    assert abs(res.dist[0] - D_TRUE[0]) < 0.01
    K = np.array([[fx, 0, cx], [0, fy, cy], [0, 0, 1]])
    hull = np.concatenate(CHECKER_OUTLINES)  # where the calibration has corners
    gap = distortion_gap_px(K_TRUE, D_TRUE, K, res.dist, SIZE, hull)
    print("largest pixel error over the calibrated area", gap)
    assert gap < 0.6
    assert res.rms_px < 0.15
    # The reported standard deviations are honest (within 4 sigma).
    for name, true in (("fx", K_TRUE[0, 0]), ("fy", K_TRUE[1, 1]), ("cx", K_TRUE[0, 2]),
                       ("cy", K_TRUE[1, 2])):
        got = dict(zip(("fx", "fy", "cx", "cy"), res.K))[name]
        assert abs(got - true) < 4 * res.sigma[name] + 0.05, (name, got, true, res.sigma[name])
    # Rejected with their reasons: no board in the blank frame, and the bent board as an
    # outlier of the reprojection error.
    why = {str(Path(r.path).relative_to(checker_images[0].parent)): r.reason
           for r in res.rejected}
    assert set(why) == {"blank.png", "bent/checkerboard_00.png"}, why
    assert why["blank.png"] == "no checkerboard of 8 x 6 inner corners found"
    assert "reprojection RMS" in why["bent/checkerboard_00.png"]
    assert len(res.used) == 12
    assert all(r.rms_px < 0.3 for r in res.used)


def test_checkerboard_given_as_inner_corners(checker_images):
    """--cols/--rows count squares; a user giving inner corners (8 x 6) gets the board
    found anyway, with a note."""
    res = cal.calibrate_intrinsics(checker_images[:3], cal.BoardSpec("checkerboard", 8, 6, 0.03),
                                   cal.IntrinsicsOptions(min_images=3))
    assert res.board.cols == 9 and res.board.rows == 7
    assert any("inner corners" in n for n in res.notes)
    assert len(res.used) == 3


def test_charuco_intrinsics_recovered(tmp_path):
    """ChArUco views, some partly out of the image (ChArUco's point), the dictionary
    found from the images."""
    paths, _ = write_board_images(tmp_path, "charuco", 8, 6, 0.035, K_TRUE, D_TRUE, SIZE, 16,
                                  seed=2, marker=0.026, dictionary="DICT_5X5_100", whole=False,
                                  fill=0.7)
    res = cal.calibrate_intrinsics(paths, cal.BoardSpec("charuco", 8, 6, 0.035, 0.026))
    print(cal.format_intrinsics_report(res))
    assert res.board.dictionary == "DICT_5X5_50"
    fx, fy, cx, cy = res.K
    assert abs(fx / K_TRUE[0, 0] - 1) < 2e-3 and abs(fy / K_TRUE[1, 1] - 1) < 2e-3
    assert abs(cx - K_TRUE[0, 2]) < 1.5 and abs(cy - K_TRUE[1, 2]) < 1.5
    K = np.array([[fx, 0, cx], [0, fy, cy], [0, 0, 1]])
    gap = distortion_gap_px(K_TRUE, D_TRUE, K, res.dist, SIZE,
                            np.array([[80, 60], [720, 60], [720, 540], [80, 540]]))
    print("largest pixel error over the inner 80 %", gap)
    assert gap < 0.6
    assert res.rms_px < 0.2 and len(res.used) >= 15
    assert any(r.points < 35 for r in res.used)  # partial views were used


def test_intrinsics_bad_input(tmp_path):
    blank = []
    for k in range(4):
        p = tmp_path / f"b{k}.png"
        cv2.imwrite(str(p), np.full((120, 160), 100 + k, np.uint8))
        blank.append(p)
    spec = cal.BoardSpec("checkerboard", 9, 7, 0.03)
    with pytest.raises(ParameterError) as e:
        cal.calibrate_intrinsics(blank, spec)
    assert "no checkerboard 9 x 7 squares" in str(e.value) and "b0.png" in str(e.value)
    assert "fix:" in str(e.value)
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\nnot really")
    with pytest.raises(ParameterError, match=r"bad\.png: not a readable image"):
        cal.calibrate_intrinsics(blank + [bad], spec)
    other = tmp_path / "other.png"
    cv2.imwrite(str(other), np.zeros((100, 100), np.uint8))
    with pytest.raises(ParameterError, match=r"other\.png: the image is 100x100 px but .*b0\.png "
                                             r"is 160x120 px"):
        cal.calibrate_intrinsics(blank + [other], spec)
    with pytest.raises(ParameterError, match=r"missing\.png: no such file"):
        cal.expand_images([blank[0], tmp_path / "missing.png"])
    with pytest.raises(ParameterError, match="too small"):
        cal.calibrate_intrinsics(blank, cal.BoardSpec("checkerboard", 2, 7, 0.03))
    with pytest.raises(ParameterError, match="unknown ArUco dictionary"):
        cal.BoardSpec("charuco", 5, 5, 0.03, dictionary="DICT_9X9_1").check()
    assert cal.dictionary_name("5x5_100") == "DICT_5X5_100"
    assert cal.dictionary_name("DICT_APRILTAG_36h11").upper() == "DICT_APRILTAG_36H11"


def test_too_few_images(checker_images):
    with pytest.raises(ParameterError, match=r"found in only 2 of 2 images; at least 4"):
        cal.calibrate_intrinsics(checker_images[:2], cal.BoardSpec("checkerboard", 9, 7, 0.03))
    with pytest.raises(ParameterError, match=r"found in only 3 of 4 images; at least 4 .*\n"
                                             r"  .*blank.png: no checkerboard"):
        cal.calibrate_intrinsics(checker_images[9:13], cal.BoardSpec("checkerboard", 9, 7, 0.03))


def test_write_intrinsics_creates_and_updates(tmp_path):
    res = cal.IntrinsicsResult(K=(800.0, 801.0, 640.0, 360.0), dist=(-0.1, 0.01, 0.0, 0.0, 0.0),
                               image_size=(1280, 720), rms_px=0.1, images=[], sigma={},
                               board=cal.BoardSpec("checkerboard", 9, 7, 0.03))
    out = tmp_path / "setup.json"
    notes = cal.write_intrinsics(res, out)
    data = json.loads(out.read_text())
    assert data["K"] == [800.0, 801.0, 640.0, 360.0] and data["image_size"] == [1280, 720]
    assert any("not complete yet" in n for n in notes)
    # An existing, complete setup: K/dist/image_size replaced, the rest kept.
    full = setup_to_dict(example_setup())
    full["notes"] = "pool 2"
    out.write_text(json.dumps(full))
    notes = cal.write_intrinsics(res, out)
    s = load_setup(out)
    assert s.K == res.K and s.dist == res.dist and s.tags == example_setup().tags
    assert s.t_wc == example_setup().t_wc and json.loads(out.read_text())["notes"] == "pool 2"
    assert any("calibrate water" in n for n in notes)
    # The camera keys grouped in "camera" stay there.
    grouped = {k: v for k, v in setup_to_dict(example_setup()).items()
               if k not in ("K", "dist", "R_wc", "t_wc")}
    grouped["camera"] = {k: full[k] for k in ("K", "dist", "R_wc", "t_wc")}
    out.write_text(json.dumps(grouped))
    cal.write_intrinsics(res, out)
    data = json.loads(out.read_text())
    assert "K" not in data and data["camera"]["K"] == list(res.K)
    assert load_setup(out).K == res.K
    out.write_text("{oops")
    with pytest.raises(ParameterError, match="not valid JSON"):
        cal.check_output(out)


# ---------------------------------------------------------------------- water plane


TRUE = example_setup()


def render_tag_folder(folder: Path, true: PoolSetup, places, seed: int = 0,
                      keys=("depth_m",), known: int = 0, extra: dict | None = None) -> None:
    """Images of the vehicle at (x, y, depth, yaw) and a manifest (roll = pitch = 0
    unless ``places`` gives them). ``known``: the first images carry x_m, y_m, yaw_rad."""
    folder.mkdir(parents=True, exist_ok=True)
    r = Renderer(true, RenderOptions(read_noise_dn=1.5, shot_noise_dn=0.05, blur_sigma_px=0.5))
    rng = np.random.default_rng(seed)
    lines = []
    for k, pl in enumerate(places):
        x, y, depth, yaw = pl[:4]
        roll, pitch = pl[4:6] if len(pl) > 4 else (0.0, 0.0)
        pose = Pose(x, y, true.water_z + depth, roll, pitch, yaw)
        name = f"{k:03d}.png"
        cv2.imwrite(str(folder / name), r.render(pose, rng))
        rec: dict = {"image": name, "roll_rad": roll, "pitch_rad": pitch}
        for key in keys:
            if key == "depth_m":
                rec["depth_m"] = depth
            elif key == "z_m":
                rec["z_m"] = true.water_z + depth
        if k < known:
            rec.update(x_m=x, y_m=y, yaw_rad=yaw)
        if extra and k in extra:
            rec.update(extra[k])
        lines.append(json.dumps(rec))
    (folder / "manifest.jsonl").write_text("\n".join(lines) + "\n")


def places(n: int, seed: int, depths=(0.35, 0.75, 1.25)):
    rng = np.random.default_rng(seed)
    return [(rng.uniform(-1.5, 1.5), rng.uniform(-1.0, 1.0), depths[k % len(depths)],
             rng.uniform(-math.pi, math.pi), rng.normal(0, 0.03), rng.normal(0, 0.03))
            for k in range(n)]


def rotation_error_deg(Ra: np.ndarray, Rb: np.ndarray) -> float:
    return float(np.degrees(np.linalg.norm(cv2.Rodrigues(Ra.T @ Rb)[0])))


def perturbed_setup_file(path: Path, true: PoolSetup, tilt_deg=(1.2, -0.8), height_m=-0.12,
                         keep_extrinsics: bool = True) -> Path:
    d = setup_to_dict(true)
    if keep_extrinsics:
        roll, pitch, heading = cal.camera_angles(true.R_wc)
        from moonpool.components.sdk.frames import rot_from_euler

        R = rot_from_euler(roll + math.radians(tilt_deg[0]), pitch + math.radians(tilt_deg[1]),
                           heading)
        d["R_wc"] = R.tolist()
        d["t_wc"] = [true.t_wc[0], true.t_wc[1], true.t_wc[2] - height_m]
    else:
        del d["R_wc"], d["t_wc"]
    path.write_text(json.dumps(d))
    return path


def test_water_fit_recovers_height_and_tilt(tmp_path):
    """Depths only (the common case): the height and the tilt are recovered, heading and
    x, y are the gauge (kept from the setup); a line with a wrong depth is rejected."""
    folder = tmp_path / "tags"
    render_tag_folder(folder, TRUE, places(21, 1), extra={5: {"depth_m": 0.75 + 0.25}})
    setup = perturbed_setup_file(tmp_path / "setup.json", TRUE)
    res = cal.calibrate_water(setup, folder)
    print(cal.format_water_report(res))
    err_h = res.height_m - (TRUE.water_z - TRUE.t_wc[2])
    print(f"height error {err_h * 1000:+.2f} mm, rotation error "
          f"{rotation_error_deg(TRUE.R_wc, res.R_wc):.4f} deg")
    assert abs(err_h) < 0.003
    assert rotation_error_deg(TRUE.R_wc, res.R_wc) < 0.05
    assert res.water_z == TRUE.water_z and res.t_wc[2] == pytest.approx(-res.height_m)
    assert not res.free["heading"] and not res.free["x"] and not res.free["water_z"]
    assert abs(err_h) < 4 * res.sigma["height_m"] + 0.5e-3
    assert res.sigma["height_m"] < 0.003 and res.sigma["roll_deg"] < 0.05
    assert res.rms_px < 0.2
    rej = {r.image: r.reason for r in res.rejected}
    assert list(rej) == ["005.png"] and "residual RMS" in rej["005.png"]
    assert -0.8 < res.sensitivity["height_per_depth_bias"] < -0.65  # about -1/n_water
    assert len(res.gauge) == 3
    # The setup file keeps everything but R_wc, t_wc, water_z.
    out = tmp_path / "out.json"
    cal.write_water(res, setup, out)
    s = load_setup(out)
    assert s.tags == TRUE.tags and s.K == TRUE.K
    assert np.allclose(s.R_wc, res.R_wc) and np.allclose(s.camera_center, res.t_wc)


def test_water_known_positions_free_the_gauge(tmp_path):
    """No extrinsics at all in the setup (PnP start); three images with known x, y and
    yaw (one as a dataset's truth) fix the horizontal position and heading too."""
    folder = tmp_path / "tags"
    render_tag_folder(folder, TRUE, places(15, 2), known=3)
    lines = (folder / "manifest.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["truth"] = {k: rec.pop(k) for k in ("x_m", "y_m", "yaw_rad")}
    (folder / "manifest.jsonl").write_text("\n".join([json.dumps(rec)] + lines[1:]) + "\n")
    setup = perturbed_setup_file(tmp_path / "setup.json", TRUE, keep_extrinsics=False)
    res = cal.calibrate_water(setup, folder)
    print(cal.format_water_report(res))
    assert res.free["heading"] and res.free["x"] and res.free["y"]
    print(f"height error {(res.height_m - 2.5) * 1000:+.2f} mm, rotation error "
          f"{rotation_error_deg(TRUE.R_wc, res.R_wc):.4f} deg, position error "
          f"{(res.t_wc - TRUE.camera_center) * 1000} mm")
    assert abs(res.height_m - 2.5) < 0.003
    assert rotation_error_deg(TRUE.R_wc, res.R_wc) < 0.05
    assert np.all(np.abs(res.t_wc - TRUE.camera_center) < 0.004)
    assert any("PnP" in n for n in res.notes)


def test_water_surveyed_z_frees_water_z(tmp_path):
    """World z from a survey (z_m) instead of depths: water_z is estimated, with an
    honest (large) sigma — the paraxial degeneracy."""
    true = dataclasses.replace(TRUE, water_z=0.04, t_wc=(0.05, -0.03, -2.46))
    folder = tmp_path / "tags"
    render_tag_folder(folder, true, places(18, 3), keys=("z_m",))
    setup = perturbed_setup_file(tmp_path / "setup.json", dataclasses.replace(
        true, water_z=0.0, t_wc=(0.05, -0.03, -2.5)))
    res = cal.calibrate_water(setup, folder)
    print(cal.format_water_report(res))
    assert res.free["water_z"]
    s = res.sigma["water_z_m"]
    assert s > 0.002  # weakly observable
    assert abs(res.water_z - 0.04) < 4 * s + 0.002
    assert abs(res.t_wc[2] - (-2.46)) < 4 * math.hypot(s, res.sigma["height_m"]) + 0.002
    assert abs(res.sigma["corr_height_water_z"]) > 0.5


def test_tag_board_layout_and_tag_depth(tmp_path):
    """A board of four tags (layout.json in the folder) at known tag-plane depths; the
    setup's own (vehicle) tags are kept."""
    board = dataclasses.replace(TRUE, tag_size_m=0.12, tags=(
        TagMount(3, (0.2, 0.2, 0.0)), TagMount(4, (0.2, -0.2, 0.0)),
        TagMount(5, (-0.2, 0.2, 0.0), math.pi / 2), TagMount(6, (-0.2, -0.2, 0.0))))
    folder = tmp_path / "board"
    render_tag_folder(folder, board, [(x, y, d, yaw) for x, y, d, yaw, *_ in places(9, 4)])
    lines = [json.loads(t) for t in (folder / "manifest.jsonl").read_text().splitlines()]
    for rec in lines:
        rec["tag_depth_m"] = rec.pop("depth_m")
    (folder / "manifest.jsonl").write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    lay = setup_to_dict(board)
    (folder / "layout.json").write_text(json.dumps({k: lay[k] for k in
                                                    ("tag_family", "tag_size_m", "tags")}))
    setup = perturbed_setup_file(tmp_path / "setup.json", TRUE)
    res = cal.calibrate_water(setup, folder)
    print(f"height error {(res.height_m - 2.5) * 1000:+.2f} mm, rotation error "
          f"{rotation_error_deg(TRUE.R_wc, res.R_wc):.4f} deg")
    assert abs(res.height_m - 2.5) < 0.003
    assert rotation_error_deg(TRUE.R_wc, res.R_wc) < 0.05
    assert any("layout.json" in n for n in res.notes)
    cal.write_water(res, setup)
    assert load_setup(setup).tags == TRUE.tags


def test_water_bad_input(tmp_path):
    folder = tmp_path / "tags"
    render_tag_folder(folder, TRUE, places(3, 5))
    setup = perturbed_setup_file(tmp_path / "setup.json", TRUE)
    man = folder / "manifest.jsonl"
    good = man.read_text()
    man.write_text(good + '{"image": "000.png"}\n{"image": "001.png", "depth_m": "deep"}\n{no\n')
    with pytest.raises(ParameterError) as e:
        cal.calibrate_water(setup, folder)
    msg = str(e.value)
    assert "manifest.jsonl:4: give exactly one of depth_m" in msg
    assert "manifest.jsonl:5: 'depth_m' must be a finite number" in msg
    assert "manifest.jsonl:6: not valid JSON" in msg and "fix:" in msg
    man.write_text(good + '{"image": "nothere.png", "depth_m": 1.0}\n')
    with pytest.raises(ParameterError, match=r"manifest.jsonl:4: .*nothere\.png: no such file"):
        cal.calibrate_water(setup, folder)
    man.write_text(good)
    (folder / "001.png").write_bytes(b"garbage")
    with pytest.raises(ParameterError, match=r"001\.png: not a readable image"):
        cal.calibrate_water(setup, folder)
    cv2.imwrite(str(folder / "001.png"), np.zeros((100, 200), np.uint8))
    with pytest.raises(ParameterError, match=r"001\.png: the image is 200x100 px but "
                                             r"setup.json's image_size is 1280x720"):
        cal.calibrate_water(setup, folder)
    d = json.loads(setup.read_text())
    del d["tags"]
    setup.write_text(json.dumps(d))
    with pytest.raises(ParameterError, match=r"no tag layout .*fix: add the vehicle's"):
        cal.calibrate_water(setup, folder)
    blank = tmp_path / "blank"
    blank.mkdir()
    cv2.imwrite(str(blank / "a.png"), np.full((720, 1280), 110, np.uint8))
    (blank / "manifest.jsonl").write_text('{"image": "a.png", "depth_m": 1.0}\n')
    with pytest.raises(ParameterError, match=r"no tag of the layout found in any of the 1 "
                                             r"images:\n  a.png: no tag found"):
        cal.calibrate_water(perturbed_setup_file(tmp_path / "s2.json", TRUE), blank)
