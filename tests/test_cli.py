"""Command-line tools answer bad input with one Indonesian line."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from atensi.bench import cli

ROOT = Path(__file__).resolve().parents[1]


def run_kernels_cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "atensi.kernels", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def _one_line(proc):
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    return lines[0]


def test_missing_file(tmp_path):
    line = _one_line(run_kernels_cli("tidak_ada.cu", cwd=tmp_path))
    assert "tidak ada" in line and "tidak_ada.cu" in line


def test_relative_path_is_not_re_rooted(tmp_path):
    """kernels/scores.cu from another folder is not silently taken from the repository."""
    line = _one_line(run_kernels_cli("kernels/scores.cu", cwd=tmp_path))
    assert "tidak ada" in line and str(tmp_path) in line and "Maksud Anda" in line


def test_directory(tmp_path):
    line = _one_line(run_kernels_cli(str(tmp_path), cwd=tmp_path))
    assert "folder" in line


@pytest.mark.slow
def test_non_utf8_file(tmp_path):
    bad = tmp_path / "latin1.cu"
    bad.write_bytes("// komentar dengan é\n".encode("latin-1"))
    line = _one_line(run_kernels_cli(str(bad), cwd=tmp_path))
    assert "UTF-8" in line


@pytest.mark.parametrize("arch", ["compute_90", "90", "sm_9x", ""])
def test_bad_arch(arch, tmp_path):
    line = _one_line(run_kernels_cli("--arch", arch, str(ROOT / "kernels" / "scores.cu"),
                                     cwd=tmp_path))
    assert "'--arch'" in line and "sm_XX" in line


def test_unknown_option(tmp_path):
    line = _one_line(run_kernels_cli("--bogus", cwd=tmp_path))
    assert "argumen tidak sah" in line


# ---- python -m atensi.bench --json ---------------------------------------------------------


@pytest.mark.parametrize("make_path", [
    lambda tmp: tmp,                                   # a folder
    lambda tmp: (tmp / "berkas").write_text("") or tmp / "berkas" / "hasil.json",  # under a file
])
def test_bench_json_path_is_checked_before_benchmarking(tmp_path, monkeypatch, capsys, make_path):
    def trap(*a, **k):
        raise AssertionError("tolok ukur berjalan padahal --json tidak bisa ditulis")

    monkeypatch.setattr(cli, "run", trap)  # where main looks it up
    with pytest.raises(AssertionError, match="tolok ukur berjalan"):  # the trap is in the path
        cli.main(["--preset", "tiny", "--device", "cpu"])
    capsys.readouterr()
    path = make_path(tmp_path)
    assert cli.main(["--quick", "--json", str(path)]) == 2
    err = capsys.readouterr().err
    assert "--json" in err and len(err.strip().splitlines()) == 1


def test_bench_json_path_that_can_be_written_is_fine(tmp_path):
    assert cli.json_path_problem(tmp_path / "baru" / "hasil.json") is None


# ---- scripts/sync_notebooks.py ---------------------------------------------------------


def _sync():
    spec = importlib.util.spec_from_file_location("sync_notebooks",
                                                  ROOT / "scripts" / "sync_notebooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("url", [
    'https://github.com/a/b"); import os; os.system("id"); ("',
    "https://github.com/a/b --upload-pack=touch",
    "-oProxyCommand=touch /tmp/x",
    "file:///etc/passwd",
    "https://github.com/a/b\nimport os",
    "",
    None,
])
def test_repository_url_is_validated(url):
    sync = _sync()
    with pytest.raises(ValueError, match="repository.url"):
        sync.check_repo_url(url)
    if url is not None:
        with pytest.raises(ValueError, match="repository.url"):
            sync.setup_source(url)


def test_repository_url_is_quoted_as_python():
    sync = _sync()
    source = sync.setup_source("https://github.com/atensi-id/atensi")
    assert '_repositori = "git+https://github.com/atensi-id/atensi@main"' in source
    compile(source, "<setup>", "exec")
    assert sync.setup_source() == sync.setup_source(sync.repo_url())


# ---- every command-line tool: bad arguments are one Indonesian line, exit 2 ---------------

BAD_ARGUMENTS = [
    (["-m", "atensi.train", "--steps", "x"], "--steps"),
    (["-m", "atensi.train", "--steps", "-3"], "--steps"),
    (["-m", "atensi.train", "--experiment", "lain"], "pilihan"),
    (["-m", "atensi.train", "--out", "{tmp}"], "folder"),
    (["-m", "atensi.train", "--bogus"], "tidak dikenal"),
    (["-m", "atensi.corpus", "--out", "{tmp}"], "folder"),
    (["-m", "atensi.corpus", "--out"], "butuh satu nilai"),
    (["-m", "atensi.bench", "--device", "tpu"], "pilihan"),
    (["-m", "atensi.bench", "--preset"], "butuh satu nilai"),
    (["-m", "atensi.bench", "ekstra"], "tidak dikenal"),
    (["-m", "atensi.kernels", "--arch"], "butuh satu nilai"),
    (["scripts/sync_notebooks.py", "--check", "--force"], "--force"),
    (["scripts/sync_notebooks.py", "--bogus"], "tidak dikenal"),
    (["scripts/kernel_driver.py", "tidak_ada"], "pilihan"),
    (["scripts/kernel_driver.py", "scores", "--grid-cap", "-1"], "--grid-cap"),
    (["scripts/kernel_driver.py", "scores", "--backend", "tpu"], "pilihan"),
    (["scripts/kernel_driver.py"], "wajib"),
    (["scripts/serve_gzip.py", "delapan", "."], "bukan bilangan bulat"),
    (["scripts/serve_gzip.py", "70000", "."], "PORT"),
    (["scripts/serve_gzip.py", "8000", "{tmp}/tidak-ada"], "FOLDER"),
    (["scripts/serve_gzip.py"], "wajib"),
]


@pytest.mark.parametrize("argv, words", BAD_ARGUMENTS,
                         ids=[" ".join(a).replace("{tmp}", "TMP") for a, _ in BAD_ARGUMENTS])
@pytest.mark.slow
def test_every_tool_answers_bad_arguments_with_one_indonesian_line(argv, words, tmp_path):
    argv = [a.format(tmp=tmp_path) for a in argv]
    proc = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    line = _one_line(proc)
    assert proc.returncode == 2, (proc.returncode, line)
    assert words in line and "Pemakaian:" in line, line
    for english in ("usage:", "error:", "invalid", "unrecognized", "expected one", "required"):
        assert english not in line, line


@pytest.mark.parametrize("tool", ["atensi.train", "atensi.corpus", "atensi.bench",
                                  "atensi.kernels"])
@pytest.mark.slow
def test_help_is_indonesian(tool):
    proc = subprocess.run([sys.executable, "-m", tool, "--help"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0
    assert proc.stdout.startswith("pemakaian:") and "tampilkan bantuan ini" in proc.stdout
    assert "usage:" not in proc.stdout and "show this help" not in proc.stdout


# ---- Ctrl-C ---------------------------------------------------------------------------------

_INTERRUPT_IN = """
import importlib, os, runpy, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
owner, name, tool = sys.argv[1], sys.argv[2], sys.argv[3]
def interrupted(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(30)
setattr(importlib.import_module(owner), name, interrupted)
sys.argv = [tool, *sys.argv[4:]]
runpy.run_module(tool, run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("owner, name, tool, args", [
    ("atensi.kernels.registry", "table", "atensi.kernels", ["--daftar"]),
    ("atensi.bench.cli", "run", "atensi.bench", ["--preset", "tiny", "--device", "cpu"]),
])
def test_ctrl_c_is_one_indonesian_line_and_exit_code_130(owner, name, tool, args, tmp_path):
    proc = subprocess.run([sys.executable, "-c", _INTERRUPT_IN, owner, name, tool, *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip() == f"python -m {tool}: dihentikan (Ctrl-C)."


def test_profil_unknown_kernel_is_refused_before_running(tmp_path):
    line = _one_line(run_kernels_cli("--profil", "bukan_kernel", cwd=tmp_path))
    assert "'bukan_kernel'" in line and "--daftar" in line


@pytest.mark.slow
def test_profil_prints_ncu_names_cu_lines_and_the_binding_resource(tmp_path):
    proc = run_kernels_cli("--profil", "softmax_v2_warp", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "== softmax_v2_warp (softmax.cu)" in out
    assert "smsp__inst_executed_op_shfl.sum" in out
    assert "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum" in out
    assert "kernels/softmax.cu:" in out  # per access site, with its .cu line
    assert "yang mengikat: DRAM" in out  # a softmax reads and writes its (T, T) matrix once
