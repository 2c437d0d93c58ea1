"""Exact references for the Python tests: rationals rounded correctly to float32 / float64."""
import math
from fractions import Fraction

import numpy as np

F32_OVERFLOW = Fraction(2**128 - 2**103)  # |q| at or above this rounds to inf in float32


def fraction_sum(values) -> Fraction:
    return sum((Fraction(float(v)) for v in values), Fraction(0))


def fraction_dot(x, y) -> Fraction:
    return sum((Fraction(float(a)) * Fraction(float(b)) for a, b in zip(x, y)), Fraction(0))


def round_f64(q: Fraction) -> float:
    return float(q)  # Fraction.__float__ is correctly rounded (to nearest, ties to even)


def round_f32(q: Fraction) -> float:
    """q correctly rounded to float32 (to nearest, ties to even), as a Python float. Rounding
    float(q) to float32 could round twice, so the nearest of three neighbours is chosen
    exactly."""
    if abs(q) >= F32_OVERFLOW:
        return math.copysign(math.inf, q)
    with np.errstate(over="ignore"):
        f = np.float32(float(q))
        candidates = (np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf)))
    best = None
    for c in candidates:
        if not np.isfinite(c):
            continue
        d = abs(Fraction(float(c)) - q)
        even = int(np.array(c, dtype=np.float32).view(np.uint32)) % 2 == 0
        key = (d, not even)
        if best is None or key < best[0]:
            best = (key, float(c))
    return best[1]


def round_sqrt_f64(q: Fraction) -> float:
    """The square root of q >= 0 correctly rounded to float64 (to nearest, ties to even): the
    neighbours of math.sqrt(float(q)) are checked against the exact midpoints, squared."""
    if q == 0:
        return 0.0
    c = math.sqrt(float(q))
    while True:
        up, down = math.nextafter(c, math.inf), math.nextafter(c, 0.0)
        hi = (Fraction(c) + Fraction(up)) / 2
        lo = (Fraction(down) + Fraction(c)) / 2
        if q > hi * hi or (q == hi * hi and np.float64(c).view(np.int64) % 2 == 1):
            c = up
        elif q < lo * lo or (q == lo * lo and np.float64(c).view(np.int64) % 2 == 1):
            c = down
        else:
            return c


def fraction_var(values, ddof: int = 0) -> Fraction:
    """sum (x - mean)^2 / (n - ddof), exactly (n - ddof > 0)."""
    # integers (NumPy integer and bool scalars included) exactly, not through float
    xs = [Fraction(int(v)) if getattr(getattr(v, "dtype", None), "kind", "f") in "iub" or isinstance(v, int)
          else Fraction(float(v)) for v in values]
    n = len(xs)
    mean = sum(xs, Fraction(0)) / n
    return sum(((v - mean) ** 2 for v in xs), Fraction(0)) / (n - ddof)
