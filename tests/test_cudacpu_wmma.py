"""Tensor cores in atensi.cudacpu (cuda_cpu_wmma.h) and their NumPy model.

Fixture: tests/fixtures/cudacpu/wmma.cu (one TF32 m16n16k8 tile per warp, and
planted misuse). Tolerance: none. The emulator's mma_sync and
atensi.number_formats.mma_tf32 add the eight products of each output, each
rounded once to float32, to C in k order with float32 round-to-nearest-even,
so every result must agree bit for bit (NaN with NaN). A GPU's order inside
one MMA is implementation-defined; a comparison with hardware would need
about 8 * 2**-23 * sum |a b| instead.
"""

from pathlib import Path

import numpy as np
import pytest

from atensi import number_formats as nf
from atensi.cudacpu import BarrierDeadlockError, CudaCpuError, RawModule

FIX = Path(__file__).parent / "fixtures" / "cudacpu"
SHOWN = "tests/fixtures/cudacpu/wmma.cu"
i32, f32 = np.int32, np.float32


def aligned(a) -> np.ndarray:
    """A float32 copy of ``a`` whose data starts on a 64-byte boundary (WMMA wants 32)."""
    a = np.asarray(a, f32)
    buf = np.empty(a.size + 16, f32)
    off = (-buf.ctypes.data % 64) // 4
    out = buf[off:off + a.size].reshape(a.shape)
    out[...] = a
    return out


@pytest.fixture(scope="module", params=["fibers", "threads"])
def wmma(request):
    return RawModule((FIX / "wmma.cu").read_text(), path=SHOWN, mode=request.param)


@pytest.fixture(scope="module")
def wmma_fibers():
    return RawModule((FIX / "wmma.cu").read_text(), path=SHOWN)


def same_bits(x, y) -> bool:
    x, y = np.asarray(x, f32), np.asarray(y, f32)
    both_nan = np.isnan(x) & np.isnan(y)
    return bool(np.all(both_nan | (x.view(np.uint32) == y.view(np.uint32))))


# ---- TF32 rounding ----------------------------------------------------------

def tf32_by_arithmetic(x: np.ndarray) -> np.ndarray:
    """Round to nearest, ties away, at the spacing of a 10-bit mantissa, in float64."""
    x64 = x.astype(np.float64)
    out = np.empty_like(x64)
    finite = np.isfinite(x64) & (x64 != 0)
    mant, exp = np.frexp(np.abs(x64[finite]))  # |x| = mant * 2**exp, mant in [0.5, 1)
    exp = np.maximum(exp, -125)  # below 2**-126 the spacing stays that of subnormals
    step = np.ldexp(1.0, exp - 11)
    out[finite] = np.sign(x64[finite]) * np.floor(np.abs(x64[finite]) / step + 0.5) * step
    out[~finite] = x64[~finite]
    with np.errstate(over="ignore"):
        return out.astype(f32)  # exact, except past the largest TF32: inf


def special_values(rng) -> np.ndarray:
    """Denormals, ±inf, ±0, the largest floats and values at and next to TF32 ties."""
    ties = np.array([0x3F801000, 0x3F803000, 0xBF801000, 0x3F800FFF, 0x3F801001, 0x00001000,
                     0x00003000, 0x807FF000, 0x7F7FF000, 0x7F7FEFFF, 0x7F7FFFFF, 0x7F800000,
                     0xFF800000, 0x00000001, 0x80000000, 0x00000000, 0x007FFFFF], np.uint32)
    random_bits = rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32)
    near_ties = (rng.integers(0, 2**32, 2000, dtype=np.uint64).astype(np.uint32) & np.uint32(0xFFFFE000)) \
        | np.uint32(0x1000)
    x = np.concatenate([ties, random_bits, near_ties, near_ties - np.uint32(1)]).view(f32)
    return x[~np.isnan(x)]


def test_to_tf32_is_round_to_nearest_ties_away(rng=np.random.default_rng(22)):
    x = special_values(rng)
    got = nf.to_tf32(x)
    assert same_bits(got, tf32_by_arithmetic(x))
    assert np.all((got.view(np.uint32) & 0x1FFF) == 0)
    # ties go away from zero: 1 + 2**-11 is halfway between 1 and 1 + 2**-10
    assert nf.to_tf32(np.array([1 + 2**-11, -(1 + 2**-11), 1 + 2**-11 - 2**-23], f32)).tolist() == \
        [1 + 2**-10, -(1 + 2**-10), 1.0]
    assert np.isnan(nf.to_tf32(np.array([np.nan], f32)))[0]


@pytest.mark.slow
def test_emulator_rounds_exactly_like_the_model(wmma_fibers, rng=np.random.default_rng(23)):
    x = np.concatenate([special_values(rng), np.array([np.nan], f32)])
    y = np.zeros_like(x)
    wmma_fibers.get_function("to_tf32")(((x.size + 255) // 256,), (256,), (x, y, i32(x.size)))
    assert same_bits(y, nf.to_tf32(x))
    assert y[-1:].view(np.uint32)[0] == 0x7FFFFFFF


def test_split_tf32_recovers_about_21_bits(rng=np.random.default_rng(24)):
    x = rng.standard_normal(10_000).astype(f32)
    hi, lo = nf.split_tf32(x)
    assert np.all((hi.view(np.uint32) & 0x1FFF) == 0) and np.all((lo.view(np.uint32) & 0x1FFF) == 0)
    rel = np.abs((hi.astype(np.float64) + lo) - x) / np.abs(x)
    assert rel.max() <= 2.0**-21
    assert np.abs(hi.astype(np.float64) - x).max() / np.abs(x).max() > 2.0**-13  # hi alone is coarser


# ---- one MMA tile: emulator == NumPy model, bit for bit ------------------------

def tiles(rng, kind: str):
    if kind == "normal":
        draw = lambda *s: rng.standard_normal(s).astype(f32)  # noqa: E731
    elif kind == "special":
        pool = special_values(rng)
        draw = lambda *s: rng.choice(pool, s).astype(f32)  # noqa: E731
    else:  # denormal products and sums near float32's smallest numbers
        draw = lambda *s: (rng.standard_normal(s) * 2.0**-70).astype(f32)  # noqa: E731
    return draw(16, 8), draw(8, 16), draw(16, 16)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["normal", "special", "tiny"])
@pytest.mark.parametrize("layout", ["row", "col"])
def test_one_tile_is_bit_identical_to_the_model(wmma, kind, layout, rng=np.random.default_rng(25)):
    for _ in range(3):
        A, B, C = tiles(rng, kind)
        want = nf.mma_tf32(nf.to_tf32(A), nf.to_tf32(B), C)
        if layout == "row":  # padded rows: ldm larger than the tile
            a, b, c = aligned(np.pad(A, ((0, 0), (0, 4)))), aligned(B), aligned(np.pad(C, ((0, 0), (0, 8))))
            d = aligned(np.zeros((16, 24)))
            args = (a, b, c, d, i32(12), i32(16), i32(24), i32(1))
            name = "mma_row_row"
        else:
            a, b, c, d = aligned(A.T), aligned(B.T), aligned(C.T), aligned(np.zeros((16, 16)))
            args = (a, b, c, d, i32(16), i32(8), i32(16), i32(1))
            name = "mma_col_col"
        wmma.get_function(name)((1,), (32,), args)
        got = d[:, :16] if layout == "row" else d.T
        assert same_bits(got, want)
        if kind == "normal":
            exact = A.astype(np.float64) @ B + C
            assert np.abs(got - exact).max() < 1e-2 and np.abs(got - exact).max() > 1e-6


def test_every_warp_of_every_block_has_its_own_tile(wmma_fibers, rng=np.random.default_rng(26)):
    n = 8  # 2 blocks of 4 warps
    A = rng.standard_normal((n, 16, 8)).astype(f32)
    B = rng.standard_normal((n, 8, 16)).astype(f32)
    C = rng.standard_normal((n, 16, 16)).astype(f32)
    D = aligned(np.zeros((n, 16, 16)))
    Bt = np.ascontiguousarray(np.swapaxes(B, 1, 2))  # col_major B: column n at Bt[n]
    wmma_fibers.get_function("mma_per_warp")((2,), (128,), (aligned(A), aligned(Bt), aligned(C), D))
    for w in range(n):
        assert same_bits(D[w], nf.mma_tf32(nf.to_tf32(A[w]), nf.to_tf32(B[w]), C[w]))


def test_each_element_belongs_to_one_lane_in_a_fixed_order(wmma_fibers):
    runs = []
    for _ in range(2):
        D = aligned(np.full((16, 16), -1.0))
        wmma_fibers.get_function("fragment_owner")((1,), (32,), (D,))
        runs.append(D.copy())
    lane, index = np.divmod(runs[0].astype(int), 100)
    assert sorted(zip(lane.ravel(), index.ravel())) == [(L, i) for L in range(32) for i in range(8)]
    np.testing.assert_array_equal(runs[0], runs[1])


def test_model_refuses_operands_that_are_not_tf32():
    a = np.full((16, 8), 1 + 2**-20, f32)
    with pytest.raises(ValueError, match=r"'a' harus sudah TF32.*to_tf32\(a\)"):
        nf.mma_tf32(a, np.zeros((8, 16), f32), np.zeros((16, 16), f32))
    with pytest.raises(TypeError, match="harus float32"):
        nf.to_tf32(np.zeros(3))
    with pytest.raises(ValueError, match="'precision'"):
        nf.matmul_tf32(np.zeros((2, 8), f32), np.zeros((8, 2), f32), precision="fp16")


def test_matmul_model_agrees_with_one_mma(rng=np.random.default_rng(27)):
    A = rng.standard_normal((16, 8)).astype(f32)
    B = rng.standard_normal((8, 16)).astype(f32)
    one = nf.mma_tf32(nf.to_tf32(A), nf.to_tf32(B), np.zeros((16, 16), f32))
    np.testing.assert_allclose(nf.matmul_tf32(A, B), one, rtol=0, atol=8 * 2**-23 * 8)
    A = rng.standard_normal((64, 64)).astype(f32)
    B = rng.standard_normal((64, 64)).astype(f32)
    exact = A.astype(np.float64) @ B
    err1 = np.abs(nf.matmul_tf32(A, B) - exact).max()
    err3 = np.abs(nf.matmul_tf32(A, B, precision="3xtf32") - exact).max()
    err32 = np.abs(A @ B - exact).max()
    assert err1 > 1e-3 and err3 < 10 * err32 + 1e-6


# ---- planted misuse -------------------------------------------------------------

def test_partial_warp_is_an_error(wmma):
    A, B, C = (aligned(np.zeros(s)) for s in ((16, 8), (8, 16), (16, 16)))
    with pytest.raises(CudaCpuError, match=r"wmma::load_matrix_sync\(\).*wmma\.cu:21.*warp 1.*hanya punya "
                                           r"16 thread.*kelipatan 32"):
        wmma.get_function("mma_row_row")((1,), (48,), (A, B, C, aligned(np.zeros((16, 16))), i32(8), i32(16),
                                                       i32(16), i32(1)))


def test_divergent_call_is_a_deadlock_naming_both_lines(wmma):
    with pytest.raises(BarrierDeadlockError) as info:
        wmma.get_function("divergent_load")((1,), (32,), (aligned(np.zeros((16, 16))),
                                                         aligned(np.zeros((16, 16)))))
    msg = str(info.value)
    assert "threadIdx.x 0…15 (16 thread): menunggu di wmma::load_matrix_sync(), " + SHOWN + ":70" in msg
    assert "threadIdx.x 16…31 (16 thread): menunggu di wmma::load_matrix_sync(), " + SHOWN + ":72" in msg


def test_lane_that_returned_early_is_a_deadlock(wmma):
    with pytest.raises(BarrierDeadlockError, match=r"0…30 \(31 thread\): menunggu di wmma::store_matrix_sync"
                                                   r"\(\), tests/fixtures/cudacpu/wmma\.cu:81(.|\n)*31 \(1 "
                                                   r"thread\): sudah keluar"):
        wmma.get_function("early_return")((1,), (32,), (aligned(np.zeros((16, 16))),))


def test_lanes_with_different_arguments_are_an_error(wmma_fibers):
    with pytest.raises(CudaCpuError, match=r"load_matrix_sync\(\).*wmma\.cu:87.*lane 1: semua 32 lane.*argumen "
                                           r"yang sama.*threadIdx\.x / 32"):
        wmma_fibers.get_function("pointer_per_lane")((1,), (32,), (aligned(np.zeros(512)),
                                                                   aligned(np.zeros((16, 16)))))
    with pytest.raises(CudaCpuError, match=r"fill_fragment\(\).*wmma\.cu:94.*lane 1 memberi 1 sedangkan "
                                           r"lane 0 memberi 0"):
        wmma_fibers.get_function("fill_per_lane")((1,), (32,), (aligned(np.zeros((16, 16))),))


@pytest.mark.parametrize("ldm, problem", [(6, r"ldm = 6 bukan kelipatan 4 float"),
                                           (4, r"ldm = 4 lebih kecil dari panjang satu baris ubin 16 x 8")])
def test_wrong_leading_dimension_is_an_error(wmma_fibers, ldm, problem):
    with pytest.raises(CudaCpuError, match=r"load_matrix_sync\(\).*wmma\.cu:103.*" + problem):
        wmma_fibers.get_function("load_with_ldm")((1,), (32,), (aligned(np.zeros(256)),
                                                                aligned(np.zeros((16, 16))), i32(ldm)))
    wmma_fibers.get_function("load_with_ldm")((1,), (32,), (aligned(np.zeros(256)), aligned(np.zeros((16, 16))),
                                                            i32(8)))


@pytest.mark.parametrize("ldm", [20, 36])
def test_accumulator_ldm_must_be_a_multiple_of_eight(wmma_fibers, ldm):
    """A multiple of 4 is enough for A and B, not for the f32 accumulator."""
    with pytest.raises(CudaCpuError, match=rf"store_matrix_sync\(\).*wmma\.cu:112.*ldm = {ldm} bukan "
                                           r"kelipatan 8 float.*accumulator"):
        wmma_fibers.get_function("accumulator_with_ldm")((1,), (32,), (aligned(np.zeros((16, ldm))), i32(ldm)))
    D = aligned(np.zeros((16, 24)))
    wmma_fibers.get_function("accumulator_with_ldm")((1,), (32,), (D, i32(24)))
    assert (D[:, :16] == 1).all() and (D[:, 16:] == 0).all()


def test_column_major_tile_needs_ldm_of_a_column(wmma_fibers):
    z = [aligned(np.zeros(s)) for s in ((16, 16), (16, 16), (16, 16), (16, 16))]
    with pytest.raises(CudaCpuError, match=r"ldm = 8 lebih kecil dari panjang satu kolom ubin 16 x 8"):
        wmma_fibers.get_function("mma_col_col")((1,), (32,), (*z, i32(8), i32(8), i32(16), i32(1)))


def test_unaligned_pointer_is_an_error(wmma_fibers):
    A = aligned(np.zeros(16 * 8 + 4))[4:]  # 16 bytes past a 64-byte boundary
    z = [aligned(np.zeros(s)) for s in ((8, 16), (16, 16), (16, 16))]
    with pytest.raises(CudaCpuError, match=r"wmma\.cu:21.*bukan kelipatan 32 byte"):
        wmma_fibers.get_function("mma_row_row")((1,), (32,), (A, *z, i32(8), i32(16), i32(16), i32(1)))


def test_operands_never_rounded_to_tf32_are_an_error(wmma_fibers, rng=np.random.default_rng(28)):
    A = aligned(rng.standard_normal((16, 8)))
    z = [aligned(np.zeros(s)) for s in ((8, 16), (16, 16), (16, 16))]
    with pytest.raises(CudaCpuError, match=r"mma_sync\(\).*wmma\.cu:28.*belum dibulatkan ke TF32"
                                           r".*__float_to_tf32"):
        wmma_fibers.get_function("mma_row_row")((1,), (32,), (A, *z, i32(8), i32(16), i32(16), i32(0)))
    # the module stays usable
    A = aligned(nf.to_tf32(np.asarray(A)))
    wmma_fibers.get_function("mma_row_row")((1,), (32,), (A, *z, i32(8), i32(16), i32(16), i32(0)))


# ---- fragment layout: unspecified, a seeded permutation in shuffle mode --------------


def _scaled_rows(mode, name, seed=0):
    rng = np.random.default_rng(31)  # the same tile every call
    A, B = rng.standard_normal((16, 8)).astype(f32), rng.standard_normal((8, 16)).astype(f32)
    s = rng.uniform(0.5, 4.0, 16).astype(f32)
    want = (nf.mma_tf32(nf.to_tf32(A), nf.to_tf32(B), np.zeros((16, 16), f32)) * s[:, None]).astype(f32)
    mod = RawModule((FIX / "fragment_layout.cu").read_text(), path="tests/fixtures/cudacpu/fragment_layout.cu",
                    mode=mode, seed=seed)
    D = aligned(np.zeros((16, 16)))
    mod.get_function(name)((1,), (32,), (aligned(A), aligned(B), s, D))
    return np.asarray(D), want


def test_a_kernel_relying_on_the_fragment_layout_fails_in_shuffle_mode():
    got, want = _scaled_rows("fibers", "scale_rows_through_x")
    assert same_bits(got, want)  # the fixed layout the drawing shows: the bug passes
    for seed in (1, 2):
        got, want = _scaled_rows("shuffle", "scale_rows_through_x", seed)
        assert not np.allclose(got, want, rtol=1e-3), seed  # a seeded layout: it fails
        got, want = _scaled_rows("shuffle", "scale_rows_in_memory", seed)
        assert same_bits(got, want), seed  # layout-free code is right under every seed


def test_the_shuffled_layout_is_fixed_for_a_seed_and_changes_with_it():
    first, _ = _scaled_rows("shuffle", "scale_rows_through_x", 1)
    again, _ = _scaled_rows("shuffle", "scale_rows_through_x", 1)
    other, _ = _scaled_rows("shuffle", "scale_rows_through_x", 2)
    assert same_bits(first, again) and not same_bits(first, other)


_V3_UNDER_SEEDS = r"""
import numpy as np
from atensi import kernels, reference
rng = np.random.default_rng(41)
Q, K, V = (rng.standard_normal((2, 130, 64), dtype=np.float32) for _ in range(3))
ref = reference.attention(*(x.astype(np.float64) for x in (Q, K, V)), causal=True)
for precision, tol in (("3xtf32", 1e-5), ("tf32", 1e-2)):
    for splits in (1, 3):
        out = kernels.attention(Q, K, V, impl="fused-v3", precision=precision, splits=splits, backend="cpu")
        err = float(np.abs(out - ref).max() / np.abs(ref).max())
        assert err <= tol, (precision, splits, err)
print("OK")
"""


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_fused_v3_does_not_depend_on_the_fragment_layout(seed):
    """Fused v3 does its per-row work after store_matrix_sync: right under any
    seeded layout (shuffle mode, in its own process: mode comes from the environment)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "ATENSI_CUDACPU_MODE": "shuffle", "ATENSI_CUDACPU_SEED": str(seed),
           "PYTHONPATH": str(root / "src")}
    proc = subprocess.run([sys.executable, "-c", _V3_UNDER_SEEDS], env=env, cwd=root,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip() == "OK", proc.stderr[-3000:]
