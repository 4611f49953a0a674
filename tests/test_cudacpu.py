"""atensi.cudacpu: CUDA C kernels run on the CPU, checked against NumPy.

Fixtures in tests/fixtures/cudacpu: demo.cu (correct kernels, one feature
each) and three planted bugs (missing_sync.cu, off_by_one.cu,
divergent_barrier.cu) that the harness must catch.
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from atensi.cudacpu import (
    BarrierDeadlockError,
    CudaCpuError,
    LaunchConfigError,
    RawModule,
    SanitizerError,
    build_library,
    run_in_subprocess,
    run_python_in_subprocess,
)

FIX = Path(__file__).parent / "fixtures" / "cudacpu"
SHOWN = "tests/fixtures/cudacpu"  # the path g++ and the sanitizers print
i32, f32 = np.int32, np.float32


def load(name: str, **kw) -> RawModule:
    return RawModule((FIX / name).read_text(), path=f"{SHOWN}/{name}", **kw)


@pytest.fixture(scope="module", autouse=True)
def _prebuild():
    """Compile every library these tests use, two at a time (cold cache: ~2x faster)."""
    builds = [("demo.cu", m, s) for m, s in [("fibers", None), ("threads", None), ("fibers", "address"),
                                              ("fibers", "thread"), ("threads", "thread")]]
    builds += [("missing_sync.cu", m, s) for m, s in [("fibers", None), ("fibers", "thread"),
                                                      ("threads", "thread")]]
    builds += [("off_by_one.cu", "fibers", "address"), ("divergent_barrier.cu", "fibers", None),
               ("divergent_barrier.cu", "threads", None)]
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda b: build_library((FIX / b[0]).read_text(), path=f"{SHOWN}/{b[0]}", mode=b[1],
                                              sanitize=b[2]), builds))


@pytest.fixture(scope="module", params=["fibers", "threads"])
def demo(request):
    return load("demo.cu", mode=request.param)


@pytest.fixture(scope="module")
def demo_fibers():
    return load("demo.cu")


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(2024)


# ---- demo kernels against NumPy, in both modes --------------------------------

@pytest.mark.slow
def test_vec_add_size_not_multiple_of_block(demo, rng):
    n = 1000
    a, b = rng.standard_normal(n).astype(f32), rng.standard_normal(n).astype(f32)
    out = np.full(n + 5, 7.0, f32)  # the 5 extra elements must stay untouched
    demo.get_function("vec_add")(((n + 255) // 256,), (256,), (a, b, out, i32(n)))
    np.testing.assert_array_equal(out[:n], a + b)
    np.testing.assert_array_equal(out[n:], 7.0)


def test_block_reduction_in_static_shared_memory(demo, rng):
    x = rng.standard_normal((9, 700)).astype(f32)
    out = np.zeros(9, f32)
    demo.get_function("row_sum_shared")((9,), (256,), (x, out, i32(700)))
    np.testing.assert_allclose(out, x.sum(axis=1, dtype=np.float64), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("threads", [32, 128])
def test_warp_shuffle_reduction_with_dynamic_shared_memory(demo, rng, threads):
    x = rng.standard_normal((5, 300)).astype(f32)
    x[2] = -np.inf  # a row of -inf: max is -inf, the sum too
    mx, sm = np.zeros(5, f32), np.zeros(5, f32)
    warps = threads // 32
    demo.get_function("row_max_sum_warp")((5,), (threads,), (x, mx, sm, i32(300)), shared_mem=2 * warps * 4)
    np.testing.assert_array_equal(mx, x.max(axis=1))
    np.testing.assert_allclose(sm, x.sum(axis=1, dtype=np.float64), rtol=1e-5, atol=1e-4)


def test_dynamic_shared_memory_reverse(demo):
    a = np.arange(6 * 64, dtype=np.int32)
    out = np.zeros_like(a)
    demo.get_function("reverse_chunks")((6,), (64,), (a, out), shared_mem=64 * 4)
    np.testing.assert_array_equal(out, a.reshape(6, 64)[:, ::-1].ravel())


def test_3d_grid_and_block_indices(demo):
    nx, ny, nz = 13, 7, 5
    grid, block = (4, 3, 2), (4, 3, 3)
    coords = np.full((nz, ny, nx, 4), -1, np.int32)
    demo.get_function("index_3d")(grid, block, (coords, i32(nx), i32(ny), i32(nz)))
    z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    block_id = (z // block[2] * grid[1] + y // block[1]) * grid[0] + x // block[0]
    np.testing.assert_array_equal(coords, np.stack([x, y, z, block_id], axis=-1))


def test_atomics_and_ballot(demo, rng):
    n = 1000
    bins = rng.integers(0, 10, n).astype(np.int32)
    counts, ballots = np.zeros(10, f32), np.zeros(32, np.uint32)
    demo.get_function("histogram")((4,), (256,), (bins, counts, ballots, i32(n)))
    np.testing.assert_array_equal(counts, np.bincount(bins, minlength=10))
    even = np.zeros(1024, bool)
    even[:n] = bins % 2 == 0
    expected = (even.reshape(32, 32) * (1 << np.arange(32, dtype=np.uint64))).sum(axis=1)
    np.testing.assert_array_equal(ballots, expected.astype(np.uint32))


def test_scalar_arguments_of_each_c_type(demo_fibers):
    out = np.zeros(6)
    args = (out, f32(1.5), np.float64(2.25), np.uint32(7), np.int64(-5), i32(9))
    demo_fibers.get_function("scalars")((1,), (1,), args)
    np.testing.assert_array_equal(out, [1.5, 2.25, 7, -5, 9, 3 + 2.5])


def test_fibers_are_deterministic(demo_fibers, rng):
    x = rng.standard_normal(4096).astype(f32) * 1000
    k = demo_fibers.get_function("atomic_sum")
    totals = []
    for _ in range(3):
        total = np.zeros(1, f32)
        k((16,), (256,), (x, total, i32(x.size)))
        totals.append(total[0])
    assert totals[0] == totals[1] == totals[2]  # bit for bit: same summation order
    assert abs(totals[0] - x.sum(dtype=np.float64)) < 1.0


def test_kernel_signature_is_read_from_the_compiler(demo_fibers):
    k = demo_fibers.get_function("vec_add")
    assert k.param_names == ("a", "b", "out", "n")
    assert [p.ctype for p in k.params] == ["const float*", "const float*", "float*", "int"]


# ---- compile errors -------------------------------------------------------------

@pytest.mark.slow
def test_compile_error_names_the_cu_line():
    with pytest.raises(CudaCpuError, match=r"fixtures/cudacpu/compile_error\.cu:5:\d+: error") as info:
        load("compile_error.cu")
    assert "undeclared_scale" in str(info.value)


# ---- planted bugs ---------------------------------------------------------------

def test_missing_syncthreads_gives_wrong_sums_in_fibers(rng):
    # Thread 0 reads buf[128] before thread 128 wrote it: shared memory is
    # poisoned (NaN) at every block start, so the sum is NaN, never right.
    x = (rng.uniform(1, 2, (8, 1000)) * np.arange(1, 9)[:, None]).astype(f32)
    out = np.zeros(8, f32)
    load("missing_sync.cu").get_function("row_sum_missing_sync")((8,), (256,), (x, out, i32(1000)))
    assert np.isnan(out).all(), out


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fibers", "threads"])
def test_missing_syncthreads_is_a_tsan_data_race(rng, mode):
    x = rng.uniform(1, 2, (2, 300)).astype(f32)
    res = run_in_subprocess((FIX / "missing_sync.cu").read_text(), path=f"{SHOWN}/missing_sync.cu",
                            kernel="row_sum_missing_sync", grid=(2,), block=(256,),
                            args=(x, np.zeros(2, f32), i32(300)), sanitize="thread", mode=mode)
    assert "WARNING: ThreadSanitizer: data race" in res.report
    assert "missing_sync.cu:13" in res.report and "missing_sync.cu:16" in res.report
    with pytest.raises(SanitizerError):
        res.check()


def test_off_by_one_read_is_an_asan_report(rng):
    x = rng.standard_normal(100).astype(f32)
    res = run_in_subprocess((FIX / "off_by_one.cu").read_text(), path=f"{SHOWN}/off_by_one.cu",
                            kernel="forward_diff", grid=(1,), block=(128,),
                            args=(x, np.zeros(100, f32), i32(100)), sanitize="address")
    assert res.returncode != 0 and res.arrays is None
    assert "AddressSanitizer: heap-buffer-overflow" in res.report
    assert "in forward_diff tests/fixtures/cudacpu/off_by_one.cu:7" in res.report
    assert "0 bytes to the right of 400-byte region" in res.report


def test_off_by_one_in_dynamic_shared_memory_is_an_asan_report(rng):
    x = rng.standard_normal(128).astype(f32)
    res = run_in_subprocess((FIX / "off_by_one.cu").read_text(), path=f"{SHOWN}/off_by_one.cu",
                            kernel="shared_forward_diff", grid=(2,), block=(64,),
                            args=(x, np.zeros(128, f32)), shared_mem=64 * 4, sanitize="address")
    assert "AddressSanitizer: use-after-poison" in res.report
    assert "in shared_forward_diff tests/fixtures/cudacpu/off_by_one.cu:18" in res.report


@pytest.mark.parametrize("mode", ["fibers", "threads"])
def test_barrier_in_divergent_branch_is_a_deadlock(mode, rng):
    mod = load("divergent_barrier.cu", mode=mode)
    x = rng.uniform(1, 2, 300).astype(f32)
    y = np.zeros_like(x)
    k = mod.get_function("scale_by_block_max")
    start = time.perf_counter()
    with pytest.raises(BarrierDeadlockError) as info:
        k((3,), (128,), (x, y, i32(300)))  # 300 = 2*128 + 44: the last block diverges
    assert time.perf_counter() - start < 10
    msg = str(info.value)
    assert "'scale_by_block_max'" in msg and "blockIdx (2,0,0)" in msg
    assert "threadIdx.x 0…43 (44 thread): menunggu di __syncthreads(), " \
           "tests/fixtures/cudacpu/divergent_barrier.cu:12" in msg
    assert "threadIdx.x 44…127 (84 thread): sudah keluar" in msg

    with pytest.raises(BarrierDeadlockError, match=r"threadIdx\.x 0…31 .*divergent_barrier\.cu:23"):
        mod.get_function("sync_in_branch")((1,), (64,), (np.zeros(64, f32),))
    with pytest.raises(BarrierDeadlockError, match=r"__shfl_down_sync\(\), .*divergent_barrier\.cu:31"):
        mod.get_function("shuffle_in_branch")((1,), (64,), (np.zeros(64, f32),))

    # the module stays usable; without divergence the kernel is right
    k((2,), (128,), (x, y, i32(256)))
    np.testing.assert_allclose(y[:256], x[:256] / np.repeat(x[:256].reshape(2, 128).max(axis=1), 128))


# ---- correct kernels under the sanitizers: no report ----------------------------

CLEAN_SCRIPT = """
import numpy as np
from atensi.cudacpu import RawModule
mod = RawModule(open({file!r}).read(), path={shown!r})
rng = np.random.default_rng(1)
a, b = rng.standard_normal(300).astype(np.float32), rng.standard_normal(300).astype(np.float32)
out = np.zeros(300, np.float32)
mod.get_function("vec_add")((3,), (128,), (a, b, out, np.int32(300)))
assert np.array_equal(out, a + b)
x = rng.standard_normal((3, 200)).astype(np.float32)
s = np.zeros(3, np.float32)
mod.get_function("row_sum_shared")((3,), (256,), (x, s, np.int32(200)))
assert np.allclose(s, x.sum(1), atol=1e-4)
mx, sm = np.zeros(3, np.float32), np.zeros(3, np.float32)
mod.get_function("row_max_sum_warp")((3,), (64,), (x, mx, sm, np.int32(200)), shared_mem=16)
assert np.array_equal(mx, x.max(1)) and np.allclose(sm, x.sum(1), atol=1e-4)
v = np.arange(128, dtype=np.int32); r = np.zeros_like(v)
mod.get_function("reverse_chunks")((2,), (64,), (v, r), shared_mem=256)
assert np.array_equal(r, v.reshape(2, 64)[:, ::-1].ravel())
print("ok", mod.sanitize, mod.mode)
"""


@pytest.mark.slow
@pytest.mark.parametrize("sanitize, mode", [("address", "fibers"), ("thread", "fibers"), ("thread", "threads")])
def test_correct_kernels_are_clean_under_sanitizers(sanitize, mode):
    script = CLEAN_SCRIPT.format(file=str(FIX / "demo.cu"), shown=f"{SHOWN}/demo.cu")
    res = run_python_in_subprocess(script, sanitize=sanitize, mode=mode)
    res.check()
    assert res.stdout.strip() == f"ok {sanitize} {mode}"


def test_thread_sanitizer_defaults_to_real_threads(monkeypatch):
    from atensi.cudacpu.module import resolve_mode

    monkeypatch.delenv("ATENSI_CUDACPU_SANITIZE", raising=False)
    monkeypatch.delenv("ATENSI_CUDACPU_MODE", raising=False)
    assert resolve_mode(None, "thread") == ("threads", "thread")
    assert resolve_mode("fibers", "thread") == ("fibers", "thread")
    assert resolve_mode(None, None) == ("fibers", None)


def test_asan_subprocess_returns_the_written_arrays(rng):
    a, b = rng.standard_normal(300).astype(f32), rng.standard_normal(300).astype(f32)
    res = run_in_subprocess((FIX / "demo.cu").read_text(), path=f"{SHOWN}/demo.cu", kernel="vec_add",
                            grid=(3,), block=(128,), args=(a, b, np.zeros(300, f32), i32(300)))
    res.check()
    np.testing.assert_array_equal(res.arrays[2], a + b)


def test_sanitized_module_needs_the_preloaded_runtime():
    with pytest.raises(CudaCpuError, match="run_in_subprocess"):
        load("demo.cu", sanitize="address")
    with pytest.raises(ValueError, match="sanitize"):
        load("demo.cu", sanitize="memory")


# ---- argument and launch validation ----------------------------------------------

@pytest.fixture(scope="module")
def vec_add(demo_fibers):
    return demo_fibers.get_function("vec_add")


def test_python_int_is_refused_with_the_cupy_pitfall(vec_add):
    a = np.zeros(8, f32)
    with pytest.raises(TypeError, match=r"'n'.*int Python.*np\.int32\(8\)"):
        vec_add((1,), (8,), (a, a, a, 8))


def test_python_float_and_wrong_numpy_scalar_are_refused(demo_fibers):
    k = demo_fibers.get_function("scalars")
    out = np.zeros(6)
    with pytest.raises(TypeError, match=r"'f'.*float Python.*np\.float32"):
        k((1,), (1,), (out, 1.5, np.float64(1), np.uint32(1), np.int64(1), i32(1)))
    with pytest.raises(TypeError, match=r"'i'.*numpy\.int64.*int.*np\.int32\(i\)"):
        k((1,), (1,), (out, f32(1), np.float64(1), np.uint32(1), np.int64(1), np.int64(1)))


def test_non_contiguous_array_is_refused(vec_add):
    m = np.zeros((8, 8), f32)
    with pytest.raises(ValueError, match=r"'a'.*C-contiguous.*np\.ascontiguousarray\(a\)"):
        vec_add((1,), (8,), (m.T, m, m, i32(64)))


def test_wrong_dtype_and_read_only_output_are_refused(vec_add):
    a = np.zeros(8, f32)
    with pytest.raises(TypeError, match=r"'b'.*float32.*float64.*astype"):
        vec_add((1,), (8,), (a, np.zeros(8), a, i32(8)))
    ro = np.zeros(8, f32)
    ro.flags.writeable = False
    vec_add((1,), (8,), (ro, ro, a, i32(8)))  # const float*: read-only is fine
    with pytest.raises(ValueError, match=r"'out'.*read-only"):
        vec_add((1,), (8,), (a, a, ro, i32(8)))


def test_wrong_argument_count_is_refused(vec_add):
    a = np.zeros(8, f32)
    with pytest.raises(TypeError, match=r"4 parameter \(a, b, out, n\).*3 nilai"):
        vec_add((1,), (8,), (a, a, a))
    with pytest.raises(TypeError, match="tuple"):
        vec_add((1,), (8,), a)


@pytest.mark.parametrize("grid, block, pattern", [
    ((1,), (2048,), r"block\.x = 2048"),
    ((1,), (32, 32, 2), r"2048 thread"),
    ((1,), (1, 1, 65), r"block\.z = 65"),
    ((1, 70000), (32,), r"grid\.y = 70000"),
    ((2**31,), (32,), r"grid\.x = 2147483648"),
    (0, 32, r"grid\.x = 0"),
])
def test_launch_outside_gpu_limits_is_refused(vec_add, grid, block, pattern):
    a = np.zeros(8, f32)
    with pytest.raises(LaunchConfigError, match=pattern):
        vec_add(grid, block, (a, a, a, i32(8)))


def test_dynamic_shared_memory_limit(demo_fibers):
    k = demo_fibers.get_function("reverse_chunks")
    v = np.arange(64, dtype=np.int32)
    with pytest.raises(LaunchConfigError, match="max_dynamic_shared_size_bytes"):
        k((1,), (64,), (v, v.copy()), shared_mem=64 * 1024)
    k.max_dynamic_shared_size_bytes = 64 * 1024
    r = np.zeros_like(v)
    k((1,), (64,), (v, r), shared_mem=64 * 1024)
    np.testing.assert_array_equal(r, v[::-1])
    k.max_dynamic_shared_size_bytes = 48 * 1024


@pytest.mark.slow
def test_unknown_and_non_extern_c_kernels_are_refused(demo_fibers):
    with pytest.raises(CudaCpuError, match=r"'nope' tidak ada.*vec_add"):
        demo_fibers.get_function("nope")
    mod = RawModule("__global__ void plain(float* x) { x[0] = 1.0f; }", path="plain.cu")
    with pytest.raises(CudaCpuError, match=r'extern "C"'):
        mod.get_function("plain")


# ---- cache and timings -----------------------------------------------------------------

@pytest.mark.slow
def test_cache_cold_then_warm(tmp_path, monkeypatch):
    monkeypatch.setenv("ATENSI_CACHE", str(tmp_path))
    code = 'extern "C" __global__ void one(float* x) { x[threadIdx.x] = 1.0f; }'
    results = []

    def build():
        results.append(RawModule(code, path="one.cu"))

    start = time.perf_counter()
    workers = [threading.Thread(target=build) for _ in range(2)]  # two compiles of one key at once
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    cold = time.perf_counter() - start
    start = time.perf_counter()
    warm_mod = RawModule(code, path="one.cu")
    warm = time.perf_counter() - start
    assert len(results) == 2 and not warm_mod.compiled
    assert len(list((tmp_path / "cudacpu").glob("*.so"))) == 1
    assert not list((tmp_path / "cudacpu").glob("*.tmp"))
    x = np.zeros(4, f32)
    warm_mod.get_function("one")((1,), (4,), (x,))
    assert (x == 1).all()
    print(f"\ncompile cold {cold:.2f} s (2 at once), cached {warm * 1000:.1f} ms")


# 65.536 threads take tens of milliseconds on a quiet core; the limit only
# catches a launch that went pathological (a fiber switch per thread gone slow),
# with room for a machine shared by several test runs.
LAUNCH_LIMIT_S = 5.0


def test_256_blocks_of_256_threads_launch_within_seconds_with_and_without_barriers(demo_fibers, rng):
    n = 256 * 256
    a = rng.standard_normal(n).astype(f32)
    out = np.zeros(n, f32)
    k = demo_fibers.get_function("vec_add")
    k((256,), (256,), (a, a, out, i32(n)))
    start = time.perf_counter()
    k((256,), (256,), (a, a, out, i32(n)))
    plain = time.perf_counter() - start
    x = rng.standard_normal((256, 256)).astype(f32)
    sums = np.zeros(256, f32)
    start = time.perf_counter()
    demo_fibers.get_function("row_sum_shared")((256,), (256,), (x, sums, i32(256)))
    barriers = time.perf_counter() - start  # 9 __syncthreads per block
    print(f"\n256x256 threads, fibers: no barrier {plain * 1000:.1f} ms, 9 barriers {barriers * 1000:.1f} ms")
    np.testing.assert_array_equal(out, a + a)
    np.testing.assert_allclose(sums, x.sum(axis=1), rtol=1e-5, atol=1e-4)
    assert plain < LAUNCH_LIMIT_S and barriers < LAUNCH_LIMIT_S, (plain, barriers)


# ---- source forms the loader must understand -------------------------------------------

FORMS = r'''
#include <cstdint>
extern __shared__ float g_smem[];          // file scope: all kernels share it, as in CUDA
// __global__ void commented_out(float* x) {}
/* extern "C" __global__ void also_commented(float* x) {} */
template <int N> __global__ void templated(float* x) { x[0] = N; }

__device__ void block_sum(float* s) {   // a barrier inside a __device__ function
    static __shared__ float partial[32][33];
    partial[threadIdx.x % 32][threadIdx.x / 32] = s[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0) {
        float acc = 0.0f;
        for (int i = 0; i < 32; ++i)
            for (int j = 0; j < (int)blockDim.x / 32; ++j) acc += partial[i][j];
        s[0] = acc;
    }
    __syncthreads();
}

extern "C" {
__global__ void __launch_bounds__(128) transpose_sum(const float* in, float* out)
{
    g_smem[threadIdx.x] = in[blockIdx.x * blockDim.x + threadIdx.x];
    __syncthreads();
    block_sum(g_smem);
    if (threadIdx.x == 0) out[blockIdx.x] = g_smem[0];
}
}
'''


@pytest.mark.slow
def test_source_forms():
    mod = RawModule(FORMS, path="forms.cu")
    assert mod.kernel_names == ("transpose_sum",)  # comments and templates are not kernels
    k = mod.get_function("transpose_sum")
    x = np.arange(3 * 128, dtype=f32)
    out = np.zeros(3, f32)
    k((3,), (128,), (x, out), shared_mem=128 * 4)
    np.testing.assert_array_equal(out, x.reshape(3, 128).sum(axis=1))


ALIGNED_SHARED = r'''extern "C" __global__ void aligned(float* out) {
    __shared__ __align__(32) float a[64];        // both orders are CUDA
    __align__(32) __shared__ float b[64];
    static __shared__ alignas(16) float c[8], d[8];
    __shared__
        __align__(64) float e[4];
    a[threadIdx.x] = b[threadIdx.x] = 1.0f;
    if (threadIdx.x < 8) c[threadIdx.x] = d[threadIdx.x] = 1.0f;
    if (threadIdx.x < 4) e[threadIdx.x] = 1.0f;
    __syncthreads();
    const unsigned long long off = (unsigned long long)a % 32 + (unsigned long long)b % 32
        + (unsigned long long)c % 16 + (unsigned long long)d % 16 + (unsigned long long)e % 64;
    out[threadIdx.x] = off ? -1.0f : a[threadIdx.x] + b[threadIdx.x] + c[threadIdx.x % 8]
        + d[threadIdx.x % 8] + e[threadIdx.x % 4];
    if (threadIdx.x == 0) out[64] = __LINE__;  // line 15: the .cu lines are kept
}
'''


def test_alignment_before_or_after_shared():
    mod = RawModule(ALIGNED_SHARED, path="aligned.cu")
    out = np.zeros(65, f32)
    mod.get_function("aligned")((2,), (64,), (out,))
    assert (out[:64] == 5).all(), out  # every array aligned as declared, and written
    assert out[64] == 15


def _nvrtc():
    """CuPy's NVRTC wrapper with the pip wheel's libnvrtc loaded (no GPU needed), or skip."""
    from atensi.cuda_wheels import preload

    try:
        from cupy.cuda import nvrtc
    except ImportError as exc:
        pytest.skip(f"NVRTC tidak tersedia: {exc}")
    preload()
    return nvrtc


@pytest.mark.parametrize("name", ["demo.cu", "missing_sync.cu", "off_by_one.cu", "divergent_barrier.cu"])
def test_fixtures_are_real_cuda(name):
    """NVRTC (the compiler CuPy uses) accepts each fixture as it is."""
    nvrtc = _nvrtc()
    prog = nvrtc.createProgram((FIX / name).read_text(), f"{SHOWN}/{name}", [], [])
    try:
        nvrtc.compileProgram(prog, ["-arch=sm_80"])
    except Exception:  # noqa: BLE001 - show NVRTC's own log
        pytest.fail(nvrtc.getProgramLog(prog))
