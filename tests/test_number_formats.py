"""TF32 rounding (atensi.number_formats) against an independent by-hand model."""

from __future__ import annotations

import numpy as np
import pytest

from atensi import number_formats


def tf32_by_hand(value: float) -> float:
    """Nearest number with a 10-bit mantissa, ties away from zero, via frexp."""
    if not np.isfinite(value) or value == 0.0:
        return value
    mantissa, exponent = np.frexp(abs(value))  # value = mantissa · 2**exponent, 0.5 <= m < 1
    exponent = max(exponent, -125)  # float32 subnormals share the smallest exponent
    step = 2.0 ** (exponent - 11)  # 11 significant bits: the implicit one and 10 stored
    scaled = abs(value) / step
    rounded = np.floor(scaled + 0.5) * step  # ties away from zero on the magnitude
    if rounded >= 2.0**128:
        rounded = np.inf
    return float(np.copysign(rounded, value))


def test_to_tf32_matches_a_by_hand_rounding_on_random_floats():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(20_000) * 10.0 ** rng.integers(-30, 30, 20_000)).astype(np.float32)
    got = number_formats.to_tf32(x)
    assert got.dtype == np.float32 and got.shape == x.shape
    want = np.array([tf32_by_hand(float(v)) for v in x])
    assert np.array_equal(got.astype(np.float64), want)
    assert not (got.view(np.uint32) & 0x1FFF).any()  # the 13 dropped bits are zero
    assert np.abs(got.astype(np.float64) / x - 1).max() <= 2.0**-11  # half an ulp of TF32


def test_to_tf32_ties_go_away_from_zero():
    # 1 + 2⁻¹¹ lies exactly between 1 and 1 + 2⁻¹⁰: round-to-even would give 1.
    x = np.array([1 + 2**-11, -(1 + 2**-11), 1 + 2**-12], dtype=np.float32)
    assert number_formats.to_tf32(x).tolist() == [1 + 2**-10, -(1 + 2**-10), 1.0]


def test_to_tf32_keeps_inf_nan_and_overflows_to_inf():
    big = np.finfo(np.float32).max
    x = np.array([np.inf, -np.inf, np.nan, big, -big, 0.0, -0.0], dtype=np.float32)
    got = number_formats.to_tf32(x)
    assert got[0] == np.inf and got[1] == -np.inf and np.isnan(got[2])
    assert got[3] == np.inf and got[4] == -np.inf  # past the largest TF32 number
    assert got[5] == 0.0 and np.signbit(got[6])
    assert np.isnan(x[2]) and x[3] == big  # the input is not changed


def test_to_tf32_is_idempotent_and_keeps_shape():
    rng = np.random.default_rng(6)
    x = rng.standard_normal((3, 4, 5), dtype=np.float32)
    once = number_formats.to_tf32(x)
    assert once.shape == (3, 4, 5)
    assert np.array_equal(number_formats.to_tf32(once), once)
    assert number_formats.to_tf32(np.float32(1.1)) == np.float32(1.099609375)


def test_to_tf32_refuses_other_dtypes_in_indonesian():
    with pytest.raises(TypeError, match="'x' harus float32.*astype"):
        number_formats.to_tf32(np.ones(3))
    with pytest.raises(TypeError, match="'x' harus float32"):
        number_formats.to_tf32("1.0")
