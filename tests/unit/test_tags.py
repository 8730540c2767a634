"""Tag bitmaps (components/localization/tags.py): the code table read from the bundled
AprilTag library, every tag36h11 id decoded to itself in the right orientation by
pupil-apriltags, and OpenCV's aruco generator being the same table rotated by 180
degrees (why we do not use it)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from moonpool.components.localization.detect import DetectorOptions, TagDetector
from moonpool.components.localization.tags import tag_corners_body, tag_family

FAM = tag_family("tag36h11")


def test_code_table_read_from_the_library():
    assert FAM.ncodes == 587
    assert FAM.nbits == 36 and FAM.min_hamming == 11
    assert FAM.width_at_border == 8 and FAM.total_width == 10 and not FAM.reversed_border
    assert int(FAM.codes[0]) == 0x0000000D7E00984B  # first code of tag36h11.c
    assert int(FAM.codes[586]) == 0x0000000E8B772FE0
    assert len({int(c) for c in FAM.codes}) == 587


def test_bitmap_data_bits_follow_the_code():
    """Bit i of the code (most significant first) is the cell (bit_y[i], bit_x[i]) inside
    the white ring, white for 1."""
    for tag_id in (0, 1, 17, 300, 586):
        bm = FAM.bitmap(tag_id)
        code = int(FAM.codes[tag_id])
        for i in range(36):
            bit = (code >> (35 - i)) & 1
            assert bm[FAM.bit_y[i] + 1, FAM.bit_x[i] + 1] == 255 * bit


def test_bitmap_layout():
    bm = FAM.bitmap(0)
    assert bm.shape == (10, 10)
    assert np.all(bm[0, :] == 255) and np.all(bm[:, 0] == 255)  # white ring
    assert np.all(bm[1, 1:9] == 0) and np.all(bm[8, 1:9] == 0)  # black square
    with pytest.raises(ValueError):
        FAM.bitmap(587)


def test_opencv_aruco_36h11_is_rotated_by_180_degrees():
    d = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_APRILTAG_36h11)
    for i in range(0, 587, 7):
        aruco = cv2.aruco.generateImageMarker(d, i, 8, borderBits=1)
        ours = FAM.bitmap(i)[1:-1, 1:-1]
        assert np.array_equal(aruco, np.rot90(ours, 2))
        assert not np.array_equal(aruco, ours)


def test_every_id_decodes_to_itself_upright_with_corners_in_the_documented_order():
    """All 587 ids on mosaics, each drawn at a known place and turned by a known
    quarter turn: pupil-apriltags must return the id, and its first corner must be the
    bottom-left corner of the upright tag wherever the turn put it."""
    cell, gap, per_row = 4, 12, 22
    size = 10 * cell
    step = size + gap
    # Through our wrapper: it reuses one process-wide C detector (destroying one after a
    # full-resolution detection corrupts the heap) and subtracts pupil's 0.5 px.
    det = TagDetector(DetectorOptions(quad_decimate=1.0, max_hamming=0))
    ids = list(range(587))
    checked = 0
    for start in range(0, 587, per_row * per_row):
        chunk = ids[start:start + per_row * per_row]
        rows = (len(chunk) + per_row - 1) // per_row
        img = np.full((rows * step + gap, per_row * step + gap), 128, np.uint8)
        expected = {}
        for k, tid in enumerate(chunk):
            turns = tid % 4  # np.rot90: counter-clockwise quarter turns as displayed
            big = np.kron(FAM.bitmap(tid), np.ones((cell, cell), np.uint8))
            r0, c0 = gap + (k // per_row) * step, gap + (k % per_row) * step
            img[r0:r0 + size, c0:c0 + size] = np.rot90(big, turns)
            # Upright corners of the black square (OpenCV pixel convention: the edge between
            # pixels i-1 and i is at i - 0.5): BL, BR, TR, TL around the tag's centre.
            h = 4 * cell
            ctr = np.array([c0 + size / 2 - 0.5, r0 + size / 2 - 0.5])
            up = np.array([[-h, h], [h, h], [h, -h], [-h, -h]], float)  # (x right, y down)
            rot = np.array([[0.0, 1.0], [-1.0, 0.0]])  # a CCW quarter turn in image coords
            pts = up.copy()
            for _ in range(turns):
                pts = pts @ rot.T
            expected[tid] = ctr + pts
        found = {d.id: d for d in det.detect(img).detections}
        assert sorted(found) == sorted(chunk)
        for tid, d in found.items():
            corners = d.corners  # OpenCV convention (pupil's pixel i spans [i, i+1])
            err = np.abs(corners - expected[tid]).max()
            assert err < 0.6, (tid, corners, expected[tid])
            assert d.hamming == 0
            checked += 1
    assert checked == 587


def test_tag_corners_in_the_body_frame():
    # yaw 0: top edge towards +x, right edge towards +y; order BL, BR, TR, TL
    c = tag_corners_body((0.1, 0.0, -0.14), 0.0, 0.2)
    np.testing.assert_allclose(c, [[0.0, -0.1, -0.14], [0.0, 0.1, -0.14], [0.2, 0.1, -0.14],
                                   [0.2, -0.1, -0.14]], atol=1e-15)
    # yaw +90 deg (FRD: from +x towards +y): top edge towards +y
    c = tag_corners_body((0.0, 0.0, 0.0), np.pi / 2, 2.0)
    np.testing.assert_allclose(c[2], [-1.0, 1.0, 0.0], atol=1e-12)  # top-right
    np.testing.assert_allclose(c[3], [1.0, 1.0, 0.0], atol=1e-12)  # top-left
