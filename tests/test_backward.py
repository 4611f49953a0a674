"""The backward pass of one head: NumPy, blocked NumPy, and the kernels.

- ``reference.attention_backward`` and ``reference.attention_backward_blocked``
  against central finite differences in float64 (relative error <= 1e-6), on
  fresh seeded inputs: T = 1, T not a multiple of the block, d_k in {1, 3, 64},
  causal on/off, scaling on/off.
- ``attention_blocked(..., return_lse=True)`` gives the row log-sum-exp; the
  blocked backward never holds a (T, T) array (tracemalloc).
- ``kernels.attention_backward`` (kernels/attention_backward.cu) on the CPU
  emulation against a float64 oracle at the forward kernels' shapes
  (tests/_kernel_cases.py), with the grid loops, the lse path and validation;
  NVRTC for sm_80 and sm_90 without spills; on CuPy where a GPU is present.
"""

from __future__ import annotations

import numpy as np
import pytest

import _kernel_cases as kc
from _oracles import peak_bytes
from atensi import kernels, reference
from atensi.kernels import backward as kernels_backward

BACKEND = "cpu"
FD_TOLERANCE = 1e-6
KERNEL_TOLERANCE = 1e-5
FLAGS = [(True, True), (True, False), (False, True), (False, False)]
FLAG_IDS = ["kausal-skala", "kausal", "skala", "polos"]


# --- finite differences -----------------------------------------------------------


def _inputs64(lead, T, d_k, *key):
    rng = kc.rng_for("fd", lead, T, d_k, *key)
    return tuple(rng.standard_normal((*lead, T, d_k)) for _ in range(4))


def _fd_error(analytic, numeric):
    """max |analytic − numeric| / max |numeric|; a zero gradient must be ~0."""
    numeric = np.asarray(numeric)
    diff = float(np.abs(np.asarray(analytic) - numeric).max())
    size = float(np.abs(numeric).max())
    if size < 1e-8:  # e.g. dQ, dK at T = 1: the output does not depend on Q or K
        assert diff < 1e-10, diff
        return 0.0
    return diff / size


FD_CASES = [
    ((), 1, 3),  # one token: A = 1, dQ = dK = 0
    ((), 1, 64),
    ((), 5, 1),  # 5 is not a multiple of block = 2 or 3
    ((2,), 7, 3),
    ((), 3, 64),  # small T keeps d_k = 64 fast
    ((2,), 4, 64),
]


@pytest.mark.slow
@pytest.mark.parametrize("block", [None, 2, 3], ids=["biasa", "berubin2", "berubin3"])
@pytest.mark.parametrize("causal, scale", FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize("case", FD_CASES, ids=kc.case_id)
def test_gradients_match_finite_differences(case, causal, scale, block):
    lead, T, d_k = case
    Q, K, V, G = _inputs64(lead, T, d_k, causal, scale)

    def loss(Q, K, V):  # L = sum(O ⊙ G), so dO = G
        return float(np.sum(reference.attention(Q, K, V, causal=causal, scale=scale) * G))

    if block is None:
        grads = reference.attention_backward(Q, K, V, G, causal=causal, scale=scale)
    else:
        grads = reference.attention_backward_blocked(Q, K, V, G, causal=causal, scale=scale,
                                                     block=block)
    numeric = (
        reference.numerical_gradient(lambda X: loss(X, K, V), Q.copy()),
        reference.numerical_gradient(lambda X: loss(Q, X, V), K.copy()),
        reference.numerical_gradient(lambda X: loss(Q, K, X), V.copy()),
    )
    for name, a, n in zip(("dQ", "dK", "dV"), grads, numeric):
        assert a.shape == n.shape and a.dtype == np.float64
        err = _fd_error(a, n)
        assert err <= FD_TOLERANCE, f"{name}: galat relatif {err:.1e}"


def test_numerical_gradient_of_a_known_function():
    X = np.array([[1.0, -2.0], [0.5, 3.0]])
    grad = reference.numerical_gradient(lambda X: float(np.sum(X**3)), X.copy())
    np.testing.assert_allclose(grad, 3 * X**2, rtol=1e-8)
    np.testing.assert_array_equal(X, [[1.0, -2.0], [0.5, 3.0]])  # X restored


def test_first_row_of_a_causal_head_gets_no_query_gradient():
    """Row 0 sees only itself: A[0, 0] = 1 whatever Q[0] is, so dQ[0] = 0 and
    the mask adds no gradient (dS = 0 wherever A = 0)."""
    Q, K, V, dO = _inputs64((), 6, 3, "row0")
    dQ, _, _ = reference.attention_backward(Q, K, V, dO)
    assert np.all(dQ[0] == 0)
    A = reference.softmax(reference.causal_mask(reference.scores(Q, K)))
    dA = dO @ V.T
    dS = A * (dA - np.sum(dA * A, axis=-1, keepdims=True))
    assert np.all(dS[np.triu_indices(6, k=1)] == 0)


# --- blocked: lse, equality, memory ----------------------------------------------------


@pytest.mark.parametrize("causal, scale", FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize("T, block", [(1, 128), (37, 8), (300, 128), (256, 64)])
def test_blocked_forward_returns_log_sum_exp(T, block, causal, scale):
    Q, K, V, _ = _inputs64((2,), T, 5, "lse")
    O, lse = reference.attention_blocked(Q, K, V, causal=causal, scale=scale, block=block,
                                         return_lse=True)
    S = reference.scores(Q, K, scale=scale)
    if causal:
        S = reference.causal_mask(S)
    m = S.max(axis=-1, keepdims=True)
    want = (m + np.log(np.sum(np.exp(S - m), axis=-1, keepdims=True)))[..., 0]
    assert lse.shape == (2, T)
    np.testing.assert_allclose(lse, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(O, reference.attention(Q, K, V, causal=causal, scale=scale),
                               rtol=1e-12, atol=1e-12)
    plain = reference.attention_blocked(Q, K, V, causal=causal, scale=scale, block=block)
    np.testing.assert_array_equal(plain, O)


@pytest.mark.parametrize("causal, scale", FLAGS, ids=FLAG_IDS)
@pytest.mark.parametrize("T, block", [(1, 128), (130, 128), (300, 64), (64, 64)])
def test_blocked_backward_equals_plain(T, block, causal, scale):
    Q, K, V, dO = _inputs64((3,), T, 7, "eq")
    want = reference.attention_backward(Q, K, V, dO, causal=causal, scale=scale)
    got = reference.attention_backward_blocked(Q, K, V, dO, causal=causal, scale=scale,
                                               block=block)
    O, lse = reference.attention_blocked(Q, K, V, causal=causal, scale=scale, return_lse=True)
    saved = reference.attention_backward_blocked(Q, K, V, dO, causal=causal, scale=scale,
                                                 block=block, O=O, lse=lse)
    for w, g, s in zip(want, got, saved):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(s, w, rtol=1e-10, atol=1e-12)


def test_blocked_backward_float32_stays_float32():
    Q, K, V = kc.qkv((2,), 50, 8, "f32")
    dO = kc.rng_for("f32-dO").standard_normal(Q.shape, dtype=np.float32)
    grads = reference.attention_backward_blocked(Q, K, V, dO, block=16)
    want = reference.attention_backward(*(kc.f64(x) for x in (Q, K, V, dO)))
    for g, w in zip(grads, want):
        assert g.dtype == np.float32
        kc.assert_matches(g, w)


def test_blocked_backward_never_holds_a_T_by_T_array():
    T, d_k = 1024, 64
    Q, K, V = kc.qkv((), T, d_k, "mem")
    dO = kc.rng_for("mem-dO").standard_normal(Q.shape, dtype=np.float32)
    plain = peak_bytes(lambda: reference.attention_backward(Q, K, V, dO))
    blocked = peak_bytes(lambda: reference.attention_backward_blocked(Q, K, V, dO))
    one_square = 4 * T * T  # one (T, T) float32 array
    assert plain >= 3 * one_square
    assert blocked < one_square / 2, blocked
    assert blocked <= plain / 8


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        ({"dO": np.zeros((5, 4))}, "'dO'"),
        ({"O": np.zeros((5, 4))}, "'O'"),
        ({"lse": np.zeros((5,))}, "'lse'"),
        ({"block": 0}, "'block'"),
    ],
)
def test_blocked_backward_rejects_mismatched_inputs(kwargs, fragment):
    Q, K, V, dO = _inputs64((), 6, 3, "bad")
    args = {"dO": dO, **kwargs}
    with pytest.raises(ValueError, match=fragment):
        reference.attention_backward_blocked(Q, K, V, args.pop("dO"), **args)


# --- kernels on the CPU emulation ------------------------------------------------------


def _dO(lead, T, d_v, *key):
    return kc.rng_for("dO", lead, T, d_v, *key).standard_normal((*lead, T, d_v),
                                                                 dtype=np.float32)


def _assert_grad(out, ref, tol=KERNEL_TOLERANCE):
    """Kernel (float32) against float64: error relative to max(|ref|, 1)."""
    out, ref = kc.f64(out), np.asarray(ref, dtype=np.float64)
    assert out.shape == ref.shape and np.isfinite(out).all()
    err = float(np.abs(out - ref).max()) / max(float(np.abs(ref).max()), 1.0)
    assert err <= tol, f"galat relatif {err:.2e} > {tol:.0e}"
    return err


def check_backward(case, backend, *, causal=True, scale=True, with_lse=False, to=None):
    lead, T, d_k = case
    Q, K, V = kc.qkv(lead, T, d_k, "backward")
    dO = _dO(lead, T, d_k)
    lse = None
    if with_lse:
        _, lse = reference.attention_blocked(Q, K, V, causal=causal, scale=scale,
                                             return_lse=True)
    args = [Q, K, V, dO] + ([] if lse is None else [lse])
    if to:
        args = [to(x) for x in args]
    kwargs = {} if lse is None else {"lse": args.pop()}
    grads = kernels.attention_backward(*args, causal=causal, scale=scale, backend=backend,
                                       **kwargs)
    want = reference.attention_backward(*(kc.f64(x) for x in (Q, K, V, dO)),
                                        causal=causal, scale=scale)
    assert len(grads) == 3
    for g in grads:
        assert type(g) is type(args[0]) and g.dtype == np.float32
    # exp(S − lse) without scaling: scores reach ~40 at d_k = 64, where one
    # float32 step is 4e-6, and the exponential turns that into a relative
    # error of A (softmax divides it away; the saved lse does not).
    tol = KERNEL_TOLERANCE if scale or lse is None else 5 * KERNEL_TOLERANCE
    return max(_assert_grad(g, w, tol) for g, w in zip(grads, want))


@pytest.mark.slow
@pytest.mark.parametrize("case", kc.SHAPES, ids=kc.SHAPE_IDS)
def test_kernel_backward(case):
    check_backward(case, BACKEND)


@pytest.mark.parametrize("causal, scale", FLAGS[1:], ids=FLAG_IDS[1:])
@pytest.mark.parametrize(
    "case", [((), 1, 3), ((), 33, 64), ((3,), 7, 128), ((2, 3), 33, 1), ((), 129, 64)],
    ids=kc.case_id,
)
def test_kernel_backward_flags(case, causal, scale):
    check_backward(case, BACKEND, causal=causal, scale=scale)


@pytest.mark.parametrize("causal, scale", [(True, True), (False, False)], ids=["kausal", "polos"])
@pytest.mark.parametrize("case", [((), 1, 3), ((2,), 33, 64), ((3,), 129, 3)], ids=kc.case_id)
def test_kernel_backward_from_saved_lse(case, causal, scale, monkeypatch):
    launches = kc.spy_launches(monkeypatch)
    check_backward(case, BACKEND, causal=causal, scale=scale, with_lse=True)
    names = [name for name, _, _ in launches]
    assert kernels_backward.FROM_LSE in names and not any("softmax_v" in n for n in names)


def test_kernel_backward_launches_one_kernel_per_formula(monkeypatch):
    launches = kc.spy_launches(monkeypatch)
    check_backward(((2,), 9, 5), BACKEND)
    assert [name for name, _, _ in launches] == [
        "scores_v2_tiled_causal", "softmax_v2_warp", "attention_backward_dv_v1",
        "attention_backward_da_v1", "softmax_backward_v1", "attention_backward_dq_v1",
        "attention_backward_dk_v1",
    ]


def test_kernel_backward_more_heads_and_rows_than_the_grid(monkeypatch):
    """Grid capped at 2 blocks in y/z and 3 in x: the loops over heads and rows
    must still cover 5 heads and 35 rows."""
    monkeypatch.setattr(kernels.launch, "MAX_GRID_YZ", 2)
    monkeypatch.setattr(kernels.launch, "MAX_GRID_X", 3)
    launches = kc.spy_launches(monkeypatch)
    check_backward(((5,), 7, 3), BACKEND)
    check_backward(((5,), 7, 3), BACKEND, with_lse=True)
    assert launches  # the spy is in the launchers' path
    for name, grid, _ in launches:
        if name in ("softmax_backward_v1", "attention_weights_from_lse_v1", "softmax_v2_warp"):
            assert grid == (3, 1, 1), (name, grid)
        else:
            assert grid[2] == 2, (name, grid)


@pytest.mark.slow
def test_kernel_backward_one_head_longer_than_the_engine():
    check_backward(((), 1025, 64), BACKEND)


def test_public_name_and_numpy_out():
    assert kernels.attention_backward is kernels_backward.attention_backward
    Q, K, V = kc.qkv((), 5, 3, "pub")
    grads = kernels.attention_backward(Q, K, V, _dO((), 5, 3), backend=BACKEND)
    assert all(isinstance(g, np.ndarray) and g.shape == (5, 3) for g in grads)


# --- validation (before any launch) --------------------------------------------------


def _good():
    Q, K, V = kc.qkv((2,), 6, 3, "valid")
    return Q, K, V, _dO((2,), 6, 3)


@pytest.mark.parametrize(
    "change, error, fragment",
    [
        (lambda a: {**a, "dO": a["dO"][..., :2].copy()}, ValueError, "'dO'.*bentuk"),
        (lambda a: {**a, "dO": a["dO"][0]}, ValueError, "'dO'.*bentuk"),
        (lambda a: {**a, "dO": a["dO"].astype(np.float64)}, TypeError, "'dO'.*float32"),
        (lambda a: {**a, "dO": np.swapaxes(a["dO"], 0, 1)}, ValueError, "'dO'.*C-contiguous"),
        (lambda a: {**a, "dO": np.where(a["dO"] > 1, np.nan, a["dO"]).astype(np.float32)},
         ValueError, "'dO'.*NaN"),
        (lambda a: {**a, "Q": a["Q"].astype(np.float64)}, TypeError, "'Q'.*float32"),
        (lambda a: {**a, "lse": np.zeros((2, 5), np.float32)}, ValueError, "'lse'.*\\(2, 6\\)"),
        (lambda a: {**a, "lse": np.zeros((2, 6), np.float64)}, TypeError, "'lse'.*float32"),
        (lambda a: {**a, "lse": np.zeros((6, 2), np.float32).T}, ValueError,
         "'lse'.*C-contiguous"),
        (lambda a: {**a, "lse": np.full((2, 6), np.inf, np.float32)}, ValueError, "'lse'.*inf"),
        (lambda a: {**a, "causal": 1}, TypeError, "'causal'.*True atau False"),
        (lambda a: {**a, "scale": "ya"}, TypeError, "'scale'.*True atau False"),
        (lambda a: {**a, "backend": "gpu"}, ValueError, "'backend'"),
    ],
)
def test_kernel_backward_validation(change, error, fragment, monkeypatch):
    launches = kc.spy_launches(monkeypatch)
    Q, K, V, dO = _good()
    args = change({"Q": Q, "K": K, "V": V, "dO": dO})
    with pytest.raises(error, match=fragment):
        kernels.attention_backward(args.pop("Q"), args.pop("K"), args.pop("V"),
                                   args.pop("dO"), backend=args.pop("backend", BACKEND),
                                   **args)
    assert launches == []  # nothing was launched


@pytest.mark.parametrize("shift", [-60.0, -3e38, np.nan], ids=["small", "huge", "one-row"])
def test_kernel_backward_refuses_an_lse_of_other_scores(shift):
    """exp(S − lse) with an lse too small: weights of 1e26 (or inf, NaN); the reference
    refuses the same lse, and so must the kernel, with the same message."""
    Q, K, V, dO = _good()
    _, lse = reference.attention_blocked(Q, K, V, return_lse=True)
    bad = (lse + np.float32(shift)).astype(np.float32)
    if np.isnan(shift):  # one row far off: inf in that row only
        bad = np.where(np.arange(bad.shape[-1]) == 0, np.float32(-3e38), lse).astype(np.float32)
    pattern = r"'lse' tidak cocok dengan Q dan K.*exp\(S − lse\)"
    with pytest.raises(ValueError, match=pattern):
        reference.attention_backward_blocked(Q, K, V, dO, lse=bad)
    with pytest.raises(ValueError, match=pattern):
        kernels.attention_backward(Q, K, V, dO, lse=bad, backend=BACKEND)
    grads = kernels.attention_backward(Q, K, V, dO, lse=lse.astype(np.float32), backend=BACKEND)
    assert all(np.isfinite(g).all() for g in grads)


# --- NVRTC ---------------------------------------------------------------------------


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_kernel_file_compiles_without_spills(arch):
    try:
        report = kernels.compile_report("kernels/attention_backward.cu", arch=arch)
    except RuntimeError as err:
        if "NVRTC" in str(err) and not isinstance(err, kernels.CompileError):
            pytest.skip(str(err))
        raise
    assert set(report.kernels) == set(kernels_backward.KERNELS), report.log
    for name, res in report.kernels.items():
        assert res.registers > 0, (name, report.log)
        assert res.spill_stores == res.spill_loads == res.stack_frame == 0, (name, report.log)
    assert report.kernels["softmax_backward_v1"].shared_bytes == 4 * 1024 // 32


# --- GPU (skipped without one) ------------------------------------------------------------


def _to_cupy(x):
    import cupy

    return cupy.asarray(x)


@kc.gpu_test
@pytest.mark.parametrize("case", kc.SHAPES + [((12,), 1024, 64)], ids=kc.SHAPE_IDS + ["andrea"])
def test_gpu_kernel_backward(case):
    check_backward(case, "cupy", to=_to_cupy)
    check_backward(case, "cupy", causal=False, scale=False)
    check_backward(case, "cupy", with_lse=True, to=_to_cupy)


@kc.gpu_test
def test_gpu_more_heads_than_grid_z():
    check_backward(((70000,), 2, 3), "cupy", to=_to_cupy)


@kc.gpu_test
def test_gpu_blocked_reference_on_cupy():
    import cupy

    Q, K, V = kc.qkv((2,), 300, 64, "gpu-ref")
    dO = _dO((2,), 300, 64)
    grads = reference.attention_backward_blocked(*(cupy.asarray(x) for x in (Q, K, V, dO)))
    want = reference.attention_backward(*(kc.f64(x) for x in (Q, K, V, dO)))
    for g, w in zip(grads, want):
        assert isinstance(g, cupy.ndarray)
        _assert_grad(g, w)


# --- broadcast inputs, inconsistent O/lse, finite differences that cannot work ----------


@pytest.mark.parametrize("blocked", [False, True])
def test_broadcast_inputs_get_gradients_of_their_own_shape(blocked):
    rng = np.random.default_rng(30)
    Q = rng.standard_normal((1, 6, 3))          # one query set for three heads
    K, V = rng.standard_normal((3, 6, 3)), rng.standard_normal((6, 3))
    dO = rng.standard_normal((3, 6, 3))
    backward = reference.attention_backward_blocked if blocked else reference.attention_backward
    kwargs = {"block": 4} if blocked else {}
    dQ, dK, dV = backward(Q, K, V, dO, **kwargs)
    assert dQ.shape == Q.shape and dK.shape == K.shape and dV.shape == V.shape
    # The same as the gradients of explicit copies, summed over the copies.
    Qb, Vb = np.broadcast_to(Q, (3, 6, 3)).copy(), np.broadcast_to(V, (3, 6, 3)).copy()
    wQ, wK, wV = reference.attention_backward(Qb, K, Vb, dO)
    for got, want in ((dQ, wQ.sum(axis=0, keepdims=True)), (dK, wK), (dV, wV.sum(axis=0))):
        assert np.abs(got - want).max() < 1e-12


@pytest.mark.parametrize("bad, words", [(np.nan, "'lse' berisi"), (-np.inf, "'lse' berisi"),
                                        (-30.0, "'lse' tidak cocok")])
def test_inconsistent_lse_is_refused(bad, words):
    rng = np.random.default_rng(31)
    Q, K, V, dO = (rng.standard_normal((2, 8, 4)) for _ in range(4))
    O, lse = reference.attention_blocked(Q, K, V, return_lse=True)
    lse = lse.copy()
    if bad == -30.0:
        lse -= 30.0   # weights e^30 times too large: gradients 10^13 off
    else:
        lse[1, 3] = bad
    with pytest.raises(ValueError, match=words):
        reference.attention_backward_blocked(Q, K, V, dO, O=O, lse=lse)


def test_non_finite_O_is_refused():
    rng = np.random.default_rng(32)
    Q, K, V, dO = (rng.standard_normal((8, 4)) for _ in range(4))
    O = np.full((8, 4), np.nan)
    with pytest.raises(ValueError, match="'O' berisi"):
        reference.attention_backward_blocked(Q, K, V, dO, O=O)


@pytest.mark.parametrize("X, h", [(np.ones(3, np.float16), 1e-6), (np.ones(3), 1e-20),
                                  (np.full(3, 1e12), 1e-6), (np.ones(3, np.float32), 1e-6)])
def test_numerical_gradient_refuses_a_step_lost_to_rounding(X, h):
    with pytest.raises(ValueError, match="'h'.*terlalu kecil"):
        reference.numerical_gradient(lambda Y: float((Y ** 2).sum()), X, h=h)


def test_numerical_gradient_refuses_a_function_that_is_not_finite():
    with pytest.raises(ValueError, match="'f' mengembalikan nan"):
        reference.numerical_gradient(lambda Y: float("nan"), np.ones(2))
    with pytest.raises(TypeError, match="'f' harus mengembalikan satu bilangan"):
        reference.numerical_gradient(lambda Y: "satu", np.ones(2))
