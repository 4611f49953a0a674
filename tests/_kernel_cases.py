"""Kernel cases shared by test_kernels_cpu.py and test_kernels_gpu.py.

Each case runs one kernel (through ``atensi.kernels``) on fresh, seeded
random float32 input and compares it with ``atensi.reference`` computed in
float64 on the same numbers:

- same shape, float32, no NaN;
- ``-inf`` exactly where the reference has ``-inf`` (the mask), nowhere else;
- relative error ``max |out - ref| / max |ref|`` (over finite entries) <= 1e-5.

Shapes: T in {1, 7, 33, 129} (1 row; fewer than a 16-wide tile; more than two
tiles and not a multiple; more than a 128-thread block), d_k in {1, 3, 64, 128},
with no leading axis, one (3 heads) and two (batch 2 × 3 heads): 48 shapes.

The versions come from the registry (``registry.versions(step)``, and
:func:`fused_cases` for the fused kernels) and the chains from
``kernels.launch.CHAINS``: a new registry entry is tested by every
parametrization below without a test edit.

Also shared with test_fused.py, test_reference_blocked.py and test_bench.py: the
sanitizer modes, the GPU-test marks (``gpu_test``), ``spy_launches`` and
``forbid_launches``.
"""

from __future__ import annotations

import functools
import os
import re
import zlib

import numpy as np
import pytest

from atensi import kernels, reference
from atensi.kernels import registry

TOLERANCE = 1e-5
T_VALUES = (1, 7, 33, 129)
DK_VALUES = (1, 3, 64, 128)


LEADS = ((), (3,), (2, 3))

# (sanitizer, cudacpu mode) for the sanitizer runs of each kernel file.
# ThreadSanitizer twice: real threads, and fibers where only the barriers order
# the CUDA threads. The second has the sharper eye: in thread mode every
# barrier and shuffle goes through one mutex, which also orders threads that
# CUDA leaves unordered (a missing __syncthreads between two warps' reads and
# writes of shared memory is reported in fibers mode only).
SANITIZER_MODES = [("address", None), ("thread", "threads"), ("thread", "fibers")]
SANITIZER_IDS = ["address", "thread-threads", "thread-fibers"]


def shape_cases():
    """(leading axes, T, d_k): every combination of the values above."""
    return [(lead, T, d_k) for lead in LEADS for T in T_VALUES for d_k in DK_VALUES]


def case_id(case) -> str:
    lead, T, d_k = case
    return f"{'x'.join(map(str, lead)) or 'satu'}-T{T}-d{d_k}"


SHAPES = shape_cases()
SHAPE_IDS = [case_id(c) for c in SHAPES]

# The steps of attention(impl="chain-..."), and the chains themselves.
CHAIN_STEPS = ("scores", "causal_mask", "softmax", "weighted_sum")
CHAIN_IMPLS = tuple(kernels.launch.CHAINS)


def chain_for(version: str) -> str | None:
    """The first chain whose scores and softmax are ``version`` (None: no such chain)."""
    return next((impl for impl, chain in kernels.launch.CHAINS.items() if chain[0] == version), None)


def unknown_version(step: str) -> str:
    """A version string the registry does not have for ``step`` (for refusal tests)."""
    have = set(registry.versions(step))
    return next(f"v{n}" for n in range(1, len(have) + 2) if f"v{n}" not in have)


def rng_for(*key) -> np.random.Generator:
    """A generator seeded by the case itself: fresh numbers per case, same every run."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def qkv(lead, T, d_k, *key):
    rng = rng_for("qkv", lead, T, d_k, *key)
    return tuple(rng.standard_normal((*lead, T, d_k), dtype=np.float32) for _ in range(3))


def f64(x):
    return np.asarray(x.get() if hasattr(x, "get") else x, dtype=np.float64)


def assert_matches(out, ref, tol=TOLERANCE):
    """``out`` (kernel, float32) against ``ref`` (float64)."""
    out, ref = f64(out), np.asarray(ref, dtype=np.float64)
    assert out.shape == ref.shape
    assert not np.isnan(out).any(), "keluaran kernel berisi NaN"
    np.testing.assert_array_equal(np.isneginf(out), np.isneginf(ref), err_msg="posisi -inf berbeda")
    assert not np.isposinf(out).any()
    finite = np.isfinite(ref)
    if not finite.any():
        return 0.0
    scale = max(np.abs(ref[finite]).max(), np.finfo(np.float32).tiny)
    err = np.abs(out[finite] - ref[finite]).max() / scale
    assert err <= tol, f"galat relatif {err:.2e} > {tol:.0e}"
    return err


def masked_scores(lead, T, *key, all_masked_rows=0):
    """Realistic softmax input: scaled scores with the causal mask (and a few
    rows that are entirely -inf, which must become zeros)."""
    rng = rng_for("scores", lead, T, *key)
    S = rng.standard_normal((*lead, T, T), dtype=np.float32) * np.float32(3.0)
    S = reference.causal_mask(S)
    if all_masked_rows:
        rows = rng.choice(T, size=min(all_masked_rows, T), replace=False)
        S[..., rows, :] = -np.inf
    return np.ascontiguousarray(S, dtype=np.float32)


def weights(lead, T, *key):
    """Attention weights: rows of a causal softmax, float32."""
    return reference.softmax(masked_scores(lead, T, "A", *key)).astype(np.float32)


# --- GPU tests: skipped without a GPU, except under scripts/gpu_check.sh --------

# gpu_check.sh sets ATENSI_REQUIRE_GPU=1: there a missing GPU is a failure
# (require_gpu), not a quiet skip.
REQUIRE_GPU = os.environ.get("ATENSI_REQUIRE_GPU") == "1"
GPU_MARKS = [
    pytest.mark.gpu,
    pytest.mark.skipif(
        not kernels.gpu_available() and not REQUIRE_GPU,
        reason=f"Tidak ada GPU untuk CuPy: {kernels.loading.gpu_status()[1]}.",
    ),
]


def require_gpu():
    """Call at the start of a GPU test: fails when ATENSI_REQUIRE_GPU=1 found no GPU."""
    if not kernels.gpu_available():
        pytest.fail(f"ATENSI_REQUIRE_GPU=1 tetapi tidak ada GPU: {kernels.loading.gpu_status()[1]}.")


def gpu_test(test):
    """Decorator: GPU_MARKS, and require_gpu() before the test body runs."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        require_gpu()
        return test(*args, **kwargs)

    for mark in GPU_MARKS:
        run = mark(run)
    return run


def spy_launches(monkeypatch):
    """Record (kernel name, grid, block) of every launch, then launch for real.

    Patched where the launchers look it up: ``atensi.kernels.loading``.
    """
    launches = []
    real = kernels.loading.get_function

    class Spy:
        """Records each launch; attributes (max_dynamic_shared_size_bytes) reach the kernel."""

        def __init__(self, name, kernel):
            object.__setattr__(self, "_name", name)
            object.__setattr__(self, "_kernel", kernel)

        def __call__(self, grid, block, args, shared_mem=0):
            launches.append((self._name, grid, block))
            return self._kernel(grid, block, args, shared_mem=shared_mem)

        def __getattr__(self, attr):
            return getattr(self._kernel, attr)

        def __setattr__(self, attr, value):
            setattr(self._kernel, attr, value)

    def spy(file, name, backend):
        return Spy(name, real(file, name, backend))

    monkeypatch.setattr(kernels.loading, "get_function", spy)
    return launches


def forbid_launches(monkeypatch, message="kernel diluncurkan padahal masukan tidak sah"):
    """Make every kernel lookup raise ``AssertionError(message)``: for tests that
    bad input is refused before anything is compiled or launched.

    Checks at once that the trap is really in the launchers' path (a valid call
    must hit it); otherwise the refusal tests would pass without proving anything.
    """

    def trap(*args, **kwargs):
        raise AssertionError(f"{message}: {args}")

    monkeypatch.setattr(kernels.loading, "get_function", trap)
    with pytest.raises(AssertionError, match=re.escape(message)):
        kernels.causal_mask(np.zeros((2, 2), np.float32), backend="cpu")


# --- one function per kernel: run it, compare, return the relative error -----


def check_scores(case, backend, *, version, scale=True, causal=False, to=None):
    lead, T, d_k = case
    Q, K, _ = qkv(lead, T, d_k, "scores")
    Qx, Kx = (to(Q), to(K)) if to else (Q, K)
    out = kernels.scores(Qx, Kx, scale=scale, causal=causal, version=version, backend=backend)
    assert type(out) is type(Qx) and out.dtype == np.float32
    ref = reference.scores(f64(Q), f64(K), scale=scale)
    if causal:
        ref = reference.causal_mask(ref)
    return assert_matches(out, ref)


def check_causal_mask(case, backend, *, version="v1", to=None):
    lead, T, _ = case
    S = rng_for("mask", lead, T).standard_normal((*lead, T, T), dtype=np.float32)
    before = S.copy()
    Sx = to(S) if to else S
    out = kernels.causal_mask(Sx, version=version, backend=backend)
    assert type(out) is type(Sx) and out is not Sx
    np.testing.assert_array_equal(f64(Sx), before)  # input untouched
    out = f64(out)
    keep = ~np.triu(np.ones((T, T), dtype=bool), k=1)
    np.testing.assert_array_equal(out[..., keep], before[..., keep])  # bit for bit
    assert np.isneginf(out[..., ~keep]).all()
    return assert_matches(out, reference.causal_mask(f64(S)))


def check_softmax(case, backend, *, version, causal=False, to=None):
    """``causal``: the variant that reads only S[i, :i + 1] (the input is masked already)."""
    lead, T, _ = case
    S = masked_scores(lead, T, version, all_masked_rows=2 if T > 2 else 0)
    Sx = to(S) if to else S
    A = kernels.softmax(Sx, version=version, causal=causal, backend=backend)
    assert type(A) is type(Sx)
    A64 = f64(A)
    ref = reference.softmax(f64(S))
    err = assert_matches(A64, ref)
    assert (A64 >= 0).all()
    visible = np.isfinite(S).any(axis=-1)
    np.testing.assert_allclose(A64.sum(axis=-1)[visible], 1.0, atol=TOLERANCE)
    assert (A64[~visible] == 0).all()  # rows with nothing visible: zeros, not NaN
    return err


def check_softmax_rows(rows, n, backend, *, version, to=None):
    """Softmax of a (rows, n) matrix: n may exceed the block (256 threads).

    Row 0 has its largest score, 200, in the last column, past the first
    block-width of a long row: a maximum taken over the first B entries only
    would leave exp(200 - m) = inf in float32, and the row NaN."""
    S = rng_for("rows", rows, n, version).standard_normal((rows, n), dtype=np.float32) * 4
    S[0, -1] = 200.0
    Sx = to(S) if to else S
    A = kernels.softmax(Sx, version=version, backend=backend)
    return assert_matches(A, reference.softmax(f64(S)))


def check_weighted_sum(case, backend, *, version="v1", causal=False, to=None):
    """``causal``: the variant that skips A's future (zeros here: causal weights)."""
    lead, T, d_k = case
    A = weights(lead, T, d_k)
    _, _, V = qkv(lead, T, d_k, "weighted_sum")
    Ax, Vx = (to(A), to(V)) if to else (A, V)
    out = kernels.weighted_sum(Ax, Vx, version=version, causal=causal, backend=backend)
    assert type(out) is type(Vx) and out.shape == V.shape
    return assert_matches(out, reference.weighted_sum(f64(A), f64(V)))


def check_attention(case, backend, *, impl, causal=True, scale=True, to=None):
    lead, T, d_k = case
    Q, K, V = qkv(lead, T, d_k, "attention")
    args = tuple(to(x) for x in (Q, K, V)) if to else (Q, K, V)
    out = kernels.attention(*args, causal=causal, scale=scale, impl=impl, backend=backend)
    assert type(out) is type(args[0]) and out.shape == Q.shape
    ref = reference.attention(f64(Q), f64(K), f64(V), causal=causal, scale=scale)
    return assert_matches(out, ref)


# Tensor-core operand formats: "tf32" rounds every operand to 10 mantissa bits.
PRECISION_TOLERANCE = {None: TOLERANCE, "3xtf32": TOLERANCE, "tf32": 1e-3}


def fused_cases() -> list[tuple[str, str | None, int | None]]:
    """(version, precision, splits) for every fused version of the registry: each
    tensor-core format it has, and for a version with a split-K pass splits=None
    (the default), 1 (unsplit) and 3 (three key ranges, then the combine)."""
    cases = []
    for version in registry.versions("fused"):
        kernels_ = registry.of_step("fused", version)
        precisions = tuple(dict.fromkeys(k.precision for k in kernels_)) or (None,)
        splits = (None, 1, 3) if any(k.split for k in kernels_) else (None,)
        cases += [(version, p, s) for p in precisions for s in splits]
    return cases


def fused_case_id(case) -> str:
    version, precision, splits = case
    return "-".join([version] + ([precision] if precision else [])
                    + ([f"s{splits}"] if splits else []))


def check_fused(case, backend, *, version, precision=None, splits=None, causal=True, scale=True,
                to=None):
    """attention(impl="fused-<version>") with ``precision`` and ``splits``."""
    lead, T, d_k = case
    Q, K, V = qkv(lead, T, d_k, "fused", version)
    args = tuple(to(x) for x in (Q, K, V)) if to else (Q, K, V)
    out = kernels.attention(*args, causal=causal, scale=scale, impl=f"fused-{version}",
                            splits=splits, precision=precision, backend=backend)
    assert type(out) is type(args[0]) and out.shape == Q.shape and out.dtype == np.float32
    ref = reference.attention(f64(Q), f64(K), f64(V), causal=causal, scale=scale)
    tol = PRECISION_TOLERANCE[precision]
    if precision == "tf32" and not scale:
        # Unscaled scores are √d_k times larger, and so is TF32's absolute error in them.
        tol *= max(1.0, d_k ** 0.5)
    return assert_matches(out, ref, tol=tol)


def check_all_small(backend, case=((5,), 7, 3), to=None):
    """Every version of every step of the chain, its causal variants, and every
    chain, once, on one small case (used for grid-loop tests)."""
    for version in registry.versions("scores"):
        check_scores(case, backend, version=version, to=to)
        check_scores(case, backend, version=version, causal=True, to=to)
    for version in registry.versions("softmax"):
        check_softmax(case, backend, version=version, to=to)
    for version in registry.versions("softmax", causal=True):
        check_softmax(case, backend, version=version, causal=True, to=to)
    for version in registry.versions("weighted_sum"):
        check_weighted_sum(case, backend, version=version, to=to)
    for version in registry.versions("weighted_sum", causal=True):
        check_weighted_sum(case, backend, version=version, causal=True, to=to)
    for impl in CHAIN_IMPLS:
        check_attention(case, backend, impl=impl, to=to)
    for version in registry.versions("causal_mask"):
        check_causal_mask(case, backend, version=version, to=to)


def chain_kernels() -> set[str]:
    """Names of every registry kernel of the chain's steps (what check_all_small launches)."""
    return {k.name for k in registry.KERNELS if k.step in CHAIN_STEPS}
