"""Cost of one call of the rotation helpers (``components/sdk/frames.py``): the scalar
paths that controllers and per-message code take, beside the vectorised paths for one
value and for a stack of n.

``python benchmarks/frames.py [--n 1000] [--repeat 5]``

Per function: µs per call of the scalar path (Python floats / a 4-tuple / one 3×3),
of the vectorised path with a single value (0-d arrays / a (1, 4) stack), and of the
vectorised path for n values (µs per call and ns per value). Best of ``--repeat``
passes (what preemption by other processes does not inflate).
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np

from moonpool.components.sdk import frames as F


def best_us(fn, number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="stack size of the vectorised case")
    ap.add_argument("--repeat", type=int, default=5, help="passes; the best is reported")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n = args.n
    r, p, y = (rng.uniform(-1, 1, n) for _ in range(3))
    q = rng.normal(size=(n, 4))
    R = F.rot_from_quat(q)
    a = rng.uniform(-10, 10, n)
    r0, p0, y0 = np.array(r[0]), np.array(p[0]), np.array(y[0])
    cases = [
        ("rot_from_euler", lambda: F.rot_from_euler(0.1, 0.2, 0.3),
         lambda: F.rot_from_euler(r0, p0, y0), lambda: F.rot_from_euler(r, p, y)),
        ("quat_from_euler", lambda: F.quat_from_euler(0.1, 0.2, 0.3),
         lambda: F.quat_from_euler(r0, p0, y0), lambda: F.quat_from_euler(r, p, y)),
        ("rot_from_quat", lambda: F.rot_from_quat((0.9, 0.1, 0.2, 0.3)),
         lambda: F.rot_from_quat(q[:1]), lambda: F.rot_from_quat(q)),
        ("euler_from_rot", lambda: F.euler_from_rot(R[0]),
         lambda: F.euler_from_rot(R[:1]), lambda: F.euler_from_rot(R)),
        ("wrap_angle", lambda: F.wrap_angle(4.0),
         lambda: F.wrap_angle(np.array(4.0)), lambda: F.wrap_angle(a)),
    ]
    print(f"| function | scalar path µs | vectorised, one µs | vectorised, n = {n}: µs (ns/value) |")
    print("| --- | --- | --- | --- |")
    for name, scalar, one, many in cases:
        s = best_us(scalar, 2000, args.repeat)
        o = best_us(one, 2000, args.repeat)
        m = best_us(many, 50, args.repeat)
        print(f"| {name} | {s:.2f} | {o:.2f} | {m:.1f} ({m * 1e3 / n:.1f}) |")


if __name__ == "__main__":
    main()
