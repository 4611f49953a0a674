"""atensi.cudacpu fails where a GPU would.

Each gap has a planted-bug fixture in tests/fixtures/cudacpu/gap_*.cu that the
emulator used to run without complaint (the fixture's header says what it
did before) and now catches:

* static ``__shared__`` memory is poisoned (0xff bytes, NaN) at every block
  start: a read of an element the block never wrote, or of what an earlier
  block left, gives NaN;
* ``__launch_bounds__(N)`` is honoured: a bigger block is refused;
* a warp function in a partial warp whose mask names lanes that do not exist,
  or that reads from such a lane, is an error;
* a ``float4`` load or store at an address that is not a multiple of 16 is an
  error;
* under ThreadSanitizer only ``__syncwarp`` / ``__syncthreads`` order memory,
  shuffles and votes do not;
* ``mode="shuffle"`` runs the threads in a seeded random order between
  barriers, which exposes code that assumes lockstep;
* ``options=("-ffp-contract=fast",)`` rounds a * b + c like the GPU (one FMA);
* one AddressSanitizer run of the fused d128 kernel at a ragged shape.
"""

from pathlib import Path

import numpy as np
import pytest

from atensi import kernels, reference
from atensi.kernels import registry
from atensi.cudacpu import CudaCpuError, LaunchConfigError, RawModule, build, run_in_subprocess

FIX = Path(__file__).parent / "fixtures" / "cudacpu"
SHOWN = "tests/fixtures/cudacpu"
i32, f32 = np.int32, np.float32


def load(name: str, **kw) -> RawModule:
    return RawModule((FIX / name).read_text(), path=f"{SHOWN}/{name}", **kw)


# ---- static __shared__: poisoned at every block start ----------------------------

@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fibers", "threads"])
def test_unwritten_shared_memory_reads_as_nan(mode):
    mod = load("gap_shared_poison.cu", mode=mode)
    x = (np.arange(3 * 200) % 7).astype(f32).reshape(3, 200)
    out = np.zeros(3, f32)
    mod.get_function("row_sum_unwritten")((3,), (256,), (x, out, i32(200)))
    assert np.isnan(out).all(), out  # before: the exact row sums (zero-filled buf)
    out = np.zeros(256, f32)
    mod.get_function("table_from_block_zero")((4,), (64,), (out,))
    np.testing.assert_array_equal(out[:64], 2.0 * np.arange(64))  # block 0 wrote it
    assert np.isnan(out[64:]).all()  # before: block 0's table, carried over
    out = np.zeros(256, f32)
    mod.get_function("dynamic_table_from_block_zero")((4,), (64,), (out,), shared_mem=64 * 4)
    np.testing.assert_array_equal(out[:64], 2.0 * np.arange(64))
    assert np.isnan(out[64:]).all()  # before: carried over (filled once per launch)


# ---- __launch_bounds__ ----------------------------------------------------------

@pytest.mark.slow
def test_launch_bounds_refuse_a_bigger_block():
    k = load("gap_launch_bounds.cu").get_function("scale_bounded")
    assert k.max_threads_per_block == 128
    x = np.ones(512, f32)
    k((4,), (128,), (x, i32(512)))
    np.testing.assert_array_equal(x, 2.0)
    with pytest.raises(LaunchConfigError) as err:
        k((2,), (256,), (x, i32(512)))  # before: ran, x doubled again
    msg = str(err.value)
    assert "scale_bounded" in msg and "__launch_bounds__(128)" in msg
    assert "cudaErrorLaunchOutOfResources" in msg
    np.testing.assert_array_equal(x, 2.0)  # refused before any work


@pytest.mark.slow
def test_launch_bounds_of_the_real_kernels_are_read():
    mod = RawModule(path=kernels.kernel_path("attention_fused.cu"))
    assert mod.get_function("attention_fused_d64").max_threads_per_block == \
        kernels.registry.get("attention_fused_d64").threads


# ---- warp functions in a partial warp ----------------------------------------------

@pytest.mark.slow
def test_full_mask_in_a_partial_warp_is_an_error():
    k = load("gap_partial_warp.cu").get_function("warp_sum_full_mask")
    with pytest.raises(CudaCpuError, match=r"gap_partial_warp\.cu:10.*thread 32.*0xffffffff.*16 lane"):
        k((1,), (48,), (np.ones(48, f32), np.zeros(2, f32)))  # before: [32, 32], silently wrong


def test_reading_a_lane_that_does_not_exist_is_an_error():
    k = load("gap_partial_warp.cu").get_function("warp_sum_missing_lane")
    with pytest.raises(CudaCpuError, match=r"gap_partial_warp\.cu:19.*lane 4 membaca dari lane 12"):
        k((1,), (12,), (np.ones(12, f32), np.zeros(1, f32)))  # before: 16, silently wrong
    out = np.zeros(1, f32)
    k((1,), (32,), (np.ones(32, f32), out))  # a whole warp: every lane exists
    assert out[0] == 16.0


# ---- misaligned vector access --------------------------------------------------

@pytest.mark.slow
def test_misaligned_float4_load_and_store_are_errors():
    mod = load("gap_misaligned.cu")
    x = np.arange(4 * 64 + 8, dtype=f32)
    out = np.zeros(4 * 64 + 8, f32)
    with pytest.raises(CudaCpuError, match=r"(?s)gap_misaligned\.cu:7.*float4 dibaca.*kelipatan 16.*"
                                           r"cudaErrorMisalignedAddress"):
        mod.get_function("copy4_skip_first")((1,), (64,), (x, out, i32(64)))  # before: segfault
    mod.get_function("copy4_aligned")((1,), (64,), (x, out, i32(64)))
    np.testing.assert_array_equal(out[:256], x[:256])
    with pytest.raises(CudaCpuError, match=r"store4_misaligned.*float4 ditulis ke"):
        mod.get_function("store4_misaligned")((1,), (64,), (x, out, i32(64)))


# ---- memory ordering under ThreadSanitizer ---------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fibers", "threads"])
def test_a_shuffle_does_not_order_shared_memory(mode):
    code = (FIX / "gap_warp_order.cu").read_text()
    x = np.arange(32, dtype=f32)
    kw = dict(path=f"{SHOWN}/gap_warp_order.cu", grid=(1,), block=(32,), sanitize="thread", mode=mode)
    racy = run_in_subprocess(code, kernel="neighbour_after_shuffle", args=(x, np.zeros(32, f32)), **kw)
    assert "data race" in racy.report, racy.stderr[-2000:]  # before: clean
    assert "gap_warp_order.cu:13" in racy.report  # the read of s[lane ^ 1]
    fixed = run_in_subprocess(code, kernel="neighbour_after_syncwarp", args=(x, np.zeros(32, f32)), **kw)
    fixed.check()
    np.testing.assert_array_equal(fixed.arrays[1], x[np.arange(32) ^ 1])


# ---- schedule shuffling ---------------------------------------------------------

@pytest.mark.slow
def test_shuffle_mode_exposes_code_that_assumes_lockstep():
    x = np.arange(1, 33, dtype=f32)
    right = x + np.r_[0, x[:-1]]
    out = np.zeros(32, f32)
    load("gap_lockstep.cu").get_function("prefix_pair_lockstep")((1,), (32,), (x, out))
    np.testing.assert_array_equal(out, right)  # fixed order: lane - 1 always ran first

    def shuffled(seed):
        res = np.zeros(32, f32)
        load("gap_lockstep.cu", mode="shuffle", seed=seed).get_function("prefix_pair_lockstep")(
            (1,), (32,), (x, res))
        return res

    first = shuffled(1)
    assert np.isnan(first).any(), first  # some lane read s[lane - 1] before it was written
    np.testing.assert_array_equal(shuffled(1), first)  # the same seed, the same order
    assert not np.array_equal(np.isnan(shuffled(2)), np.isnan(first))


@pytest.mark.slow
def test_correct_kernels_pass_in_shuffle_mode():
    demo = load("demo.cu", mode="shuffle", seed=7)
    rng = np.random.default_rng(12)
    x = rng.standard_normal((5, 300)).astype(f32)
    sums = np.zeros(5, f32)
    demo.get_function("row_sum_shared")((5,), (256,), (x, sums, i32(300)))
    np.testing.assert_allclose(sums, x.sum(axis=1), rtol=1e-5, atol=1e-4)
    mx, sm = np.zeros(5, f32), np.zeros(5, f32)
    demo.get_function("row_max_sum_warp")((5,), (64,), (x, mx, sm, i32(300)), shared_mem=16)
    np.testing.assert_array_equal(mx, x.max(axis=1))
    with pytest.raises(ValueError, match="shuffle"):
        RawModule("", mode="acak")


# ---- floating point: FMA contraction ---------------------------------------------

@pytest.mark.slow
def test_fp_contract_fast_rounds_like_a_gpu_fma():
    a = np.full(4, 1 + 2.0**-12, f32)
    c = np.full(4, -1.0, f32)
    two_roundings = (a * a) + c  # float32 product rounded, then the sum: 2^-11
    one_rounding = (a.astype(np.float64) ** 2 + c).astype(f32)  # exact here: 2^-11 + 2^-24
    assert two_roundings[0] != one_rounding[0]
    out = np.zeros(4, f32)
    load("gap_fma.cu").get_function("mul_add")((1,), (32,), (a, a, c, out, i32(4)))
    np.testing.assert_array_equal(out, two_roundings)  # g++'s default: no contraction
    if not build.cpu_has_fma():
        pytest.skip("CPU ini tidak punya instruksi FMA")
    out = np.zeros(4, f32)
    load("gap_fma.cu", options=("-ffp-contract=fast",)).get_function("mul_add")(
        (1,), (32,), (a, a, c, out, i32(4)))
    np.testing.assert_array_equal(out, one_rounding)  # like the GPU's default --fmad=true


# ---- AddressSanitizer at a ragged shape -------------------------------------------

@pytest.mark.slow
def test_fused_d128_under_address_sanitizer_at_a_ragged_shape():
    """T = 70 (not a multiple of the 32 query rows or the key tile), d_k = 65
    (the d128 variant, 63 unused columns), two heads: every argument array is
    an exactly-sized heap buffer, so any read past a head's rows is reported."""
    H, T, d_k = 2, 70, 65
    rng = np.random.default_rng(70)
    Q, K, V = (rng.standard_normal((H, T, d_k), dtype=f32) for _ in range(3))
    rows = kernels.registry.get("attention_fused_d128").rows
    args = (Q, K, V, np.zeros_like(Q), i32(T), i32(d_k), i32(H), f32(1) / np.sqrt(f32(d_k)), i32(1))
    res = run_in_subprocess(path=str(kernels.kernel_path("attention_fused.cu")),
                            kernel="attention_fused_d128", grid=(-(-T // rows), H, 1),
                            block=kernels.registry.get("attention_fused_d128").block, args=args, sanitize="address",
                            timeout=600).check()
    ref = reference.attention(*(m.astype(np.float64) for m in (Q, K, V)))
    np.testing.assert_allclose(res.arrays[3], ref, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(p.name for p in FIX.glob("gap_*.cu")))
def test_gap_fixtures_are_real_cuda(name):
    """NVRTC (the compiler CuPy uses) accepts each planted bug as it is."""
    try:
        from cupy.cuda import nvrtc

        from atensi.cuda_wheels import preload
    except ImportError as exc:
        pytest.skip(f"NVRTC tidak tersedia: {exc}")
    preload()
    prog = nvrtc.createProgram((FIX / name).read_text(), f"{SHOWN}/{name}", [], [])
    try:
        nvrtc.compileProgram(prog, ["-arch=sm_80"])
    except Exception:  # noqa: BLE001 - show NVRTC's own log
        pytest.fail(nvrtc.getProgramLog(prog))


# ---- cp.async: a copy is in flight until a wait_group completes its group ----------

def _pipelined(*defines):
    k = load("gap_cp_async.cu", options=tuple(f"-D{d}" for d in defines)).get_function("pipelined_tiles")
    x = np.random.default_rng(21).standard_normal(5 * 32).astype(f32)
    out = np.zeros_like(x)
    k((1,), (32,), (x, out, i32(5)))
    want = 2.0 * np.roll(x.reshape(5, 32), -1, axis=1).ravel()
    return out.reshape(5, 32), want.reshape(5, 32)


@pytest.mark.slow
def test_cp_async_pipeline_that_waits_right_is_exact():
    out, want = _pipelined()
    np.testing.assert_array_equal(out, want)


@pytest.mark.slow
@pytest.mark.parametrize("bug", ["BUG_WAIT", "BUG_NO_COMMIT"])
def test_cp_async_read_of_a_stage_in_flight_is_nan(bug):
    out, want = _pipelined(bug, "AS_BEFORE")
    np.testing.assert_array_equal(out, want)  # before: the synchronous copies hid the bug
    out, want = _pipelined(bug)
    assert np.isnan(out).any(), out  # a tile was read while its copy was still in flight
    if bug == "BUG_WAIT":
        np.testing.assert_array_equal(out[:4], want[:4])  # only the last wait is wrong
        assert np.isnan(out[4]).all(), out[4]


@pytest.mark.slow
def test_cp_async_misuse_names_the_line():
    code = ('extern "C" __global__ void k(const float* x, float* out) {\n'
            '    __shared__ float s[32];\n'
            '    cudacpu_cp_async(&s[threadIdx.x], x + threadIdx.x, 12, 12);\n'
            '    out[threadIdx.x] = s[threadIdx.x];\n}\n')
    k = RawModule(code, path="probe/cp_async.cu").get_function("k")
    with pytest.raises(CudaCpuError, match=r"cp\.async.*probe/cp_async\.cu:3.*12 byte"):
        k((1,), (32,), (np.zeros(32, f32), np.zeros(32, f32)))


@pytest.mark.slow
def test_fused_v2_pipeline_runs_on_the_cpu():
    """The real v2 kernel with its last wait_group 0 turned into wait_group 1 reads NaN."""
    text = kernels.kernel_path("attention_fused.cu").read_text()
    assert text.count("fv2_wait(next);") == 1
    rng = np.random.default_rng(7)
    T, d = 96, 64  # three key tiles of 32
    Q, K, V = (rng.standard_normal((1, T, d)).astype(f32) for _ in range(3))
    want = reference.attention(Q.astype(np.float64), K.astype(np.float64), V.astype(np.float64), causal=False)
    for code, broken in ((text, False), (text.replace("fv2_wait(next);", "fv2_wait(true);"), True)):
        k = RawModule(code, path="kernels/attention_fused.cu").get_function("attention_fused_v2_d64")
        smem = registry.get("attention_fused_v2_d64").dynamic_shared  # Qs, Ks, Vs, Ps: extern
        k.max_dynamic_shared_size_bytes = smem
        O = np.zeros_like(Q)
        k((2, 1, 1), (128,), (Q, K, V, O, i32(T), i32(d), i32(1), f32(d ** -0.5), i32(0), i32(1)),
          shared_mem=smem)
        if broken:
            assert np.isnan(O).all()  # the last key tile was still in flight for every row
        else:
            np.testing.assert_allclose(O, want, atol=2e-5)


# ---- alignment of every access (UndefinedBehaviorSanitizer) ---------------------------

@pytest.mark.parametrize("name, line, what", [("pair_sum_cast", 10, "long long unsigned int"),
                                              ("first_of_four_by_reference", 18, "float4")])
@pytest.mark.slow
def test_misaligned_scalar_or_reference_access_is_an_error(name, line, what):
    x = np.arange(64, dtype=f32)
    out = np.zeros(8, f32)
    before = load("gap_misaligned_access.cu")
    before.get_function(name)((1,), (8,), (x, out, i32(8)))
    assert np.isfinite(out).all()  # default build, as before: the bytes are read, no error
    checked = ("-fsanitize=alignment",)  # what every sanitizer build has
    k = load("gap_misaligned_access.cu", options=checked).get_function(name)
    with pytest.raises(CudaCpuError) as err:
        k((1,), (8,), (x, out, i32(8)))
    msg = str(err.value)
    assert f"gap_misaligned_access.cu:{line}" in msg and what in msg, msg
    assert "cudaErrorMisalignedAddress" in msg and "threadIdx (0,0,0)" in msg
    ok = load("gap_misaligned_access.cu", options=checked).get_function("first_of_four_aligned")
    ok((1,), (8,), (x, out, i32(8)))
    np.testing.assert_array_equal(out, x[0::4][:8] + x[3::4][:8])


@pytest.mark.slow
def test_every_sanitizer_run_checks_alignment():
    code = (FIX / "gap_misaligned_access.cu").read_text()
    x = np.arange(64, dtype=f32)
    for sanitize in ("address", "thread"):
        with pytest.raises(CudaCpuError, match=r"gap_misaligned_access\.cu:10.*cudaErrorMisalignedAddress"):
            run_in_subprocess(code, path=f"{SHOWN}/gap_misaligned_access.cu", kernel="pair_sum_cast",
                              grid=(1,), block=(8,), args=(x, np.zeros(8, f32), i32(8)),
                              sanitize=sanitize, mode="fibers")


# ---- block order: permuted in shuffle mode, no edge between blocks under TSan ---------

def _last_block_sum(kernel, **kw):
    x = (np.arange(8 * 64) % 5).astype(f32)
    partial, out = np.zeros(8, f32), np.zeros(1, f32)
    args = (x, partial, out, i32(x.size)) + ((np.zeros(1, np.uint32),) if kernel == "sum_by_ticket" else ())
    load("gap_block_order.cu", **kw).get_function(kernel)((8,), (64,), args)
    return float(out[0]), float(x.sum())


@pytest.mark.slow
def test_a_last_block_combine_fails_in_permuted_block_order():
    got, want = _last_block_sum("sum_by_last_block")
    assert got == want  # index order (fibers, as before): looks right
    shuffled = [_last_block_sum("sum_by_last_block", mode="shuffle", seed=s)[0] for s in range(4)]
    assert any(v != want for v in shuffled), shuffled  # some seed runs block 7 before others
    assert shuffled == [_last_block_sum("sum_by_last_block", mode="shuffle", seed=s)[0] for s in range(4)]
    for s in range(4):  # the atomic ticket is right in every order
        assert _last_block_sum("sum_by_ticket", mode="shuffle", seed=s) == (want, want)


@pytest.mark.slow
def test_thread_sanitizer_has_no_edge_between_blocks():
    code = (FIX / "gap_block_order.cu").read_text()
    x = (np.arange(8 * 64) % 5).astype(f32)
    kw = dict(path=f"{SHOWN}/gap_block_order.cu", grid=(8,), block=(64,), sanitize="thread", mode="fibers")
    racy = run_in_subprocess(code, kernel="sum_by_last_block",
                             args=(x, np.zeros(8, f32), np.zeros(1, f32), i32(x.size)), **kw)
    assert "data race" in racy.report, racy.stderr[-2000:]  # before: block b-1 happened before block b
    assert "gap_block_order.cu:19" in racy.report  # the read of partial[b]
    fixed = run_in_subprocess(code, kernel="sum_by_ticket", args=(x, np.zeros(8, f32), np.zeros(1, f32),
                                                                  i32(x.size), np.zeros(1, np.uint32)), **kw)
    fixed.check()
    assert fixed.arrays[2][0] == x.sum()


_SPLIT_RUN = """
import numpy as np
from atensi import kernels, reference
rng = np.random.default_rng(5)
Q, K, V = (rng.standard_normal((2, 70, 64)).astype(np.float32) for _ in range(3))
O = kernels.attention(Q, K, V, impl="fused-v2", splits=3, backend="cpu")
ref = reference.attention(*(x.astype(np.float64) for x in (Q, K, V)), causal=True)
assert np.isfinite(O).all() and float(np.abs(O - ref).max()) < 1e-5, float(np.abs(O - ref).max())
print("split-K ok")
"""


@pytest.mark.slow
def test_split_k_and_combine_in_permuted_block_order():
    import os
    import subprocess
    import sys
    for seed in ("1", "2"):
        env = dict(os.environ, ATENSI_CUDACPU_MODE="shuffle", ATENSI_CUDACPU_SEED=seed)
        proc = subprocess.run([sys.executable, "-c", _SPLIT_RUN], env=env, capture_output=True, text=True,
                              timeout=600, check=False)
        assert proc.returncode == 0 and "split-K ok" in proc.stdout, proc.stderr[-3000:]


@pytest.mark.slow
def test_split_k_and_combine_under_thread_sanitizer_without_block_edges():
    from atensi.cudacpu import run_python_in_subprocess
    res = run_python_in_subprocess(_SPLIT_RUN, sanitize="thread", mode="fibers", timeout=600)
    res.check()
    assert "split-K ok" in res.stdout


# ---- every kernel file runs under ThreadSanitizer in the test suite -------------------

_FUSED_ALL = """
import numpy as np
from atensi import kernels, reference
rng = np.random.default_rng(11)
for d in (16, 64, 100):  # d32, d64, d128 (ragged)
    Q, K, V = (rng.standard_normal((2, 70, d)).astype(np.float32) for _ in range(3))
    ref = reference.attention(*(x.astype(np.float64) for x in (Q, K, V)), causal=True)
    for version in ("fused-v1", "fused-v2"):
        O = kernels.attention(Q, K, V, impl=version, backend="cpu")
        err = float(np.abs(O - ref).max())
        assert np.isfinite(O).all() and err < 1e-5, (d, version, err)
print("fused ok")
"""


@pytest.mark.slow
def test_fused_kernels_under_thread_sanitizer():
    from atensi.cudacpu import run_python_in_subprocess
    res = run_python_in_subprocess(_FUSED_ALL, sanitize="thread", mode="fibers", timeout=900)
    res.check()
    assert "fused ok" in res.stdout


# ---- per-launch resource limits from the ptxas report ---------------------------------

def _nvrtc_or_skip():
    from atensi.cudacpu import resources
    if resources._nvrtc() is None:
        pytest.skip("NVRTC tidak terpasang (cupy + nvidia-cuda-nvrtc)")
    return resources


@pytest.mark.slow
def test_too_many_registers_for_the_block_is_refused(monkeypatch):
    resources = _nvrtc_or_skip()
    x = np.arange(4096, dtype=f32)
    mod = load("gap_resources.cu")
    assert mod.kernel_uses()["many_registers"].registers > 64  # 1024 threads need more than 64K
    k = mod.get_function("many_registers")
    k((8,), (512,), (x, np.zeros(4096, f32), i32(4096)))  # 512 threads fit
    with pytest.raises(LaunchConfigError) as err:
        k((4,), (1024,), (x, np.zeros(4096, f32), i32(4096)))
    msg = str(err.value)
    assert "many_registers" in msg and "register" in msg and "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES" in msg
    monkeypatch.setattr(resources, "_nvrtc", lambda: None)  # before: no ptxas report, the launch ran
    load("gap_resources.cu").get_function("many_registers")((4,), (1024,), (x, np.zeros(4096, f32), i32(4096)))


def test_shared_memory_over_the_arch_limit_is_refused():
    _nvrtc_or_skip()
    out = np.zeros(64, f32)
    for arch, fits, too_much in (("sm_90", 180 * 1024, 190 * 1024), ("sm_80", 120 * 1024, 130 * 1024)):
        k = load("gap_resources.cu", options=(f"-arch={arch}",)).get_function("big_shared")
        k.max_dynamic_shared_size_bytes = too_much
        k((1,), (64,), (out, i32(64)), shared_mem=fits)
        np.testing.assert_array_equal(out, 3.0)
        with pytest.raises(LaunchConfigError, match=rf"(?s)big_shared.*40960 byte.*{arch}.*CUDA_ERROR_INVALID_VALUE"):
            k((1,), (64,), (out, i32(64)), shared_mem=too_much)


def test_only_launches_that_could_be_refused_need_the_report():
    from atensi.cudacpu import resources
    assert not resources.could_be_refused(256, 0, "sm_90")  # 255 registers × 256 threads = 64K
    assert resources.could_be_refused(288, 0, "sm_90")
    assert not resources.could_be_refused(128, 179 * 1024, "sm_90")  # + 48 KiB static = 227 KiB
    assert resources.could_be_refused(128, 180 * 1024, "sm_90")
    assert resources.could_be_refused(128, 120 * 1024, "sm_80")


def test_dynamic_shared_memory_above_48_kib_needs_the_opt_in():
    k = load("gap_resources.cu").get_function("big_shared")
    with pytest.raises(LaunchConfigError, match="max_dynamic_shared_size_bytes"):
        k((1,), (64,), (np.zeros(64, f32), i32(64)), shared_mem=64 * 1024)


# ---- grid-stride row loops near 2^31 -----------------------------------------------------

# gridDim.x as the launcher sets it for 2^31 - 1 rows or more; only blocks 0 and 1 run.
_HUGE_GRID = "#undef gridDim\n#define gridDim (::dim3(2147483647u))\n"


@pytest.mark.parametrize("file, kernel, args", [
    *((k.file, k.name, "S, out, rows, n") for k in registry.KERNELS if k.step == "softmax"),
    ("attention_backward.cu", "softmax_backward_v1", "S, S, out, rows, n"),
    ("attention_backward.cu", "attention_weights_from_lse_v1", "S, L, out, rows, n"),
])
@pytest.mark.slow
def test_row_loops_do_not_overflow_near_2_to_31_blocks(file, kernel, args):
    text = kernels.kernel_path(file).read_text()
    n, rows = 8, 4
    S = np.random.default_rng(3).standard_normal((rows, n)).astype(f32)
    env = {"S": S, "L": np.zeros(rows, f32), "out": np.zeros((rows, n), f32), "rows": i32(rows), "n": i32(n)}
    names = [a.strip() for a in args.split(",")]
    call = tuple(env[a] for a in names)
    for code, overflows in ((text.replace("size_t r = blockIdx.x; r < (size_t)rows", "int r = blockIdx.x; r < rows"),
                             True), (text, False)):
        res = run_in_subprocess(_HUGE_GRID + code, path=f"kernels/{file}", kernel=kernel, grid=(2,), block=(32,),
                                args=call, sanitize="address")
        if overflows:  # the old int loop: block 1 steps to row -2^31 and reads before S
            assert "AddressSanitizer" in res.report, res.stderr[-2000:]
        else:
            res.check()
            out = res.arrays[names.index("out")]
            assert np.isfinite(out[:2]).all() and (out[:2] != 0).any()
            np.testing.assert_array_equal(out[2:], 0.0)  # rows 2, 3 belong to blocks that never ran


# ---- writes past an array's ends: guard bytes in the modes without a sanitizer ------------

OOB = "gap_out_of_bounds_write.cu"


def _causal_mask_off_by_one_args(T=100, H=2):
    S = np.random.default_rng(3).standard_normal((H, T, T)).astype(f32)
    grid = (-(-T // 16), -(-T // 16), H)  # more than T rows and columns: row T runs
    return grid, (S, np.zeros_like(S), i32(H), i32(T))


def test_write_past_the_end_is_an_error_not_a_crash_of_the_process(tmp_path):
    """The launch runs in a child: before the guards it aborted the interpreter."""
    import subprocess
    import sys

    script = f"""
import numpy as np
from atensi.cudacpu import RawModule
from atensi.cudacpu.errors import OutOfBoundsWriteError
mod = RawModule(path={str(FIX / OOB)!r})
k = mod.get_function("causal_mask_off_by_one")
T, H = 100, 2
S = np.random.default_rng(3).standard_normal((H, T, T)).astype(np.float32)
for _ in range(3):
    try:
        k((7, 7, H), (16, 16), (S, np.zeros_like(S), np.int32(H), np.int32(T)))
    except OutOfBoundsWriteError as err:
        print(err)
import gc; gc.collect()
print([np.ones(1000).sum() for _ in range(200)][-1])
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 4 and lines[-1] == "1000.0", proc.stdout
    assert "argumen ke-2 ('out', 80000 bita)" in lines[0] and "sesudah akhirnya" in lines[0]
    assert 'jalankan lagi dengan sanitize="address" untuk baris .cu-nya' in lines[0]


@pytest.mark.parametrize("mode", ["fibers", "shuffle"])
def test_write_past_the_end_names_the_argument_and_keeps_what_was_in_bounds(mode):
    from atensi.cudacpu.errors import OutOfBoundsWriteError

    k = load(OOB, mode=mode).get_function("causal_mask_off_by_one")
    grid, args = _causal_mask_off_by_one_args()
    with pytest.raises(OutOfBoundsWriteError) as info:
        k(grid, (16, 16), args)
    msg = str(info.value)
    assert "Kernel 'causal_mask_off_by_one' (tests/fixtures/cudacpu/gap_out_of_bounds_write.cu)" in msg
    assert "argumen ke-2 ('out', 80000 bita) sampai 404 bita sesudah akhirnya" in msg  # T + 1 floats
    assert "'S'" not in msg and "sebelum" not in msg
    S, out = args[0], args[1]
    # What the kernel wrote within bounds is back in the array: the diagonal is S's
    # (but for [0, 0], which the stray writes of the head before also reach), and
    # in head 0 (where no stray write lands above the diagonal) everything above it -inf.
    np.testing.assert_array_equal(np.diagonal(out, axis1=1, axis2=2)[:, 1:],
                                  np.diagonal(S, axis1=1, axis2=2)[:, 1:])
    assert (out[0][np.triu_indices(100, 1)] == -np.inf).all()


def test_write_before_the_start_is_named_as_before():
    from atensi.cudacpu.errors import OutOfBoundsWriteError

    k = load(OOB).get_function("shift_left_before_start")
    x, y = np.arange(1, 9, dtype=f32), np.zeros(8, f32)
    with pytest.raises(OutOfBoundsWriteError, match=r"argumen ke-2 \('y', 32 bita\) sampai 4 bita "
                                                    r"sebelum awalnya"):
        k((1,), (8,), (x, y, i32(8)))
    np.testing.assert_array_equal(y[:7], x[1:])


def test_arrays_that_share_memory_alias_in_the_guarded_copy():
    """Two views of one buffer see each other's writes, as on a GPU: fibers run the
    threads of this block in order, so thread i reads what thread i - 2 wrote."""
    k = load(OOB).get_function("add_from")
    buf = np.arange(10, dtype=f32)
    k((1,), (8,), (buf[:8], buf[2:], i32(8)))
    expect = np.arange(10, dtype=f32)
    for i in range(8):
        expect[i + 2] += expect[i]
    np.testing.assert_array_equal(buf, expect)
    same = np.arange(4, dtype=f32)
    k((1,), (4,), (same, same, i32(4)))
    np.testing.assert_array_equal(same, 2 * np.arange(4))


def test_the_guarded_copy_keeps_the_alignment_of_the_array():
    k = load(OOB).get_function("address_mod_256")
    base = np.zeros(300, f32)
    for offset in (0, 1, 3, 16):
        out = np.zeros(1, np.uint32)
        k((1,), (1,), (base[offset:], out))
        assert out[0] == base[offset:].ctypes.data % 256, offset


@pytest.mark.slow
def test_address_sanitizer_names_the_line_the_guard_message_points_to():
    grid, args = _causal_mask_off_by_one_args(T=20, H=1)
    res = run_in_subprocess((FIX / OOB).read_text(), path=f"{SHOWN}/{OOB}", kernel="causal_mask_off_by_one",
                            grid=grid, block=(16, 16), args=args, sanitize="address")
    assert f"{SHOWN}/{OOB}:17" in res.report, res.report[-3000:]
