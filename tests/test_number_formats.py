"""TF32 rounding (atensi.number_formats) against an independent by-hand model."""

from __future__ import annotations

import numpy as np
import pytest

from atensi import number_formats, reference
from atensi.kernels import limits


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


FLT_MAX = np.finfo(np.float32).max


def _qkv(T=8, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal((2, T, d)).astype(np.float32) for _ in range(3))


@pytest.mark.parametrize("where", ["Q", "K"])
def test_attention_tf32_refuses_flt_max_in_q_or_k_as_the_kernels_do(where):
    Q, K, V = _qkv()
    (Q if where == "Q" else K)[1, 3, 2] = FLT_MAX
    with pytest.raises(ValueError) as info:
        number_formats.attention_tf32(Q, K, V)
    with pytest.raises(ValueError) as kernel_info:  # the same check, before any launch
        limits.check_qkv(Q, K, V, tf32=True)
    assert str(info.value) == str(kernel_info.value) and f"Argumen '{where}'" in str(info.value)


def test_attention_tf32_with_flt_max_in_v_is_finite_and_right():
    Q, K, V = _qkv()
    V[0, 5, 1] = FLT_MAX
    V[1, :, :] *= np.float32(1e37)
    out = number_formats.attention_tf32(Q, K, V, precision="3xtf32")
    assert np.isfinite(out).all()
    ref = reference.attention(Q.astype(np.float64), K.astype(np.float64), V.astype(np.float64))
    # V is divided by a power of two near max|v| (as in the kernels), so the error is
    # relative to each head's largest value.
    size = np.abs(V.astype(np.float64)).max(axis=(-2, -1), keepdims=True)
    assert (np.abs(out - ref) <= 1e-5 * size).all()


def test_attention_tf32_refuses_nan_and_bad_shapes_by_name():
    Q, K, V = _qkv()
    K[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="Argumen 'K' berisi 1 nilai NaN"):
        number_formats.attention_tf32(Q, K, V)
    Q, K, V = _qkv()
    with pytest.raises(ValueError, match="'V' harus punya T yang sama dengan 'K'"):
        number_formats.attention_tf32(Q, K, V[:, :5])


@pytest.mark.parametrize("precision", number_formats.PRECISIONS)
def test_matmul_tf32_refuses_operands_that_round_to_inf_or_overflow(precision):
    a = np.ones((3, 4), np.float32)
    b = np.ones((4, 2), np.float32)
    a[1, 1] = FLT_MAX
    with pytest.raises(ValueError, match="Argumen 'a' berisi nilai sebesar .*menjadi inf"):
        number_formats.matmul_tf32(a, b, precision=precision)
    a[1, 1] = 1e30
    with pytest.raises(ValueError, match="hasil kali a·b .* melampaui batas float32"):
        number_formats.matmul_tf32(a, b * np.float32(1e30), precision=precision)
    with pytest.raises(ValueError, match="K yang sama"):
        number_formats.matmul_tf32(a, b.T.copy(), precision=precision)


def test_split_tf32_refuses_a_finite_value_whose_hi_part_would_be_inf():
    x = np.array([1.0, -FLT_MAX], np.float32)
    with pytest.raises(ValueError, match="Argumen 'x' berisi nilai sebesar .*menjadi inf"):
        number_formats.split_tf32(x)
    hi, lo = number_formats.split_tf32(np.array([1.0, np.inf, np.nan], np.float32))
    assert hi[0] == 1.0 and lo[0] == 0.0 and np.isinf(hi[1]) and np.isnan(hi[2])
