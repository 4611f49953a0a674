"""The support matrix: which GPU runs which kernel, as the registry declares it.

Three views must agree: NVRTC (a file compiles for an architecture exactly when
every kernel in it has what it needs there, and ptxas reports the shared memory
the registry declares), the launchers (a kernel the GPU cannot run is refused
before any launch, by name, GPU, what is missing and what to use instead), and
the emulator under ``ATENSI_ARCH`` (the same refusal without a GPU; the public
functions then say so in one line and run on the CPU).
"""

from __future__ import annotations

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import hardware, kernels, reference
from atensi.kernels import api, launch, loading, registry

MATRIX = hardware.MATRIX_ARCHS
RNG = np.random.default_rng(42)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.fixture
def modelled(monkeypatch):
    """Set ATENSI_ARCH for one test; the fallback lines start unseen."""
    monkeypatch.setattr(api, "_told", set())

    def use(arch: str):
        monkeypatch.setenv("ATENSI_ARCH", arch)

    return use


# --- NVRTC: every kernel file for every architecture of the matrix -----------------


@pytest.fixture(scope="module")
def nvrtc_reports():
    """compile_report per (file, arch), or the CompileError; NVRTC runs without a GPU."""
    try:
        kernels.compile_report("kernels/causal_mask.cu", arch="sm_90")
    except RuntimeError as err:
        if "NVRTC tidak bisa dimuat" in str(err):
            pytest.skip("NVRTC tidak terpasang")
        raise
    out = {}
    for file in registry.files():
        for arch in MATRIX:
            try:
                out[file, arch] = kernels.compile_report(f"kernels/{file}", arch=arch)
            except kernels.CompileError as err:
                out[file, arch] = err
    return out


@pytest.mark.slow
@pytest.mark.parametrize("arch", MATRIX)
@pytest.mark.parametrize("file", registry.files())
def test_nvrtc_compiles_exactly_what_the_registry_declares(nvrtc_reports, file, arch):
    report = nvrtc_reports[file, arch]
    cc = hardware.ARCHS[arch].compute_capability
    needs = {f for k in registry.kernels_in(file) for f in k.needs
             if k.min_compute_capability > cc}
    if needs:  # the registry says it cannot: NVRTC must refuse, for that reason
        assert isinstance(report, kernels.CompileError), (file, arch)
        assert "requires .target sm_80 or higher" in report.log and ".tf32" in report.log
        return
    assert not isinstance(report, kernels.CompileError), str(report)[:2000]
    assert report.spill_bytes == 0
    for k in registry.kernels_in(file):
        res = report.kernels[k.name]
        # The shared memory a block needs is what the entry declares ...
        assert res.shared_bytes == k.static_shared, (k.name, arch, res.shared_bytes)
        assert res.dynamic_shared_bytes == k.dynamic_shared
        # ... and its registers stay within what __launch_bounds__ allows, so a
        # block never runs out of the register file on any architecture.
        assert res.registers <= k.max_registers, (k.name, arch, res.registers)
        per_warp = -(-res.registers * hardware.WARP_SIZE // 256) * 256
        assert per_warp * -(-k.threads // hardware.WARP_SIZE) <= hardware.MAX_REGISTERS_PER_BLOCK


def test_the_tensor_core_kernels_need_sm_80_and_the_others_nothing():
    for k in registry.KERNELS:
        if k.file == "attention_tensorcore.cu":
            assert k.needs == ("tf32_wmma",) and k.min_compute_capability == (8, 0)
        else:
            assert k.needs == () and k.min_compute_capability == (0, 0)
    assert {k.name for k in registry.KERNELS if "cp.async" in k.uses} == {
        k.name for k in registry.KERNELS if k.file == "attention_fused.cu" and k.version == "v2"}


# --- the matrix itself -------------------------------------------------------------


def test_the_matrix_is_what_shared_memory_and_tensor_cores_allow():
    rows = {r["gpu"]: r for r in launch.support_table()}
    # v3 needs TF32 tensor cores (sm_80); v2/v3 at d_k 65..128 need 104/112 KiB,
    # more than sm_86/89 give one block (99 KiB); v2 at d_k 33..64 needs 56 KiB.
    assert {g: (r["fused-v1"], r["fused-v2"], r["fused-v3"]) for g, r in rows.items()} == {
        "Tesla P100": (128, 32, 0), "GeForce GTX 10xx": (128, 32, 0),
        "Tesla T4": (128, 64, 0), "GeForce RTX 20xx": (128, 64, 0),
        "GeForce RTX 30xx": (128, 64, 64), "GeForce RTX 40xx": (128, 64, 64),
        "NVIDIA L4": (128, 64, 64), "A100": (128, 128, 128), "H100": (128, 128, 128),
        "H200": (128, 128, 128)}
    assert all(r[impl] is None for r in rows.values() for impl in launch.CHAINS)
    assert registry.get("attention_fused_v2_d128").shared == 104 * 1024
    assert registry.get("attention_tensorcore_tf32_d128").shared == 112 * 1024


@pytest.mark.parametrize("arch", MATRIX)
def test_the_launch_check_is_the_registrys_declaration(modelled, arch):
    modelled(arch)
    for k in registry.KERNELS:
        if registry.runs_on(k, hardware.ARCHS[arch]):
            launch.check_runs((k,), "cpu")
        else:
            with pytest.raises(launch.UnsupportedKernelError, match=rf"^Kernel {k.name} tidak "
                               rf"bisa berjalan di GPU {arch} .*yang dimodelkan ATENSI_ARCH={arch}"):
                launch.check_runs((k,), "cpu")


def test_a_real_gpu_and_its_model_refuse_with_the_same_message(modelled, monkeypatch):
    k = registry.get("attention_tensorcore_3xtf32_d64")
    monkeypatch.setattr(loading, "_device_target",
                        lambda: loading.Target(hardware.SM_75, "Tesla T4", False))
    with pytest.raises(launch.UnsupportedKernelError) as on_gpu:
        launch.check_runs((k,), "cupy", impl="fused-v3", d_k=64)
    text = str(on_gpu.value)
    assert text == (
        "Kernel attention_tensorcore_3xtf32_d64 (impl='fused-v3', d_k = 64) tidak bisa berjalan "
        "di Tesla T4 (sm_75): butuh tensor core TF32 (wmma/mma dengan operan .tf32), yang baru "
        "ada sejak sm_80. Pakai impl='fused-v2' atau impl='fused-v1' (berjalan di GPU ini untuk "
        "d_k = 64), atau backend='cpu' (kernel yang sama di emulator CPU).")
    modelled("sm_75")
    with pytest.raises(launch.UnsupportedKernelError) as on_model:
        launch.check_runs((k,), "cpu", impl="fused-v3", d_k=64)
    # The same sentence, with the modelled GPU named and the emulator's way out.
    what = "butuh tensor core TF32 (wmma/mma dengan operan .tf32), yang baru ada sejak sm_80. " \
           "Pakai impl='fused-v2' atau impl='fused-v1' (berjalan di GPU ini untuk d_k = 64), atau "
    assert what in text and what in str(on_model.value)
    assert "GPU sm_75 (Tesla T4, GeForce RTX 20xx) yang dimodelkan ATENSI_ARCH=sm_75" in str(on_model.value)


def test_explicit_cupy_is_refused_before_any_launch(monkeypatch):
    monkeypatch.setattr(loading, "_device_target",
                        lambda: loading.Target(hardware.SM_86, "NVIDIA GeForce RTX 3060", False))
    kc.forbid_launches(monkeypatch)
    monkeypatch.setattr(api, "resolve_backend", lambda backend: "cupy")
    Q, K, V = rand(1, 16, 100), rand(1, 16, 100), rand(1, 16, 100)
    with pytest.raises(launch.UnsupportedKernelError,
                       match=r"attention_fused_v2_d128 \(impl='fused-v2', d_k = 100\) tidak bisa "
                             r"berjalan di NVIDIA GeForce RTX 3060 \(sm_86\): butuh 104 KiB shared "
                             r"memory per block, padahal sm_86 paling banyak 99 KiB\. Pakai "
                             r"impl='fused-v1'"):
        kernels.attention(Q, K, V, impl="fused-v2", backend="cupy")


@pytest.mark.parametrize("arch", ["sm_61", "sm_75"])
def test_the_launchers_refuse_under_atensi_arch_before_any_launch(modelled, monkeypatch, arch):
    modelled(arch)
    kc.forbid_launches(monkeypatch)
    Q, K, V = rand(1, 16, 64), rand(1, 16, 64), rand(1, 16, 64)
    with pytest.raises(launch.UnsupportedKernelError, match=r"attention_tensorcore_3xtf32_d64"):
        launch.launch_fused(Q, K, V, causal=True, scale=True, backend="cpu", version="v3")


def test_an_unknown_atensi_arch_is_refused_by_name(modelled):
    modelled("sm_100")
    with pytest.raises(ValueError, match=r"Variabel lingkungan ATENSI_ARCH='sm_100' tidak sah"):
        kernels.attention(rand(4, 8), rand(4, 8), rand(4, 8), backend="cpu")


def test_impl_none_picks_the_best_version_the_gpu_runs(modelled):
    picks = {}
    for arch in MATRIX:
        for d_k in (32, 64, 128, 200):
            picks[arch, d_k] = launch.best_impl(d_k, hardware.ARCHS[arch])
    assert picks["sm_61", 32] == "fused-v2" and picks["sm_61", 64] == "fused-v1"
    assert picks["sm_75", 64] == "fused-v2" and picks["sm_75", 128] == "fused-v1"
    assert picks["sm_86", 64] == "fused-v3" and picks["sm_89", 128] == "fused-v1"
    assert picks["sm_90", 128] == "fused-v3" and picks["sm_90", 200] == "chain-v2"
    assert launch.best_impl(64, hardware.SM_75, splits=4) == "fused-v2"
    modelled("sm_75")
    Q, K, V = rand(2, 20, 64), rand(2, 20, 64), rand(2, 20, 64)
    want = reference.attention(Q.astype(np.float64), K, V)
    assert np.abs(kernels.attention(Q, K, V, impl=None) - want).max() < 1e-5


# --- every kernel call the chapters make, under each modelled GPU --------------------


def _chapter_calls(d_k):
    """The API calls the chapters make (small T), each with its NumPy answer."""
    T = 33
    Q, K, V, dO = rand(2, T, d_k), rand(2, T, d_k), rand(2, T, d_k), rand(2, T, d_k)
    S = reference.scores(Q, K)
    A = reference.softmax(reference.causal_mask(S))
    full = reference.attention(Q.astype(np.float64), K, V)
    calls = [
        ("scores v1", lambda: kernels.scores(Q, K, version="v1"), S),
        ("scores v2 kausal", lambda: kernels.scores(Q, K, causal=True), reference.causal_mask(S)),
        ("causal_mask", lambda: kernels.causal_mask(S), reference.causal_mask(S)),
        ("softmax v1", lambda: kernels.softmax(S, version="v1"), reference.softmax(S)),
        ("softmax v2", lambda: kernels.softmax(S), reference.softmax(S)),
        ("weighted_sum", lambda: kernels.weighted_sum(A, V), A @ V),
        ("rope", lambda: kernels.rope(Q), reference.rope(Q.astype(np.float64))),
        ("attention", lambda: kernels.attention(Q, K, V), full),
        ("backward", lambda: kernels.attention_backward(Q, K, V, dO)[0],
         reference.attention_backward(Q.astype(np.float64), K, V, dO)[0]),
    ]
    for impl in launch.IMPLS:
        calls.append((impl, lambda impl=impl: kernels.attention(Q, K, V, impl=impl), full))
    for precision in launch.PRECISIONS:
        calls.append((f"fused-v3 {precision} cpu", lambda p=precision: kernels.attention(
            Q, K, V, impl="fused-v3", precision=p, backend="cpu"), full))
    return calls


@pytest.mark.parametrize("d_k", [64, 128])
@pytest.mark.parametrize("arch", MATRIX)
def test_every_chapter_call_runs_under_each_modelled_gpu(modelled, capsys, arch, d_k):
    modelled(arch)
    target = hardware.ARCHS[arch]
    for what, call, want in _chapter_calls(d_k):
        out = call()
        tol = 5e-3 if "tf32 cpu" in what and "3x" not in what else 1e-4
        want = np.asarray(want)
        finite = np.isfinite(want)
        assert np.array_equal(out[~finite], want[~finite]), (what, arch)  # the mask's -inf
        scale = max(1.0, float(np.abs(want[finite]).max()))
        assert np.abs(out[finite] - want[finite]).max() <= tol * scale, (what, arch)
    lines = [line for line in capsys.readouterr().out.splitlines() if line]
    # One line for each impl this GPU cannot run at this d_k (shown once, though
    # v3 is called three times), and nothing else.
    cannot = [impl for impl in launch.FUSED if not launch.impl_runs(impl, d_k, target)]
    assert len(lines) == len(cannot), lines
    for impl, line in zip(cannot, lines):
        assert line.startswith(f"Catatan: impl={impl!r} tidak bisa berjalan di GPU {arch} ")
        assert line.endswith("jadi dijalankan di emulator CPU.")
    assert ("fused-v3" in cannot) == (arch in ("sm_61", "sm_75") or (d_k == 128 and arch != "sm_90"))
    assert ("fused-v2" in cannot) == (arch == "sm_61" or (d_k == 128 and arch != "sm_90"))


# --- whole chapters under the strictest modelled GPUs ----------------------------------

# The chapters that launch fused kernels (v2, v3); every other chapter's kernels
# run on every architecture of the matrix (test_the_matrix_is_what_...).
FUSED_PAGES = ("chapters/flash_v2", "chapters/kinerja", "chapters/tensor_core")


@pytest.mark.slow
@pytest.mark.book
@pytest.mark.parametrize("arch", ["sm_61", "sm_86"])
@pytest.mark.parametrize("page", FUSED_PAGES)
def test_chapters_run_whole_under_the_strictest_gpus(monkeypatch, page, arch):
    import chapter_runs

    monkeypatch.setenv("ATENSI_ARCH", arch)  # the notebook's kernel inherits it
    run = chapter_runs.run_chapter.__wrapped__(page)
    assert run.error is None, run.error[-3000:]
    texts = [out.get("text", "") for cell in run.executed.cells if cell.cell_type == "code"
             for out in cell.get("outputs", []) if out.get("output_type") == "stream"]
    lines = [line for text in texts for line in text.splitlines()]
    assert not [line for line in lines if "CUDA_ERROR" in line or "NVRTC" in line]
    notes = [line for line in lines if line.startswith("Catatan: impl=")]
    # One visible line per version the GPU cannot run, naming the modelled GPU.
    assert len(notes) == len(set(notes)) and all(f"GPU {arch} " in n for n in notes), notes
    if page == "chapters/tensor_core" and arch == "sm_61":
        assert any(n.startswith("Catatan: impl='fused-v3'") for n in notes), notes


def test_a_readers_own_module_keeps_the_modelled_gpus_shared_memory_limit(modelled):
    """ATENSI_ARCH reaches the emulator itself: a RawModule launch asking for more
    shared memory than a T4 gives one block is refused as the T4 refuses it."""
    from atensi.cudacpu import LaunchConfigError, RawModule

    code = ('extern "C" __global__ void fill(float* out) {\n'
            '    extern __shared__ float buf[];\n'
            '    buf[threadIdx.x] = threadIdx.x;\n'
            '    __syncthreads();\n'
            '    out[threadIdx.x] = buf[threadIdx.x];\n'
            '}\n')
    if resources_missing():
        pytest.skip("NVRTC tidak terpasang")
    modelled("sm_75")
    k = RawModule(code=code).get_function("fill")
    k.max_dynamic_shared_size_bytes = 80 * 1024
    out = np.zeros(32, np.float32)
    with pytest.raises(LaunchConfigError, match=r"sm_75 mengizinkan paling banyak 65536 byte \(64 KiB\)"):
        k((1,), (32,), (out,), shared_mem=80 * 1024)
    k((1,), (32,), (out,), shared_mem=60 * 1024)  # within a T4's 64 KiB
    assert out.tolist() == list(range(32))


def resources_missing() -> bool:
    from atensi.cudacpu import resources

    return resources._nvrtc() is None


def test_a_real_device_is_read_from_cupys_properties(monkeypatch):
    """The table's entry for a known compute capability; a newer GPU's own limits."""
    runtime = pytest.importorskip("cupy.cuda.runtime")
    props = {"name": b"NVIDIA GeForce RTX 5090", "major": 12, "minor": 0,
             "maxThreadsPerMultiProcessor": 1536, "maxBlocksPerMultiProcessor": 32,
             "regsPerMultiprocessor": 65536, "sharedMemPerMultiprocessor": 100 * 1024,
             "sharedMemPerBlockOptin": 99 * 1024, "reservedSharedMemPerBlock": 1024}
    monkeypatch.setattr(runtime, "getDevice", lambda: 7)
    monkeypatch.setattr(runtime, "getDeviceProperties", lambda dev: dict(props))
    monkeypatch.setattr(loading, "_devices", {})
    new = loading.target("cupy")
    assert new.name == "NVIDIA GeForce RTX 5090" and not new.modelled
    assert new.arch.name == "sm_120" and new.arch.max_shared_per_block == 99 * 1024
    assert new.arch.tf32_wmma and new.arch.max_warps_per_sm == 48
    assert launch.impl_runs("fused-v3", 64, new.arch) and not launch.impl_runs("fused-v3", 128, new.arch)
    monkeypatch.setattr(loading, "_devices", {})
    props.update(name=b"Tesla T4", major=7, minor=5)
    assert loading.target("cupy").arch is hardware.SM_75
