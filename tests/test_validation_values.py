"""Never NaN, and reference validates like kernels.

- Scores of finite inputs that would overflow float32 (Q = K = 1e19) are
  refused on every path, with one Indonesian message naming 'Q' and 'K'.
- A row whose scores are all -inf gives zeros on every path (reference,
  blocked, kernels chain v1/v2, fused); to build such a row from finite input
  the overflow check is switched off.
- Bad input to atensi.reference gets the same refusals as atensi.kernels.
"""

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import kernels, memory, reference, validation

RNG = np.random.default_rng(311)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


BIG = np.full((2, 6, 4), 1e19, np.float32)
V = np.ones((2, 6, 4), np.float32)
dO = np.ones((2, 6, 4), np.float32)

PATHS = {
    "reference.scores": lambda Q, K, V: reference.scores(Q, K),
    "reference.attention": lambda Q, K, V: reference.attention(Q, K, V),
    "reference.attention_blocked": lambda Q, K, V: reference.attention_blocked(Q, K, V, block=2),
    "reference.attention_backward": lambda Q, K, V: reference.attention_backward(Q, K, V, dO),
    "reference.attention_backward_blocked":
        lambda Q, K, V: reference.attention_backward_blocked(Q, K, V, dO, block=2),
    "kernels.scores v1": lambda Q, K, V: kernels.scores(Q, K, version="v1", backend="cpu"),
    "kernels.scores v2": lambda Q, K, V: kernels.scores(Q, K, version="v2", backend="cpu"),
    "kernels.attention v1": lambda Q, K, V: kernels.attention(Q, K, V, impl="chain-v1",
                                                              backend="cpu"),
    "kernels.attention v2": lambda Q, K, V: kernels.attention(Q, K, V, impl="chain-v2",
                                                              backend="cpu"),
    "kernels.attention fused": lambda Q, K, V: kernels.attention(Q, K, V, impl="fused-v1",
                                                                 backend="cpu"),
}
if hasattr(kernels, "attention_backward"):
    PATHS["kernels.attention_backward"] = (
        lambda Q, K, V: kernels.attention_backward(Q, K, V, dO, backend="cpu"))


@pytest.mark.parametrize("path", sorted(PATHS))
def test_scores_that_overflow_float32_are_refused(path):
    with pytest.raises(ValueError) as info:
        PATHS[path](BIG, BIG, V)
    message = str(info.value)
    assert "'Q'" in message and "'K'" in message and "float32" in message
    assert "Perkecil" in message


@pytest.mark.parametrize("path", sorted(PATHS))
def test_large_scores_that_fit_are_accepted_without_nan(path):
    Q = np.full((2, 6, 4), 4e18, np.float32)  # ‖q‖·‖k‖ = 6,4·10³⁷: fits float32
    out = PATHS[path](Q, -Q, V)
    for x in out if isinstance(out, tuple) else (out,):
        assert not np.isnan(np.asarray(x)).any()


ATTENTION = {k: v for k, v in PATHS.items()
             if "attention" in k and "backward" not in k}


@pytest.mark.parametrize("path", sorted(ATTENTION))
def test_rows_that_become_all_minus_inf_give_zeros(path, monkeypatch):
    """q·k = -inf for every key (finite inputs, overflow): zeros, never NaN."""
    monkeypatch.setattr(validation, "check_score_overflow", lambda *a, **k: None)
    Q = np.full((1, 5, 4), 1e19, np.float32)
    K = -Q
    V = np.arange(20, dtype=np.float32).reshape(1, 5, 4)
    out = ATTENTION[path](Q, K, V)
    assert not np.isnan(out).any(), path
    np.testing.assert_array_equal(out, 0)


def test_blocked_mixes_an_all_minus_inf_tile_with_later_keys(monkeypatch):
    """First key tile all -inf, later tiles finite (no causal): the -inf tile adds nothing."""
    monkeypatch.setattr(validation, "check_score_overflow", lambda *a, **k: None)
    Q = np.full((1, 4, 4), 1e19, np.float32)
    K = np.concatenate([np.full((1, 2, 4), -1e19, np.float32), rand(1, 2, 4) * 1e-19], axis=1)
    V = rand(1, 4, 4)
    got = reference.attention_blocked(Q, K, V, causal=False, block=2)
    want = reference.attention(Q, K, V, causal=False)
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_all_masked_softmax_rows_give_zeros_everywhere(version):
    S = np.full((3, 5), -np.inf, np.float32)
    S[1, 2] = 0.5
    for A in (reference.softmax(S), kernels.softmax(S, version=version, backend="cpu")):
        np.testing.assert_array_equal(A[[0, 2]], 0)
        np.testing.assert_array_equal(A[1], [0, 0, 1, 0, 0])


# ---- reference refuses what kernels refuse -------------------------------------------------

Q, K = rand(5, 4), rand(5, 4)
S = rand(5, 5)
CASES = {
    "integer Q and K (scale became int 0)": (
        lambda: reference.scores(np.arange(20).reshape(5, 4), np.arange(20).reshape(5, 4)),
        TypeError, ["'Q'", "int64", "float", "astype"]),
    "uint8 S wraps in softmax": (
        lambda: reference.softmax(np.array([[0, 200, 255]], np.uint8)),
        TypeError, ["'S'", "uint8"]),
    "bool S in causal_mask": (
        lambda: reference.causal_mask(np.ones((3, 3), bool)), TypeError, ["'S'", "bool"]),
    "extra V rows in attention_blocked": (
        lambda: reference.attention_blocked(Q, K, rand(7, 4)), ValueError, ["'V'", "(7, 4)"]),
    "d_k = 0 in attention_blocked": (
        lambda: reference.attention_blocked(rand(5, 0), rand(5, 0), rand(5, 0)),
        ValueError, ["'Q'", "kosong"]),
    "scale=0.5 ignored": (
        lambda: reference.scores(Q, K, scale=0.5), TypeError, ["'scale'", "0.5", "True"]),
    "kernels scale=0.5": (
        lambda: kernels.scores(Q, K, scale=0.5, backend="cpu"), TypeError, ["'scale'"]),
    "impl='fused' ran a fused kernel": (
        lambda: kernels.attention(Q, K, K, impl="fused", backend="cpu"), ValueError,
        ["'impl'", "'chain-v2'", "'fused-v1'", "'fused-v3'"]),
    "impl=True ran a fused kernel": (
        lambda: kernels.attention(Q, K, K, impl=True, backend="cpu"), ValueError, ["'impl'"]),
    "causal=None": (
        lambda: reference.attention(Q, K, K, causal=None), TypeError, ["'causal'"]),
    "block 2.5": (lambda: reference.attention_blocked(Q, K, K, block=2.5), TypeError,
                  ["'block'", "2.5"]),
    "block True": (lambda: reference.attention_blocked(Q, K, K, block=True), TypeError,
                   ["'block'"]),
    "block too big": (lambda: reference.attention_blocked(Q, K, K, block=10**9), ValueError,
                      ["'block'", "65.536"]),
    "version list": (lambda: kernels.scores(Q, K, version=["v1"], backend="cpu"), ValueError,
                     ["'version'", "['v1']", "'v1'"]),
    "masked S in reference softmax": (
        lambda: reference.softmax(np.ma.masked_invalid(S)), TypeError,
        ["'S'", "masked array", "S.filled(-np.inf)"]),
    "masked S in kernels softmax": (
        lambda: kernels.softmax(np.ma.masked_invalid(S), backend="cpu"), TypeError,
        ["'S'", "S.filled(-np.inf)"]),
    "masked Q in reference": (
        lambda: reference.attention(np.ma.masked_invalid(Q), K, K), TypeError,
        ["'Q'", "masked array"]),
    "NaN in reference Q": (
        lambda: reference.attention(np.where(Q > 1, np.nan, Q), K, K), ValueError,
        ["'Q'", "NaN", "np.isfinite(Q)"]),
    "+inf in reference S": (
        lambda: reference.softmax(np.array([[0.0, np.inf]])), ValueError, ["'S'", "+inf"]),
    "axis out of range": (lambda: reference.softmax(S, axis=3), ValueError, ["'axis'", "3"]),
    "string instead of array": (lambda: reference.scores("Q", K), TypeError, ["'Q'", "str"]),
    "ragged list": (lambda: reference.scores([[1.0, 2.0], [3.0]], K), TypeError,
                    ["'Q'", "list"]),
    "d_k mismatch in reference": (
        lambda: reference.scores(rand(5, 4), rand(5, 3)), ValueError, ["d_k", "'Q'", "'K'"]),
    "leading axes that do not broadcast": (
        lambda: reference.attention(rand(2, 5, 4), rand(3, 5, 4), rand(3, 5, 4)), ValueError,
        ["Sumbu depan", "'K'", "(3, 5, 4)"]),
    "weighted_sum A and V disagree": (
        lambda: reference.weighted_sum(rand(5, 5), rand(6, 4)), ValueError, ["'A'", "'V'"]),
    "dO of the wrong shape": (
        lambda: reference.attention_backward(Q, K, K, rand(5, 3)), ValueError, ["'dO'", "(5, 3)"]),
    "numerical_gradient without a function": (
        lambda: reference.numerical_gradient(None, Q), TypeError, ["'f'", "callable"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_reference_refuses_bad_input_in_indonesian(case, monkeypatch):
    kc.forbid_launches(monkeypatch, "diluncurkan")
    call, error, fragments = CASES[case]
    with pytest.raises(error) as info:
        call()
    for fragment in fragments:
        assert fragment in str(info.value), (case, fragment, str(info.value))


def test_lists_of_numbers_and_float16_are_accepted():
    want = reference.attention(Q.astype(np.float64), K.astype(np.float64), K.astype(np.float64))
    got = reference.attention(Q.tolist(), K.tolist(), K.tolist())
    np.testing.assert_allclose(got, want, rtol=1e-12)
    half = reference.attention(*(x.astype(np.float16) for x in (Q, K, K)))
    np.testing.assert_allclose(half, want, atol=2e-2)
    # T_q != T_k stays allowed in reference (one query against a cache of keys).
    assert reference.scores(Q[:2], K).shape == (2, 5)


# ---- sizes before allocating ------------------------------------------------------------


def test_reference_refuses_outputs_that_cannot_fit(monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda kind="numpy": 2.0**20)
    Q = np.zeros((1024, 8), np.float32)
    with pytest.raises(MemoryError, match=r"MiB.*attention_blocked"):
        reference.attention(Q, Q, Q)
    with pytest.raises(MemoryError, match="attention_blocked"):
        reference.scores(Q, Q)
    assert reference.attention_blocked(Q, Q, Q, block=64).shape == Q.shape  # O(T·d_k): fits


def test_kernels_refuse_outputs_that_cannot_fit(monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda kind="numpy": 2.0**20)
    kc.forbid_launches(monkeypatch, "diluncurkan")
    Q = np.zeros((1024, 8), np.float32)
    with pytest.raises(MemoryError, match=r"impl='fused-v1'"):
        kernels.attention(Q, Q, Q, backend="cpu")
    with pytest.raises(MemoryError, match=r"impl='fused-v1'"):
        kernels.scores(Q, Q, backend="cpu")


def test_softmax_row_length_is_checked_before_the_values(tmp_path, monkeypatch):
    """A row of 2³¹ floats: refused at once, not after reading 8 GiB for NaN."""
    n = 2**31
    path = tmp_path / "sparse.bin"
    with open(path, "wb") as f:
        f.truncate(4 * n)  # sparse: no disk, no memory
    S = np.memmap(path, dtype=np.float32, mode="r", shape=(1, n))

    def trap(*a, **k):
        raise AssertionError("nilai diperiksa sebelum panjang baris")

    monkeypatch.setattr(validation, "check_finite", trap)  # the module that owns it
    with pytest.raises(AssertionError, match="nilai diperiksa"):  # the trap is in the path
        kernels.softmax(np.zeros((2, 3), np.float32), backend="cpu")
    with pytest.raises(ValueError, match=r"Panjang baris softmax n = 2147483648 melebihi"):
        kernels.softmax(S, backend="cpu")
    del S


ONLINE_SOFTMAX_PATHS = {
    "reference.attention_blocked": lambda Q, K, V: reference.attention_blocked(Q, K, V, block=8),
    "fused-v1": lambda Q, K, V: kernels.attention(Q, K, V, impl="fused-v1", backend="cpu"),
    "fused-v2": lambda Q, K, V: kernels.attention(Q, K, V, impl="fused-v2",
                                                  splits=1, backend="cpu"),
    "fused-v2-split": lambda Q, K, V: kernels.attention(Q, K, V, impl="fused-v2",
                                                        splits=3, backend="cpu"),
    "fused-v3": lambda Q, K, V: kernels.attention(Q, K, V, impl="fused-v3",
                                                  backend="cpu"),
}


@pytest.mark.parametrize("v_max", [2e37, 3.4e38])
@pytest.mark.parametrize("path", ONLINE_SOFTMAX_PATHS)
def test_online_softmax_with_v_near_the_float32_limit_stays_exact(path, v_max):
    """The exact output is a mean of V rows: finite, although T·max|V| overflows."""
    Q, K, V = rand(2, 33, 5), rand(2, 33, 5), rand(2, 33, 5)
    V = (V / np.abs(V).max() * np.float32(v_max)).astype(np.float32)
    assert np.isfinite(V).all() and float(np.abs(V).max()) * 33 > float(np.finfo(np.float32).max)
    out = ONLINE_SOFTMAX_PATHS[path](Q, K, V)
    want = reference.attention(*(x.astype(np.float64) for x in (Q, K, V)))
    assert np.isfinite(out).all()
    kc.assert_matches(out, want)


def test_v_scale_is_a_power_of_two_within_the_dtype():
    V = np.array([[3.4e38, -1.0]], np.float32)
    scale = validation.online_softmax_v_scale(V, 2)
    assert scale == 2.0 ** 127 and scale <= float(np.abs(V).max())
    assert validation.online_softmax_v_scale(np.ones((2, 2), np.float32), 2) is None


BACKWARD_PATHS = {
    "reference.attention_backward": lambda Q, K, V, dO: reference.attention_backward(Q, K, V, dO),
    "reference.attention_backward_blocked": lambda Q, K, V, dO:
        reference.attention_backward_blocked(Q, K, V, dO, block=4),
    "kernels.attention_backward": lambda Q, K, V, dO:
        kernels.attention_backward(Q, K, V, dO, backend="cpu"),
}


@pytest.mark.parametrize("path", BACKWARD_PATHS)
def test_backward_refuses_dO_and_V_whose_products_overflow(path, monkeypatch):
    """dO·Vᵀ = 4·10³⁸ overflows float32 (NaN gradients): refused, naming dO and V."""
    kc.forbid_launches(monkeypatch)
    Q, K = rand(2, 6, 4), rand(2, 6, 4)
    big = np.full((2, 6, 4), 1e19, np.float32)
    with pytest.raises(ValueError) as info:
        BACKWARD_PATHS[path](Q, K, big, big)
    message = str(info.value)
    assert "'dO'" in message and "'V'" in message and "float32" in message
    assert "Perkecil" in message


@pytest.mark.parametrize("path", BACKWARD_PATHS)
def test_backward_accepts_large_dO_and_V_that_fit(path):
    Q, K = rand(2, 6, 4), rand(2, 6, 4)
    V, dO = rand(2, 6, 4) * np.float32(1e18), rand(2, 6, 4) * np.float32(1e18)
    grads = BACKWARD_PATHS[path](Q, K, V, dO)
    wants = reference.attention_backward(*(x.astype(np.float64) for x in (Q, K, V, dO)))
    for got, want in zip(grads, wants):
        assert np.isfinite(got).all()
        kc.assert_matches(got, want, tol=1e-4)


@pytest.mark.parametrize("path", ["reference.attention_backward",
                                  "reference.attention_backward_blocked"])
def test_float16_backward_computes_dA_without_overflow(path):
    """|dO|, |V| ≈ 100 in float16: dO·Vᵀ ≈ 8·10⁴ > 65504, yet the gradients are finite."""
    Q, K = rand(1, 7, 8).astype(np.float16), rand(1, 7, 8).astype(np.float16)
    V = (100 + 10 * rand(1, 7, 8)).astype(np.float16)
    dO = (100 + 10 * rand(1, 7, 8)).astype(np.float16)
    exact_dA = np.einsum("btd,bsd->bts", dO.astype(np.float64), V.astype(np.float64))
    assert exact_dA.max() > float(np.finfo(np.float16).max)
    grads = BACKWARD_PATHS[path](Q, K, V, dO)
    wants = reference.attention_backward(*(x.astype(np.float64) for x in (Q, K, V, dO)))
    for got, want in zip(grads, wants):
        assert np.isfinite(got).all()
        err = np.abs(got.astype(np.float64) - want).max() / max(np.abs(want).max(), 1.0)
        assert err <= 2e-2, err


def test_float16_backward_counts_its_float32_arrays(monkeypatch):
    """Four (4, 256, 256) arrays: 2 MiB in float16, but the backward computes in float32 (4 MiB)."""
    monkeypatch.setattr(memory, "available_memory", lambda kind="numpy": 3.0 * 2**20)
    Q = np.zeros((4, 256, 8), np.float16)
    with pytest.raises(MemoryError, match="attention_backward_blocked"):
        reference.attention_backward(Q, Q, Q, Q)
