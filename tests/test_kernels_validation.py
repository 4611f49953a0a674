"""atensi.kernels refuses bad input before anything is launched.

Every error is the right type (TypeError for dtype/type, ValueError for
shape, layout, size and values, RuntimeError for a missing GPU) and its
Indonesian message names the argument, what was received and the fix.
The kernels are never reached: ``get_function`` is replaced by a trap.
"""

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import kernels, validation

RNG = np.random.default_rng(20240611)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.fixture(autouse=True)
def no_launch(monkeypatch):
    """Validation must fail before any kernel is compiled or launched."""
    kc.forbid_launches(monkeypatch)


Q, K, V = rand(2, 5, 4), rand(2, 5, 4), rand(2, 5, 4)
S = rand(2, 5, 5)


# (call, exception type, fragments that must all be in the message)
CASES = {
    "float64 Q": (
        lambda: kernels.scores(Q.astype(np.float64), K, backend="cpu"),
        TypeError,
        ["'Q'", "float32", "float64", "Q.astype(np.float32)"],
    ),
    "float64 V": (
        lambda: kernels.attention(Q, K, V.astype(np.float64), backend="cpu"),
        TypeError,
        ["'V'", "float64", "V.astype(np.float32)"],
    ),
    "float64 S in softmax": (
        lambda: kernels.softmax(S.astype(np.float64), backend="cpu"),
        TypeError,
        ["'S'", "float64"],
    ),
    "int32 A": (
        lambda: kernels.weighted_sum(np.ones((5, 5), np.int32), V[0], backend="cpu"),
        TypeError,
        ["'A'", "int32", "float32"],
    ),
    "list instead of array": (
        lambda: kernels.scores(Q.tolist(), K, backend="cpu"),
        TypeError,
        ["'Q'", "list", "np.asarray"],
    ),
    "transposed K": (
        lambda: kernels.scores(Q[0], np.ascontiguousarray(K[0].T).T, backend="cpu"),
        ValueError,
        ["'K'", "C-contiguous", "strides", "np.ascontiguousarray(K)"],
    ),
    "sliced V": (
        lambda: kernels.weighted_sum(S, rand(2, 5, 8)[..., ::2], backend="cpu"),
        ValueError,
        ["'V'", "C-contiguous"],
    ),
    "transposed S in softmax": (
        lambda: kernels.softmax(S.swapaxes(-1, -2), backend="cpu"),
        ValueError,
        ["'S'", "C-contiguous"],
    ),
    "rank 1 Q": (
        lambda: kernels.scores(rand(4), rand(4), backend="cpu"),
        ValueError,
        ["'Q'", "minimal 2", "(4,)", "Q[None, :]"],
    ),
    "rank 1 S in causal_mask": (
        lambda: kernels.causal_mask(rand(5), backend="cpu"),
        ValueError,
        ["'S'", "minimal 2", "(..., T, T)"],
    ),
    "d_k mismatch": (
        lambda: kernels.scores(rand(5, 4), rand(5, 3), backend="cpu"),
        ValueError,
        ["d_k", "'Q'", "'K'", "(5, 4)", "(5, 3)"],
    ),
    "T mismatch Q vs K": (
        lambda: kernels.scores(rand(5, 4), rand(6, 4), backend="cpu"),
        ValueError,
        ["T", "'Q'", "'K'", "(5, 4)", "(6, 4)"],
    ),
    "T mismatch K vs V": (
        lambda: kernels.attention(rand(5, 4), rand(5, 4), rand(6, 4), backend="cpu"),
        ValueError,
        ["'V'", "'K'", "(6, 4)"],
    ),
    "leading axes mismatch": (
        lambda: kernels.attention(rand(2, 5, 4), rand(3, 5, 4), rand(2, 5, 4), backend="cpu"),
        ValueError,
        ["Sumbu depan", "'K'", "(3, 5, 4)", "broadcasting"],
    ),
    "leading axes mismatch in weighted_sum": (
        lambda: kernels.weighted_sum(rand(2, 5, 5), rand(3, 5, 4), backend="cpu"),
        ValueError,
        ["'V'", "'A'", "(2, 5, 5)", "(3, 5, 4)"],
    ),
    "non-square S": (
        lambda: kernels.causal_mask(rand(5, 6), backend="cpu"),
        ValueError,
        ["'S'", "persegi", "(5, 6)"],
    ),
    "empty T": (
        lambda: kernels.scores(rand(0, 4), rand(0, 4), backend="cpu"),
        ValueError,
        ["'Q'", "kosong", "(0, 4)"],
    ),
    "empty d_k": (
        lambda: kernels.attention(rand(3, 0), rand(3, 0), rand(3, 0), backend="cpu"),
        ValueError,
        ["'Q'", "kosong", "(3, 0)"],
    ),
    "empty head axis": (
        lambda: kernels.softmax(rand(0, 3, 3), backend="cpu"),
        ValueError,
        ["'S'", "kosong"],
    ),
    "T beyond the grid": (
        lambda: kernels.scores(rand(16 * 65535 + 1, 1), rand(16 * 65535 + 1, 1), backend="cpu"),
        ValueError,
        ["T = 1048561", "1048560", "grid.y"],
    ),
    "d_k beyond the fused kernel": (
        lambda: kernels.attention(rand(3, 129), rand(3, 129), rand(3, 129), impl="fused-v1", backend="cpu"),
        ValueError,
        ["d_k = 129", "attention_fused", f"{kernels.launch.fused_max_d_k('v1')}", "impl='chain-v2'"],
    ),
    "NaN in Q": (
        lambda: kernels.scores(np.where(np.arange(4) == 2, np.nan, Q).astype(np.float32), K, backend="cpu"),
        ValueError,
        ["'Q'", "NaN", "(0, 0, 2)", "np.isfinite(Q)"],
    ),
    "inf in V": (
        lambda: kernels.weighted_sum(S, np.full_like(V, np.inf), backend="cpu"),
        ValueError,
        ["'V'", "40 nilai", "inf"],
    ),
    "NaN in A": (
        lambda: kernels.weighted_sum(np.full_like(S, np.nan), V, backend="cpu"),
        ValueError,
        ["'A'", "NaN"],
    ),
    "+inf in S for softmax": (
        lambda: kernels.softmax(np.array([[0.0, np.inf]], np.float32), backend="cpu"),
        ValueError,
        ["'S'", "+inf", "(0, 1)"],
    ),
    "softmax on another axis": (
        lambda: kernels.softmax(S, axis=0, backend="cpu"),
        ValueError,
        ["axis=-1", "axis=0", "moveaxis"],
    ),
    "unknown backend": (
        lambda: kernels.scores(Q, K, backend="gpu"),
        ValueError,
        ["'backend'", "'gpu'", "'cupy'", "'cpu'"],
    ),
    "unknown scores version": (
        lambda: kernels.scores(Q, K, version=kc.unknown_version("scores"), backend="cpu"),
        ValueError,
        ["'version'", "'v1'", "'v2'", repr(kc.unknown_version("scores"))],
    ),
    "unknown softmax version": (
        lambda: kernels.softmax(S, version=2, backend="cpu"),
        ValueError,
        ["'version'", "2"],
    ),
    "NumPy and CuPy mixed": (
        lambda: validation.check_same_kind(Q=Q, K=FakeCupy()),
        TypeError,
        ["'Q' array NumPy", "'K' array CuPy"],
    ),
}


class FakeCupy:
    """Looks like a CuPy array to the kind check, without CuPy or a GPU."""

    __module__ = "cupy._core.core"
    __cuda_array_interface__ = {}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_refused(case):
    call, exc_type, fragments = CASES[case]
    with pytest.raises(exc_type) as info:
        call()
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, (case, fragment, message)
    # Indonesian, with a fix: every message tells what to do or why.
    assert any(word in message for word in ("harus", "melebihi", "berisi", "hanya")), message


def test_cupy_backend_without_gpu(monkeypatch):
    if kernels.gpu_available():
        pytest.skip("Ada GPU di mesin ini: backend='cupy' sah.")
    with pytest.raises(RuntimeError) as info:
        kernels.scores(Q, K, backend="cupy")
    message = str(info.value)
    assert "backend='cupy'" in message and "GPU" in message and "backend='cpu'" in message


def test_backend_none_picks_what_is_there():
    expected = "cupy" if kernels.gpu_available() else "cpu"
    assert kernels.resolve_backend(None) == expected
    assert kernels.available_backends()[0] == expected
    assert "cpu" in kernels.available_backends()


def test_inputs_are_not_modified_by_refusal():
    bad = Q.copy()
    bad[0, 0, 0] = np.nan
    before = bad.copy()
    with pytest.raises(ValueError):
        kernels.attention(bad, K, V, backend="cpu")
    np.testing.assert_array_equal(bad, before)


def test_neg_inf_is_allowed_in_softmax_input(monkeypatch):
    """-inf is what the mask writes: softmax must accept it (and reach the launch)."""
    launched = []
    monkeypatch.setattr(
        kernels.loading, "get_function", lambda *a: (lambda grid, block, args: launched.append(a))
    )
    masked = np.array([[0.0, -np.inf], [-np.inf, -np.inf]], np.float32)
    kernels.softmax(masked, backend="cpu")
    assert launched == [("softmax.cu", "softmax_v2_warp", "cpu")]


def test_kernels_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ATENSI_KERNELS_DIR", str(tmp_path))
    assert kernels.kernels_dir() == tmp_path
    with pytest.raises(FileNotFoundError, match="scores.cu"):
        kernels.kernel_path("scores.cu")
    monkeypatch.setenv("ATENSI_KERNELS_DIR", str(tmp_path / "tidak-ada"))
    with pytest.raises(FileNotFoundError, match="ATENSI_KERNELS_DIR"):
        kernels.kernels_dir()
