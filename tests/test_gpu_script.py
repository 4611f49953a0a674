"""GPU readiness checked without a GPU.

- scripts/gpu_check.sh, dry-run with a fake $OUT and a fake ``python3`` on
  PATH: the machine's python3 is used when it imports cupy (no pip, no
  network), only four files land in $OUT, a summary is printed, the script's
  own time estimate (step limits, kill grace, packing) stays within its 540 s
  budget (60 s under the 600 s of one command); the same under ``unshare -n``
  (no network) with Python 3.12 and a stub CuPy 14, the GPU machine's
  configuration; on that machine's Python (no nbclient, nbformat, traitlets;
  compute-sanitizer on PATH) every step is planned, in order of value, and
  ``pytest -m gpu`` as planned collects the GPU tests; a step past its time
  limit is stopped and named;
- the 3xTF32 bound of scripts/tensorcore_gpu.py: its truncating MMA model,
  its fused v3 model (bit for bit the emulator with round-to-nearest MMAs),
  and a bound that holds for the emulator's v3 and refuses plain TF32;
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
import shlex
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from atensi import cuda_wheels, kernels
from atensi.bench import measure, report as bench_report
from atensi.kernels import cli

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "gpu_check.sh"
FILES = ["bench_gpu.json", "bench_headline.json", "fakta.json", "logs.tar.gz", "ncu.json",
         "results.txt"]  # what $OUT gets
BUDGET_S = 540  # 600 s per command on the GPU machine, less a 60 s margin
NOTEBOOK_MODULES = ("nbclient", "nbformat", "traitlets")  # absent from the GPU machine's python3
# Every step on the GPU machine, in order of value: correctness, headline numbers, sanitizers.
GPU_MACHINE_STEPS = ("info", "facts", "cupy", "pytest-gpu", "tensorcore-v3", "headline", "ncu",
                     "bench", "memcheck", "racecheck", "synccheck")
# The cards the check runs on, as nvidia-smi names them.
CARDS = {"H100": "NVIDIA H100 80GB HBM3", "H200": "NVIDIA H200"}

# sitecustomize.py for a Python without some packages: importing them fails as if absent.
_ABSENT = """import sys


class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {names!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _Absent())
"""


# --- gpu_check.sh ------------------------------------------------------------------


def _fake_bin(tmp_path, *, cupy_imports: bool, sanitizer: bool = False, python: str = sys.executable,
              hang_on: str = "", absent=(), card: str = "", ncu: bool = False):
    """A bin/ folder with python3 (``python``, seeing a stub cupy and none of
    the modules ``absent``), and pip, curl, wget (and compute-sanitizer, ncu)
    that only log their call; nvidia-smi names ``card`` when one is given. A
    python3 call whose arguments contain ``hang_on`` sleeps instead.
    Returns (bin, calls log)."""
    stub = tmp_path / "stub"
    (stub / "cupy").mkdir(parents=True)
    if absent:
        (stub / "sitecustomize.py").write_text(_ABSENT.format(names=set(absent)))
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
    tools = (["pip", "pip3", "curl", "wget"] + (["compute-sanitizer"] if sanitizer else [])
             + (["ncu"] if ncu else []))
    if card:
        (fake / "nvidia-smi").write_text(f'#!/bin/sh\necho "nvidia-smi $*" >> "{calls}"\n'
                                         f'echo "{card}"\n')
    for tool in tools:
        (fake / tool).write_text(f'#!/bin/sh\necho "{tool} $*" >> "{calls}"\nexit 1\n')
    for f in fake.iterdir():
        f.chmod(0o755)
    return fake, calls


def _dry_run(tmp_path, *, cupy_imports=True, sanitizer=False, extra_env=None, python=sys.executable,
             prefix=(), hang_on="", absent=(), card="", ncu=False):
    fake, calls = _fake_bin(tmp_path, cupy_imports=cupy_imports, sanitizer=sanitizer, python=python,
                            hang_on=hang_on, absent=absent, card=card, ncu=ncu)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k not in ("OUT", "PYTHONPATH")}
    env.update(OUT=str(out), ATENSI_GPU_CHECK_DRY_RUN="1", PATH=f"{fake}{os.pathsep}{env.get('PATH', '')}")
    env.update(extra_env or {})
    proc = subprocess.run([*prefix, "bash", str(SCRIPT)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    log = calls.read_text() if calls.exists() else ""
    return proc, out, log


def _planned_seconds(text):
    m = re.search(r"Perkiraan waktu terlama \(batas langkah \+ (\d+) s per langkah \+ (\d+) s "
                  rf"ringkasan\): (\d+) s dari {BUDGET_S} s", text)
    assert m, text
    return int(m.group(3))


def _planned_steps(results):
    """(name, limit, command) of every step a dry run lists, in order."""
    return [(name, int(limit), command) for name, limit, command
            in re.findall(r"^KERING (\S+) \(≤ (\d+) s\): (.*)$", results, re.M)]


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
    assert "KERING pytest-gpu (≤ 120 s)" in results
    tests_step = SCRIPT.read_text().split("check_tests() {", 1)[1].split("\n}", 1)[0]
    for test_file in ("test_kernels_gpu.py::test_fused_past_2_31_elements", "test_flash_attn.py",
                      "test_gpu_script.py"):
        assert f"tests/{test_file}" in tests_step, test_file
    assert re.search(r"KERING headline .*gpu_headline_bench\.py "
                     + re.escape(str(out / "bench_headline.json")), results)
    # The tensor-core step runs with or without compute-sanitizer.
    assert re.search(r"KERING tensorcore-v3 .*scripts/tensorcore_gpu\.py", results)
    if sanitizer:
        for name in ("memcheck", "racecheck", "synccheck"):
            assert re.search(rf"KERING {name} \(≤ 30 s\): \S*compute-sanitizer --tool {name} "
                             r"--error-exitcode 99 --kernel-regex kns=\^\(", results)
    else:
        assert "LEWATI compute-sanitizer (alat tidak ditemukan" in results
    assert "LEWATI ncu (alat tidak ditemukan" in results
    assert "LEWATI" not in results.replace("LEWATI compute-sanitizer", "").replace("LEWATI ncu", "")
    # Its own estimate: step limits, kill grace and packing stay within the budget.
    assert _planned_seconds(results) <= BUDGET_S
    # The one-screen summary at the end.
    summary = proc.stdout.split("Ringkasan gpu_check", 1)
    assert len(summary) == 2, proc.stdout
    assert len(summary[1].splitlines()) <= 40
    assert ("0 langkah gagal. Berkas: results.txt, bench_gpu.json, bench_headline.json, fakta.json, "
            "ncu.json, logs.tar.gz" in summary[1])


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
    assert 400 <= planned <= BUDGET_S, planned  # every step counted, 60 s under 10 minutes
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) <= 8 and sorted(p.name for p in files) == FILES, files


@pytest.mark.parametrize("card", sorted(CARDS))
def test_gpu_machine_dry_run_plans_every_step_and_collects_the_gpu_tests(tmp_path, card):
    """The GPU machine's python3 (H100 or H200): CuPy, pytest, hypothesis, pyyaml,
    but no notebook packages, and compute-sanitizer and ncu on PATH. Every step is
    planned, in order of value, with its limits, kill grace and packing inside the
    margin: the card named, its facts, the FlashAttention rule on CuPy, launcher
    timing, the ncu pass, the sanitizers on atensi's kernels only; the planned
    ``pytest -m gpu`` really collects, the rule's tests among them."""
    proc, out, _ = _dry_run(tmp_path, sanitizer=True, absent=NOTEBOOK_MODULES, card=CARDS[card],
                            ncu=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = (out / "results.txt").read_text()
    assert f"Kartu: {CARDS[card]}" in results
    assert "LEWATI" not in results, results
    assert sorted(p.name for p in out.iterdir()) == FILES
    steps = _planned_steps(results)
    assert tuple(name for name, _, _ in steps) == GPU_MACHINE_STEPS, results
    grace, packing = (int(x) for x in re.search(
        r"\(batas langkah \+ (\d+) s per langkah \+ (\d+) s ringkasan\)", results).groups())
    assert grace >= 5 and packing >= 10
    planned = _planned_seconds(results)
    assert planned == sum(limit + grace for _, limit, _ in steps) + packing
    assert planned <= BUDGET_S, planned
    commands = {name: command for name, _, command in steps}
    assert commands["tensorcore-v3"].endswith("scripts/tensorcore_gpu.py")
    assert commands["facts"].endswith("gpu_headline_bench.py --fakta " + str(out / "fakta.json"))
    assert re.search(r"gpu_headline_bench\.py --ncu \S*/ncu " + re.escape(str(out / "ncu.json")) + "$",
                     commands["ncu"])
    assert commands["headline"].endswith("gpu_headline_bench.py " + str(out / "bench_headline.json"))
    assert "tests/test_flash_attn.py" in commands["pytest-gpu"]
    assert "ATENSI_REQUIRE_GPU=1" in commands["pytest-gpu"]  # the CPU budgets are off there
    for tool in ("memcheck", "racecheck", "synccheck"):
        sanitized = commands[tool]
        assert f"--tool {tool} " in sanitized
        assert "for splits in (1, 3):" in sanitized and "(2, 130, 64)" in sanitized
        assert "impl='fused-v3', precision='3xtf32', splits=splits" in sanitized
        names = re.search(r"--kernel-regex kns=\^\((\S+)\)\$ ", sanitized).group(1).split("|")
        assert sorted(names) == sorted(k.name for k in kernels.registry.KERNELS)
    if card != "H200":
        return  # the same command: collected once

    python3 = tmp_path / "bin" / "python3"
    env = {k: v for k, v in os.environ.items() if k not in ("OUT", "PYTHONPATH")}
    env["PYTHONPATH"] = str(ROOT / "src")  # what the script exports
    # The machine really lacks the notebook packages here ...
    for name in NOTEBOOK_MODULES:
        missing = subprocess.run([str(python3), "-c", f"import {name}"], env=env,
                                 capture_output=True, text=True, timeout=60)
        assert missing.returncode != 0 and "ModuleNotFoundError" in missing.stderr, name
    # ... and the planned pytest command, as the script runs it, collects.
    command = shlex.split(commands["pytest-gpu"])
    assert command[command.index("-m") + 1:command.index("-m") + 3] == ["pytest", "-q"]
    collect = subprocess.run(command + ["--collect-only"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=300)
    assert collect.returncode == 0, collect.stdout[-3000:] + collect.stderr[-3000:]
    m = re.search(r"^(\d+)/\d+ tests collected \(\d+ deselected\)", collect.stdout, re.M)
    assert m and int(m.group(1)) > 0, collect.stdout[-3000:]
    collected = [line for line in collect.stdout.splitlines() if "::" in line]
    assert len(collected) == int(m.group(1))
    assert any(line.startswith("tests/test_flash_attn.py::test_fused_forward_meets_the_rule_on_gpu")
               for line in collected)
    assert any("test_fused_past_2_31_elements" in line for line in collected)


def _load_script(name):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_headline_bench_has_v3_beside_v2():
    mod = _load_script("gpu_headline_bench")
    assert (mod.B, mod.H, mod.D_K) == (8, 12, 64)
    names = list(mod._variants(None, None, None, None))  # not called: names only
    for name in ("fused v2", "fused v3 TF32 (tensor core)", "fused v3 3xTF32 (tensor core)"):
        assert name in names, names


def test_headline_rows_are_written_as_they_come(tmp_path):
    import json

    mod = _load_script("gpu_headline_bench")
    out = tmp_path / "bench_headline.json"
    result = {"schema": "atensi-headline-1", "rows": [{"name": "fused v1", "T": 1024}]}
    mod._write(result, str(out))
    assert json.loads(out.read_text())["rows"] == result["rows"]
    result["rows"].append({"name": "fused v2", "T": 1024})
    mod._write(result, str(out))
    assert [r["name"] for r in json.loads(out.read_text())["rows"]] == ["fused v1", "fused v2"]
    assert [p.name for p in tmp_path.iterdir()] == ["bench_headline.json"]


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
    # The Python the sanitizers run is valid Python.
    targets = re.search(r'\nSANITIZED_TARGETS="\n(.*?)\n"\n', text, re.S)
    assert targets and "fused-v3" in targets.group(1)
    compile(targets.group(1), "SANITIZED_TARGETS", "exec")
    # One function per step, each called once at the end.
    for name in ("info", "facts", "cupy", "tests", "tensorcore", "headline", "ncu", "bench",
                 "sanitizers"):
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
    table = bench_report.format_table(rows, "gpu")
    lines = table.splitlines()
    assert "latensi" in lines[2] and "100" not in lines[2].split("latensi")[0][-8:]
    assert "latensi" not in lines[-1] and "5.000" in lines[-1]
    assert measure.GPU_LAUNCHES["gpu_chain_v2"] == 3 and measure.LATENCY_FACTOR >= 2
    # All rows latency-bound (small shapes): the FP32 column is still shown.
    assert bench_report.FP32_COLUMN in bench_report.format_table(rows[:1], "gpu")


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
    assert measure.TORCH_REL_ERR > measure.MAX_REL_ERR
    ok = _row(method="torch_sdpa", label="PyTorch", max_rel_err=5e-4,
              tolerance=measure.TORCH_REL_ERR)
    wrong = _row(max_rel_err=5e-4, tolerance=measure.MAX_REL_ERR)
    table = bench_report.format_table([ok, wrong], "gpu").splitlines()
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
    import numpy as np

    from atensi import reference
    mod = _load_script("gpu_headline_bench")
    rng = np.random.default_rng(int(np.random.default_rng().integers(2**32)))
    Q, K, V = (rng.standard_normal((2, 3, 37, mod.D_K)).astype(np.float32) for _ in range(3))
    out = mod._cublas_softmax(Q, K, V, np)
    ref = reference.attention(*(x.astype(np.float64) for x in (Q, K, V)), causal=True)
    assert np.isfinite(out).all() and float(np.abs(out - ref).max()) < 1e-5


# --- The 3xTF32 bound of tensorcore_gpu.py: a truncation-accumulation model ------------


def _mma_nearest(a, b, c):
    """The emulator's MMA (atensi.number_formats.mma_tf32), tile by tile over a batch."""
    import numpy as np

    from atensi import number_formats as nf
    out = np.empty_like(c)
    for idx in np.ndindex(*c.shape[:-2]):
        for r in range(0, c.shape[-2], nf.MMA_M):
            for n in range(0, c.shape[-1], nf.MMA_N):
                out[idx][r:r + 16, n:n + 16] = nf.mma_tf32(a[idx][r:r + 16], b[idx][:, n:n + 16],
                                                           c[idx][r:r + 16, n:n + 16])
    return out


def test_truncating_mma_cuts_toward_zero_within_the_largest_addends_window():
    import numpy as np

    from atensi import number_formats as nf
    tg = _load_script("tensorcore_gpu")
    seed = int(np.random.default_rng().integers(2**32))
    rng = np.random.default_rng(seed)
    a, b = (nf.to_tf32(rng.standard_normal(shape, dtype=np.float32)) for shape in ((16, 8), (8, 16)))
    c = rng.standard_normal((16, 16), dtype=np.float32)
    exact = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    got = tg.mma_truncate(a, b, c)
    assert got.dtype == np.float32 and got.shape == (16, 16)
    prods = np.abs(a[:, :, None].astype(np.float64) * b[None, :, :])
    biggest = np.maximum(prods.max(axis=1), np.abs(c))
    ulp = np.ldexp(1.0, np.frexp(biggest)[1] - 24)
    assert (np.abs(got - exact) <= 10 * ulp).all(), seed  # 9 addends cut, then the sum
    # All addends positive: every cut goes toward zero, so the result is never above
    # the exact sum, and round to nearest (the emulator) is closer on average.
    a, b, c = np.abs(a), np.abs(b), np.abs(c)
    exact = c.astype(np.float64) + a.astype(np.float64) @ b.astype(np.float64)
    got = tg.mma_truncate(a, b, c)
    assert (got <= exact).all() and (got < exact).any(), seed
    assert np.abs(got - exact).mean() > np.abs(nf.mma_tf32(a, b, c) - exact).mean(), seed
    # A batch is every tile on its own.
    batch = tg.mma_truncate(np.stack([a, a]), np.stack([b, b]), np.stack([c, c]))
    assert np.array_equal(batch[1], got)


@pytest.mark.parametrize("precision", ["tf32", "3xtf32"])
def test_v3_model_is_the_emulators_v3_and_its_bound_holds(precision):
    """With the emulator's round-to-nearest MMA, the model of fused v3 gives the
    emulator's own result; with truncation it gives a bound the emulator's v3
    meets, and plain TF32 is above the 3xTF32 bound."""
    import numpy as np

    from atensi import reference
    if "cpu" not in kernels.available_backends():
        pytest.skip("butuh g++")
    tg = _load_script("tensorcore_gpu")
    seed = int(np.random.default_rng().integers(2**32))
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((2, 150, 64), dtype=np.float32) for _ in range(3))
    ref = reference.attention(*(x.astype(np.float64) for x in (Q, K, V)), causal=True)

    def v3(p):
        out = kernels.attention(Q, K, V, impl="fused-v3", precision=p, splits=1, backend="cpu")
        return out.astype(np.float64)

    got = v3(precision)
    rows = tg.checked_rows(got, ref)
    assert rows.shape == (2, 2 * tg.WARP_ROWS)
    worst = np.abs(got - ref).max(axis=-1).argmax(axis=-1)
    assert all(worst[h] in rows[h] for h in range(2)) and (rows[:, -1] == 149).all()
    modelled = tg.model_v3(Q, K, V, rows, precision=precision, mma=_mma_nearest)
    emulated = np.take_along_axis(got, rows[..., None], axis=1)
    if precision == "tf32":  # P rounded to TF32 hides exp2f's last bit: bit for bit
        assert np.array_equal(modelled, emulated), seed
    else:
        assert np.abs(modelled - emulated).max() <= 2.0**-22 * np.abs(ref).max(), seed
    err, model_err, bound = tg.v3_bound(Q, K, V, got, ref, precision)
    assert 0 < err <= bound and model_err > 0, (seed, err, model_err, bound)
    if precision == "3xtf32":
        wrong, _, bound = tg.v3_bound(Q, K, V, v3("tf32"), ref, "3xtf32")
        assert wrong > bound, (seed, wrong, bound)


# --- gpu_headline_bench.py: launchers, timing, facts, ncu (without a GPU) ---------------


class _FakeCuPy:
    """Just enough of CuPy for the timing code: events that read a clock that each
    timed function advances by its own cost, so the arithmetic is exact."""

    def __init__(self):
        self.now = 0.0  # ms
        fake = self

        class Event:
            def record(self):
                self.at = fake.now

            def synchronize(self):
                pass

        class cuda:  # noqa: N801 - the name CuPy gives it
            pass

        cuda.Event = Event
        cuda.get_elapsed_time = staticmethod(lambda start, stop: stop.at - start.at)
        self.cuda = cuda


def test_warm_up_keeps_the_gpu_busy_for_100_ms_and_repeats_interleave():
    mod = _load_script("gpu_headline_bench")
    cp = _FakeCuPy()
    order = []

    def kernel(name, ms):
        def run():
            order.append(name)
            cp.now += ms
        return run

    spent, calls = mod.warm_up(kernel("a", 7.0), cp)
    assert spent >= mod.WARMUP_MS == 100.0 and calls * 7.0 == spent
    order.clear()
    times = mod.interleaved({"a": kernel("a", 3.0), "torch": kernel("torch", 2.0)}, cp)
    assert mod.REPEATS >= 20 and times == {"a": [3.0] * mod.REPEATS, "torch": [2.0] * mod.REPEATS}
    # A, B then B, A: neither side always runs first.
    assert order[:4] == ["a", "torch", "torch", "a"]


def test_each_timed_launcher_runs_what_the_public_call_runs(monkeypatch):
    """The launcher of every kernel row gets the arguments kernels.attention
    passes to atensi.kernels.launch, on the same arrays: only the checks differ."""
    import numpy as np

    from atensi.kernels import launch

    mod = _load_script("gpu_headline_bench")
    seen = []
    real = launch.launch_attention

    def spy(Qd, Kd, Vd, **kw):
        # launch_attention's own defaults filled in: left out or passed, the same call
        seen.append({"splits": None, "precision": launch.DEFAULT_PRECISION, **kw})
        return real(Qd, Kd, Vd, **{**kw, "backend": "cpu"})

    monkeypatch.setattr(launch, "launch_attention", spy)
    rng = np.random.default_rng(5)
    Q, K, V = (rng.standard_normal((1, 2, 33, mod.D_K)).astype(np.float32) for _ in range(3))
    rows = mod._variants(Q, K, V, np)
    assert set(mod.KERNEL_ROWS) < set(rows)
    for name, (impl, options) in mod.KERNEL_ROWS.items():
        seen.clear()
        public = kernels.attention(Q, K, V, impl=impl, causal=True, backend="cpu", **options)
        from_public = dict(seen[-1], backend="cupy")
        seen.clear()
        timed = rows[name][1]()
        assert seen == [from_public], name
        assert np.array_equal(public, timed), name


NCU_CSV = '''==PROF== Connected to process 4242
==PROF== Profiling "attention_fused_v2_d64": 0%....100% - 9 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","4242","python3","127.0.0.1","attention_fused_v2_d64","1","7","(128, 1, 1)","(16, 96, 1)","0","9.0","Command line profiler metrics","l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum","","1,234"
"0","4242","python3","127.0.0.1","attention_fused_v2_d64","1","7","(128, 1, 1)","(16, 96, 1)","0","9.0","Command line profiler metrics","smsp__sass_average_branch_targets_threads_uniform.pct","%","99.5"
"1","4242","python3","127.0.0.1","attention_tensorcore_tf32_d64","1","7","(128, 1, 1)","(16, 96, 1)","0","9.0","Command line profiler metrics","smsp__sass_thread_inst_executed_op_ffma_pred_on.sum","inst","5000"
'''


def test_ncu_csv_is_read_and_set_beside_the_prediction_by_metric_name():
    mod = _load_script("gpu_headline_bench")
    measured = mod.parse_ncu_csv(NCU_CSV)
    assert measured == {
        "attention_fused_v2_d64": {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 1234.0,
                                   "smsp__sass_average_branch_targets_threads_uniform.pct": 99.5},
        "attention_tensorcore_tf32_d64": {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 5000.0}}
    predicted = {"attention_tensorcore_tf32_d64": {
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 4000.0}}
    rows = mod.side_by_side(measured, predicted)
    assert len(rows) == len(mod.NCU_KERNELS) * len(mod.NCU_METRICS)
    row = next(r for r in rows if r["kernel"] == "attention_tensorcore_tf32_d64"
               and r["metric"] == "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")
    assert (row["measured"], row["predicted"], row["measured_over_predicted"]) == (5000.0, 4000.0, 1.25)
    assert all(r["predicted"] is None for r in rows if r["kernel"] == "attention_fused_v2_d64")
    assert mod.parse_ncu_csv("==ERROR== ERR_NVGPUCTRPERM\n") == {}


def test_ncu_profiles_the_three_kernels_with_the_predicted_metrics_only():
    mod = _load_script("gpu_headline_bench")
    command = mod.ncu_command("/opt/ncu")
    assert command[:2] == ["/opt/ncu", "--csv"]
    metrics = command[command.index("--metrics") + 1].split(",")
    assert set(metrics) == set(mod.NCU_METRICS)
    for name in ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                 "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                 "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
                 "smsp__sass_average_branch_targets_threads_uniform.pct"):
        assert name in metrics
    pattern = command[command.index("--kernel-name") + 1]
    assert pattern == "regex:^(attention_fused_v2_d64|attention_tensorcore_tf32_d64|attention_tensorcore_3xtf32_d64)$"
    for name in mod.NCU_KERNELS:
        kernels.registry.get(name)  # registry names, so the prediction finds them
    assert command[-1] == "--ncu-sasaran"


def test_the_roofline_uses_the_measured_bandwidth_of_the_card():
    """An H100 at 3,35 TB/s is not given the H200's 4,8 TB/s."""
    mod = _load_script("gpu_headline_bench")
    from atensi import hardware

    slow = mod.roofline_rows(67e12, 3.0e12, "NVIDIA H100 80GB HBM3")
    fast = mod.roofline_rows(67e12, hardware.H200.bandwidth, "NVIDIA H200")
    assert [r["kernel"] for r in slow] == [r["kernel"] for r in fast]
    memory_bound = [(s, f) for s, f in zip(slow, fast) if f["limited_by"] == "memori"]
    assert memory_bound
    for s, f in memory_bound:
        assert abs(s["bound_us"] / f["bound_us"] - hardware.H200.bandwidth / 3.0e12) < 1e-9


@pytest.mark.slow
def test_the_emulator_predicts_every_metric_ncu_measures():
    """The join is by ncu's metric name: the emulator's profile (atensi.cudacpu.profile,
    through atensi.kernels.profil) names each one for each of the three kernels."""
    mod = _load_script("gpu_headline_bench")
    predicted = mod.predicted()
    assert set(predicted) == set(mod.NCU_KERNELS)
    for kernel, metrics in predicted.items():
        assert set(mod.NCU_METRICS) <= set(metrics), kernel
        assert metrics["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"] > 0
        assert 0 < metrics["smsp__sass_average_branch_targets_threads_uniform.pct"] <= 100
