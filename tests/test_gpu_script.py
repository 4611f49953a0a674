"""GPU readiness checked without a GPU.

- scripts/gpu_check.sh, dry-run with a fake $OUT and a fake ``python3`` on
  PATH: the machine's python3 is used when it imports cupy (no pip, no
  network), only four files land in $OUT, a summary is printed, the script's
  own time estimate stays within its 570 s budget (10 minutes a command);
  the same under ``unshare -n`` (no network) with Python 3.12 and a stub
  CuPy 14, the GPU machine's configuration; a step past its time limit is
  stopped and named;
- the CUDA library preloading picks names by CUDA major version;
- NVRTC of CUDA 13 (the ``nvidia-cuda-nvrtc`` wheel, as on the H200 machine
  with CuPy 14) compiles every kernel without spills, like CUDA 12 does in
  test_kernels_compile.py;
- kernels are looked up once per (file, kernel, backend);
- compile_report uses CuPy's options and reports occupancy;
- GPU bench rows near launch overhead are labelled latency;
- on a GPU (skipped here): fused v2's cp.async pipeline at d_k 64 and 128.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from atensi import bench, cuda_wheels, kernels
from atensi.kernels import cli

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu_check.sh"
FILES = ["bench_gpu.json", "bench_headline.json", "logs.tar.gz", "results.txt"]  # what $OUT gets


# --- gpu_check.sh ------------------------------------------------------------------


def _fake_bin(tmp_path, *, cupy_imports: bool, sanitizer: bool = False, python: str = sys.executable,
              hang_on: str = ""):
    """A bin/ folder with python3 (``python``, seeing a stub cupy), and pip,
    curl, wget, nvidia-smi that only log their call. A python3 call whose
    arguments contain ``hang_on`` sleeps instead. Returns (bin, calls log)."""
    stub = tmp_path / "stub"
    (stub / "cupy").mkdir(parents=True)
    (stub / "cupy" / "__init__.py").write_text(
        '__version__ = "14.0.0-stub"\n' if cupy_imports
        else 'raise ImportError("stub: no CuPy here")\n')
    calls = tmp_path / "calls.log"
    fake = tmp_path / "bin"
    fake.mkdir()
    hang = f'case "$*" in *{hang_on}*) exec sleep 60;; esac\n' if hang_on else ""
    (fake / "python3").write_text(
        "#!/bin/sh\n"
        f'echo "python3 $*" >> "{calls}"\n' + hang +
        f'PYTHONPATH="{stub}${{PYTHONPATH:+:$PYTHONPATH}}" exec "{python}" "$@"\n')
    tools = ["pip", "pip3", "curl", "wget"] + (["compute-sanitizer"] if sanitizer else [])
    for tool in tools:
        (fake / tool).write_text(f'#!/bin/sh\necho "{tool} $*" >> "{calls}"\nexit 1\n')
    for f in fake.iterdir():
        f.chmod(0o755)
    return fake, calls


def _dry_run(tmp_path, *, cupy_imports=True, sanitizer=False, extra_env=None, python=sys.executable,
             prefix=(), hang_on=""):
    fake, calls = _fake_bin(tmp_path, cupy_imports=cupy_imports, sanitizer=sanitizer, python=python,
                            hang_on=hang_on)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in ("OUT", "PYTHONPATH")}
    env.update(OUT=str(out), ATENSI_GPU_CHECK_DRY_RUN="1", PATH=f"{fake}{os.pathsep}{env.get('PATH', '')}")
    env.update(extra_env or {})
    proc = subprocess.run([*prefix, "bash", str(SCRIPT)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    log = calls.read_text() if calls.exists() else ""
    return proc, out, log


def _planned_seconds(text):
    m = re.search(r"Perkiraan waktu terlama \(jumlah batas langkah\): (\d+) s dari 570 s", text)
    assert m, text
    return int(m.group(1))


@pytest.mark.slow
@pytest.mark.parametrize("sanitizer", [False, True])
def test_dry_run_uses_machine_python_and_installs_nothing(tmp_path, sanitizer):
    proc, out, calls = _dry_run(tmp_path, sanitizer=sanitizer)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # Only the four files in $OUT, and nothing written into the repository.
    assert sorted(p.name for p in out.iterdir()) == FILES
    with tarfile.open(out / "logs.tar.gz") as tar:
        tar.getnames()  # a readable archive
    results = (out / "results.txt").read_text()
    # The machine's python3 (it imports cupy) is used: no venv, no pip, no network.
    assert re.search(r"Python: \S*/bin/python3 \(sudah punya CuPy", results), results
    assert "pip" not in calls and "-m venv" not in calls, calls
    assert not any(t in calls for t in ("curl", "wget")), calls
    assert "-m pip" not in results and "venv" not in results
    # Only GPU work: pytest -m gpu, bench --device gpu.
    assert re.search(r"KERING pytest-gpu .*-m pytest -q -m gpu", results)
    assert re.search(r"KERING bench .*-m atensi\.bench --quick --device gpu --json "
                     + re.escape(str(out / "bench_gpu.json")), results)
    assert "KERING pytest-gpu (≤ 260 s)" in results
    tests_step = SCRIPT.read_text().split("check_tests() {", 1)[1].split("\n}", 1)[0]
    for test_file in ("test_fused_split.py", "test_kernels_v2.py", "test_fused_tensorcore.py",
                      "test_gpu_script.py"):
        assert f"tests/{test_file}" in tests_step, test_file
    assert re.search(r"KERING headline .*gpu_headline_bench\.py "
                     + re.escape(str(out / "bench_headline.json")), results)
    if sanitizer:
        for name in ("memcheck", "racecheck", "synccheck"):
            assert re.search(rf"KERING {name} \(≤ 40 s\): \S*compute-sanitizer --tool {name} ", results)
        # the sanitizer takes the time the tensor-core section would use
        assert "LEWATI tensorcore-v3 (compute-sanitizer memakai sisa anggaran" in results
        results = results.replace("LEWATI tensorcore-v3", "")
    else:
        assert "LEWATI compute-sanitizer (alat tidak ditemukan" in results
        assert re.search(r"KERING tensorcore-v3 .*scripts/tensorcore_gpu\.py", results)
    assert "LEWATI" not in results.replace("LEWATI compute-sanitizer", "")
    # Its own estimate: the sum of the step limits stays within the budget.
    assert _planned_seconds(results) <= 570
    # The one-screen summary at the end.
    summary = proc.stdout.split("Ringkasan gpu_check", 1)
    assert len(summary) == 2, proc.stdout
    assert len(summary[1].splitlines()) <= 40
    assert ("0 langkah gagal. Berkas: results.txt, bench_gpu.json, bench_headline.json, logs.tar.gz"
            in summary[1])


def test_dry_run_without_cupy_falls_back_to_a_venv(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    proc, out, calls = _dry_run(tmp_path, cupy_imports=False,
                                extra_env={"ATENSI_VENV": str(venv)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = (out / "results.txt").read_text()
    assert "tidak punya CuPy; memakai venv" in results
    # pip only on this path, and only as the dry-run line.
    assert re.search(r"KERING install .*-m pip install .*requirements-gpu\.txt", results)
    assert sorted(p.name for p in out.iterdir()) == FILES


def _python312():
    """A Python 3.12 interpreter that runs (not a pyenv shim), else None."""
    found = sorted(Path("/root/.pyenv/versions").glob("3.12*/bin/python3.12")) if Path("/root").is_dir() else []
    which = shutil.which("python3.12")
    for cand in [*found, *([which] if which and "shims" not in which else [])]:
        try:
            ok = subprocess.run([str(cand), "-c", "import sys; assert sys.version_info[:2] == (3, 12)"],
                                capture_output=True, timeout=30).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        if ok:
            return str(cand)
    return None


PY312 = _python312()


def _offline_prefix():
    """``unshare -n`` when it works here (a new, empty network namespace), else None."""
    if shutil.which("unshare") is None:
        return None
    ok = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False).returncode == 0
    return ("unshare", "-n") if ok else None


def test_dry_run_offline_on_the_gpu_machine_configuration(tmp_path):
    """Python 3.12 with a stub CuPy 14 as the machine's python3, no network: the
    script's own time estimate fits its budget and at most 8 files come back."""
    prefix = _offline_prefix()
    if prefix is None:
        pytest.skip("unshare -n tidak tersedia di mesin ini")
    python = str(PY312) if PY312 else sys.executable  # the local python when 3.12 is absent
    proc, out, calls = _dry_run(tmp_path, sanitizer=True, python=python, prefix=prefix)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = (out / "results.txt").read_text()
    assert "sudah punya CuPy; tidak ada yang dipasang" in results, results
    assert "pip" not in calls, calls
    planned = _planned_seconds(results)
    assert 400 <= planned <= 570, planned  # every step counted, all within 10 minutes a command
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) <= 8 and sorted(p.name for p in files) == FILES, files


@pytest.mark.slow
def test_a_step_past_its_limit_is_stopped_and_named(tmp_path):
    proc, out, _ = _dry_run(tmp_path, hang_on="gpu_available",
                            extra_env={"ATENSI_GPU_CHECK_DRY_RUN": "0", "ATENSI_GPU_CHECK_MAX_STEP": "2"})
    results = (out / "results.txt").read_text()
    assert "DIPOTONG info: dihentikan di batas 2 s" in results, results
    assert "Langkah yang dipotong karena batas waktu: info" in results
    assert proc.returncode != 0
    assert sorted(p.name for p in out.iterdir()) == FILES


def test_script_syntax_and_sanity():
    subprocess.run(["bash", "-n", str(SCRIPT)], check=True)
    text = SCRIPT.read_text()
    assert text.startswith("#!/usr/bin/env bash") and "\nset -u\n" in text
    # pip appears on one line only: the fallback install.
    assert len([line for line in text.splitlines()
                if "pip install" in line and not line.lstrip().startswith("#")]) == 1
    assert 'PYTHONPATH="$PYPATH"' in text and "$ROOT/src" in text
    # No file other than the four is written to $RESULTS_DIR.
    targets = set(re.findall(r'"\$RESULTS_DIR/([^"$]+)"', text))
    assert targets <= set(FILES), targets
    # One function per step, each called once at the end.
    for name in ("info", "cupy", "tests", "sanitizers", "bench", "headline"):
        assert f"\ncheck_{name}() {{" in text and f"\ncheck_{name}\n" in text, name
    if shutil.which("shellcheck"):
        proc = subprocess.run(["shellcheck", "-S", "warning", str(SCRIPT)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stdout


# --- CUDA 12 / CUDA 13 libraries ------------------------------------------------------


@pytest.mark.slow
def test_preload_picks_names_by_cuda_major():
    assert cuda_wheels.WHEELS[12][0][1] == ("libnvrtc.so.12",)
    assert cuda_wheels.WHEELS[13][0] == ("cu13", ("libnvrtc.so.13",))
    # In a fresh process, as if CuPy were built for CUDA 13 (CuPy 14, cupy-cuda13x).
    code = ("from atensi import cuda_wheels\n"
            "cuda_wheels.cuda_major = lambda: 13\n"
            "print(cuda_wheels.preload())\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip()
    assert line.startswith("CuPy untuk CUDA 13: libnvrtc.so.13"), line
    assert ".so.12" not in line
    assert "CuPy untuk CUDA 99" in _preload_for(99)


def _preload_for(major):
    code = (f"from atensi import cuda_wheels\ncuda_wheels.cuda_major = lambda: {major}\n"
            "print(cuda_wheels.preload())\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
                          timeout=60).stdout


def _nvrtc13():
    try:
        import nvidia
    except ImportError:
        return None
    for root in nvidia.__path__:
        lib = Path(root) / "cu13" / "lib" / "libnvrtc.so.13"
        if lib.is_file():
            return lib
    return None


# Runs in its own process: libnvrtc.so.12 (CuPy 13) is loaded globally in this one.
_NVRTC13_SCRIPT = r'''
import ctypes, sys, json
from pathlib import Path
from atensi import kernels, ptxas
lib = ctypes.CDLL(sys.argv[1])
major, minor = ctypes.c_int(), ctypes.c_int()
assert lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)) == 0
include = sys.argv[2]
out = {"version": [major.value, minor.value], "files": {}}
for file in kernels.registry.files():
    path = Path("kernels") / file
    for arch in ("sm_80", "sm_90"):
        prog = ctypes.c_void_p()
        src = path.read_bytes()
        assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, f"kernels/{path.name}".encode(),
                                      0, None, None) == 0
        opts = ["-std=c++17", f"-I{include}", "-ftz=true", f"-arch={arch}",
                "--device-as-default-execution-space", "-Xptxas=-v", *kernels.registry.defines(file)]
        arr = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, buf)
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
        log = buf.value.decode()
        found = ptxas.parse(log)
        out["files"][f"{path.name} {arch}"] = {
            "rc": rc, "log": log[-2000:],
            "kernels": {k: [r.registers, r.spill_stores + r.spill_loads, r.stack_frame]
                        for k, r in found.items()}}
print(json.dumps(out))
'''


@pytest.mark.slow
def test_nvrtc_cuda13_compiles_every_kernel_without_spills():
    """The same kernels with NVRTC 13 (CuPy 14 / CUDA 13, the H200 machine)."""
    lib = _nvrtc13()
    if lib is None:
        pytest.skip("wheel nvidia-cuda-nvrtc (CUDA 13) tidak terpasang "
                    "(pip install -r requirements-dev.txt)")
    import json

    import cupy

    include = Path(cupy.__file__).parent / "_core" / "include"
    proc = subprocess.run([sys.executable, "-c", _NVRTC13_SCRIPT, str(lib), str(include)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src")})
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["version"][0] == 13
    assert len(result["files"]) == 2 * len(list((ROOT / "kernels").glob("*.cu")))
    for key, f in result["files"].items():
        assert f["rc"] == 0, (key, f["log"])
        assert f["kernels"], (key, f["log"])
        for name, (regs, spills, stack) in f["kernels"].items():
            assert regs > 0 and spills == 0 and stack == 0, (key, name, f["log"])
    # fused v2: d_k = 128 and the split over keys (partials + combine) included.
    for arch in ("sm_80", "sm_90"):
        names = result["files"][f"attention_fused.cu {arch}"]["kernels"]
        for name in ("attention_fused_v2_d128", "attention_fused_v2_split_d32",
                     "attention_fused_v2_split_d64", "attention_fused_v2_split_d128",
                     "attention_fused_v2_combine"):
            assert name in names, (arch, name)


# --- compile_report: CuPy's options, occupancy -------------------------------------------


@pytest.mark.slow
def test_compile_report_uses_cupys_options_and_reports_occupancy():
    try:
        report = kernels.compile_report(ROOT / "kernels" / "attention_fused.cu", arch="sm_90")
    except RuntimeError as err:
        pytest.skip(f"NVRTC tidak ada: {err}")
    for option in ("-ftz=true", "--device-as-default-execution-space", "-arch=sm_90",
                   "-std=c++17", "-Xptxas=-v"):
        assert option in report.options
    # The registry's constants, as loading.get_function passes them to CuPy.
    assert set(kernels.registry.defines("attention_fused.cu")) <= set(report.options)
    include = [o for o in report.options if o.startswith("-I")]
    assert any(o.endswith(os.path.join("cupy", "_core", "include")) for o in include)
    for name, res in report.kernels.items():
        assert res.threads == kernels.registry.get(name).threads == 128
        assert 0 < res.occupancy <= 1, (name, res)
    text = str(report)
    assert "okupansi" in text and "-ftz=true" in text and "folder -I" in text


def test_occupancy_arithmetic():
    R = kernels.KernelResources
    # 157 registers × 128 threads: 5 120 registers per warp → 12 warps → 3 blocks.
    assert kernels.occupancy(R(registers=157, shared_bytes=18432, threads=128)) == 12 / 64
    # Small kernels reach the thread limit: 8 blocks of 256 threads = 64 warps.
    assert kernels.occupancy(R(registers=32, threads=256), "sm_80") == 1.0
    # Shared memory: 100 KiB blocks fit twice on sm_90 (228 KiB), once on sm_80.
    big = R(registers=32, shared_bytes=100 * 1024, threads=128)
    assert kernels.occupancy(big, "sm_90") == 2 * 4 / 64
    assert kernels.occupancy(big, "sm_80") == 1 * 4 / 64


# --- Launch cost ---------------------------------------------------------------------------


def test_kernel_looked_up_once(monkeypatch):
    if "cpu" not in kernels.available_backends():
        pytest.skip("butuh g++")
    first = kernels.get_function("causal_mask.cu", "causal_mask_v1", "cpu")

    def no_file_access(*args, **kwargs):
        raise AssertionError("get_function membaca berkas lagi")

    monkeypatch.setattr(kernels.loading, "kernel_path", no_file_access)
    monkeypatch.setattr(Path, "read_text", no_file_access)
    with pytest.raises(AssertionError, match="membaca berkas"):  # the trap is in the path
        kernels.get_function("tidak_ada.cu", "x", "cpu")
    for _ in range(3):
        assert kernels.get_function("causal_mask.cu", "causal_mask_v1", "cpu") is first


# --- Bench: latency rows ---------------------------------------------------------------------


def _row(**kw):
    row = {"method": "gpu_fused", "label": "fused kernel (GPU)", "device": "gpu", "B": 1,
           "H": 12, "T": 256, "d_k": 64, "causal": True, "time_ms": 0.01, "gflops": 100.0,
           "peak_mib": 1.0, "repeats": 20, "max_rel_err": 0.0, "ratio": 1.0}
    row.update(kw)
    return row


def test_latency_rows_are_labelled():
    rows = [_row(latency_bound=True, fp32_peak_share=None),
            _row(T=8192, gflops=5000.0, latency_bound=False, fp32_peak_share=0.1)]
    table = bench.format_table(rows, "gpu")
    lines = table.splitlines()
    assert "latensi" in lines[2] and "100" not in lines[2].split("latensi")[0][-8:]
    assert "latensi" not in lines[-1] and "5.000" in lines[-1]
    assert bench.GPU_LAUNCHES["gpu_chain_v2"] == 3 and bench.LATENCY_FACTOR >= 2
    # All rows latency-bound (small shapes): the FP32 column is still shown.
    assert bench.FP32_COLUMN in bench.format_table(rows[:1], "gpu")


def test_ptxas_table_command(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    try:
        kernels.compile_report(ROOT / "kernels" / "causal_mask.cu", arch="sm_80")
    except RuntimeError as err:
        pytest.skip(f"NVRTC tidak ada: {err}")
    assert cli.main(["--tabel", "kernels/causal_mask.cu"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["kernel", "arch", "register", "shared", "(byte)", "spill",
                                "(byte)", "okupansi"]
    rows = [line.split() for line in lines[2:]]
    assert [r[:2] for r in rows] == [["causal_mask_v1", "sm_80"], ["causal_mask_v1", "sm_90"]]
    assert all(r[4] == "0" and r[-1] == "%" for r in rows)


def test_torch_row_has_its_own_tolerance():
    assert bench.TORCH_REL_ERR > bench.MAX_REL_ERR
    ok = _row(method="torch_sdpa", label="PyTorch", max_rel_err=5e-4,
              tolerance=bench.TORCH_REL_ERR)
    wrong = _row(max_rel_err=5e-4, tolerance=bench.MAX_REL_ERR)
    table = bench.format_table([ok, wrong], "gpu").splitlines()
    assert "SALAH" not in table[2] and "SALAH" in table[3]


# --- On a GPU (skipped without one) -------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("d_k", [64, 128])
@pytest.mark.parametrize("causal", [False, True], ids=["penuh", "kausal"])
def test_fused_v2_cp_async_pipeline_on_gpu(d_k, causal):
    """Many key tiles (T = 1030), so the double-buffered cp.async pipeline
    (sm_80+) runs every stage, the last one ragged."""
    import _kernel_cases as kc
    if not kernels.gpu_available():
        if os.environ.get("ATENSI_REQUIRE_GPU") == "1":
            pytest.fail("ATENSI_REQUIRE_GPU=1, tetapi tidak ada GPU")
        pytest.skip("tidak ada GPU")
    import cupy as cp
    import numpy as np

    from atensi import reference
    rng = np.random.default_rng()
    seed = int(rng.integers(2**32))
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((2, 3, 1030, d_k)).astype(np.float32) for _ in range(3))
    out = kernels.attention(*(cp.asarray(x) for x in (Q, K, V)), causal=causal, impl="fused-v2", splits=1, backend="cupy")
    ref = reference.attention(*(kc.f64(x) for x in (Q, K, V)), causal=causal)
    got = cp.asnumpy(out).astype(np.float64)
    assert np.isfinite(got).all(), seed
    assert float(np.abs(got - ref).max()) <= 1e-5 * max(1.0, float(np.abs(ref).max())), seed


def test_headline_cublas_row_computes_causal_attention():
    """The cuBLAS + CuPy softmax row of gpu_headline_bench.py, run with NumPy in
    place of CuPy, is causal attention (d_k = 64, scaled)."""
    import importlib.util

    import numpy as np

    from atensi import reference
    spec = importlib.util.spec_from_file_location("gpu_headline_bench", ROOT / "scripts" / "gpu_headline_bench.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rng = np.random.default_rng(int(np.random.default_rng().integers(2**32)))
    Q, K, V = (rng.standard_normal((2, 3, 37, mod.D_K)).astype(np.float32) for _ in range(3))
    out = mod._cublas_softmax(Q, K, V, np)
    ref = reference.attention(*(x.astype(np.float64) for x in (Q, K, V)), causal=True)
    assert np.isfinite(out).all() and float(np.abs(out - ref).max()) < 1e-5
