"""Every kernel file compiles with NVRTC (the compiler CuPy uses), without a GPU.

The ptxas report (-Xptxas=-v) must be present and show zero spill bytes for
every kernel, on Ampere (sm_80) and Hopper (sm_90).
"""

import time
from pathlib import Path

import pytest

from atensi import kernels
from atensi.kernels import cli

ROOT = Path(__file__).resolve().parents[1]
KERNEL_FILES = sorted((ROOT / "kernels").glob("*.cu"))
ARCHS = ["sm_80", "sm_90"]

# The kernels each file must define (attention_fused.cu is checked when present).
EXPECTED = {
    "scores.cu": {"scores_v1_naive", "scores_v2_tiled", "scores_v2_tiled_causal"},
    "causal_mask.cu": {"causal_mask_v1"},
    "softmax.cu": {"softmax_v1_shared", "softmax_v2_warp", "softmax_v2_warp_causal"},
    "weighted_sum.cu": {"weighted_sum_v1", "weighted_sum_v2_tiled",
                        "weighted_sum_v2_tiled_causal"},
    "rope.cu": {"rope_v1"},
}


@pytest.fixture(scope="module")
def reports():
    """Compile every file for every arch once; also times the whole set."""
    start, cpu_start = time.perf_counter(), time.process_time()
    out = {(f.name, arch): kernels.compile_report(f, arch=arch) for f in KERNEL_FILES for arch in ARCHS}
    out["seconds"] = time.perf_counter() - start
    # NVRTC runs inside this process: its CPU time does not grow when other
    # programs share the cores, wall time does.
    out["cpu_seconds"] = time.process_time() - cpu_start
    return out


def test_kernel_files_exist():
    names = {f.name for f in KERNEL_FILES}
    assert set(EXPECTED) <= names


@pytest.mark.slow
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("file", [f.name for f in KERNEL_FILES])
def test_compiles_without_spills(reports, file, arch):
    report = reports[(file, arch)]
    assert report.path == f"kernels/{file}"
    # ptxas really ran: one "Compiling entry function" line per kernel.
    assert "ptxas info" in report.log
    assert f"for '{arch}'" in report.log
    assert report.kernels, report.log
    assert set(report.kernels) >= EXPECTED.get(file, set())
    for name, res in report.kernels.items():
        assert res.registers > 0, (name, report.log)
        assert res.spill_stores == 0 and res.spill_loads == 0, (name, report.log)
        assert res.stack_frame == 0, (name, report.log)
    assert report.spill_bytes == 0


def test_tiled_kernels_use_shared_memory(reports):
    """v2 kernels really keep their tiles in shared memory (sizes from the source)."""
    sc = reports[("scores.cu", "sm_90")].kernels
    assert sc["scores_v2_tiled"].shared_bytes == 4 * (16 * 16 + 16 * 17)
    assert sc["scores_v1_naive"].shared_bytes == 0
    sm = reports[("softmax.cu", "sm_90")].kernels
    assert sm["softmax_v1_shared"].shared_bytes == 4 * 1024
    assert sm["softmax_v2_warp"].shared_bytes == 4 * 32


@pytest.mark.parametrize("file", [f.name for f in KERNEL_FILES])
def test_header_documents_the_kernel(file):
    """The header names the math, the thread mapping, the versions and the compile line."""
    text = (ROOT / "kernels" / file).read_text()
    header = text.split("#ifndef", 1)[0].split("extern", 1)[0]
    # English or Indonesian headings (comments readers see are Indonesian).
    for words in (("Math", "Rumus"), ("Shapes", "Bentuk"),
                  ("Thread mapping", "Pembagian kerja"), ("Versions", "Versi"),
                  ("nvrtcCompileProgram",)):
        assert any(word in header for word in words), (file, words)
    assert f'"kernels/{file}"' in header
    # Every defined kernel is named in the header's list of versions.
    for name in EXPECTED.get(file, ()):
        assert name in header, (file, name)
    if "INFINITY" in text:
        assert "#ifndef INFINITY" in text and "__int_as_float(0x7f800000)" in text
    # No global variables: every top-level __device__/__constant__ line is a function.
    for line in text.splitlines():
        if line.startswith(("__device__", "__constant__", "static")):
            assert "(" in line, (file, line)


def test_broken_kernel_reports_file_and_line():
    broken = ROOT / "tests" / "fixtures" / "kernels" / "broken.cu"
    with pytest.raises(kernels.CompileError) as info:
        kernels.compile_report(broken)
    message = str(info.value)
    assert 'tests/fixtures/kernels/broken.cu(9): error: identifier "dot" is undefined' in message
    assert info.value.log in message


def test_spills_are_read_from_the_ptxas_report():
    """The zero-spill checks above can fail: a kernel that must spill is reported so."""
    report = kernels.compile_report(ROOT / "tests" / "fixtures" / "kernels" / "spills.cu", arch="sm_80")
    res = report.kernels["many_sums"]
    assert res.registers <= 32, report.log
    assert res.spill_stores > 0 and res.spill_loads > 0 and res.stack_frame > 0, report.log
    assert report.spill_bytes == res.spill_stores + res.spill_loads


@pytest.mark.parametrize("arch", ["sm_70", "sm_75"])
def test_a_report_where_no_shared_memory_is_reserved(arch):
    """sm_70/75 reserve no shared memory per block: scores_v1_naive (none) is
    limited by its warps, not divided by zero."""
    report = kernels.compile_report("kernels/scores.cu", arch=arch)
    naive = report.kernels["scores_v1_naive"]
    assert naive.shared_bytes == 0 and 0 < naive.occupancy <= 1
    assert report.kernels["scores_v2_tiled"].occupancy > 0
    assert "okupansi" in str(report)


def test_arch_must_be_a_real_gpu():
    with pytest.raises(ValueError, match="'arch'.*compute_90"):
        kernels.compile_report(KERNEL_FILES[0], arch="compute_90")


def test_command_line_prints_report(capsys):
    assert cli.main(["kernels/causal_mask.cu", "--arch", "sm_80"]) == 0
    out = capsys.readouterr().out
    assert "causal_mask_v1" in out and "spill 0+0 byte" in out and "ptxas info" in out


# --- the disk cache of compile_report -------------------------------------------------


@pytest.fixture
def report_cache(tmp_path, monkeypatch):
    """An empty cache folder, and a count of real NVRTC compiles."""
    from atensi.kernels import compiling

    try:
        kernels.compile_report(ROOT / "kernels" / "causal_mask.cu")  # NVRTC is there at all
    except RuntimeError as err:
        pytest.skip(str(err))
    monkeypatch.setenv("ATENSI_CACHE", str(tmp_path))
    calls = []
    real = compiling._compile

    def counted(*args):
        calls.append(args[2])
        return real(*args)

    monkeypatch.setattr(compiling, "_compile", counted)
    return tmp_path / "cudacpu", calls


def _same(a, b):
    assert (a.path, a.arch, a.options, a.log, a.cubin, a.seconds) == \
        (b.path, b.arch, b.options, b.log, b.cubin, b.seconds)
    assert a.kernels == b.kernels


def test_a_second_report_comes_from_the_cache(report_cache):
    folder, calls = report_cache
    first = kernels.compile_report(ROOT / "kernels" / "softmax.cu")
    assert calls == ["kernels/softmax.cu"] and len(list(folder.glob("report-*.json"))) == 1
    second = kernels.compile_report(ROOT / "kernels" / "softmax.cu")
    assert calls == ["kernels/softmax.cu"]  # NVRTC was not called again
    _same(first, second)
    assert second.kernels["softmax_v1_shared"].shared_bytes == 4 * 1024


def test_a_changed_constant_or_arch_misses_the_cache(report_cache, monkeypatch):
    from atensi.kernels import registry

    folder, calls = report_cache
    kernels.compile_report(ROOT / "kernels" / "softmax.cu")
    kernels.compile_report(ROOT / "kernels" / "softmax.cu", arch="sm_80")
    assert len(calls) == 2
    monkeypatch.setitem(registry.CONSTANTS, "softmax.cu", {"SOFTMAX_MAX_BLOCK": 512})
    smaller = kernels.compile_report(ROOT / "kernels" / "softmax.cu")
    assert len(calls) == 3 and "-DSOFTMAX_MAX_BLOCK=512" in smaller.options
    # The v1 kernel's shared array has SOFTMAX_MAX_BLOCK floats: the new binary, not the old.
    assert smaller.kernels["softmax_v1_shared"].shared_bytes == 4 * 512
    assert len(list(folder.glob("report-*.json"))) == 3


@pytest.mark.parametrize("damage", ["", "{\"format\": ", "[1, 2]", "{\"format\": \"compile-report-1\", "
                                    "\"log\": \"x\", \"seconds\": 1, \"cubin\": \"!!\"}"],
                         ids=["kosong", "terpotong", "bukan-objek", "cubin-rusak"])
def test_a_corrupt_cache_file_is_rebuilt(report_cache, damage):
    folder, calls = report_cache
    first = kernels.compile_report(ROOT / "kernels" / "softmax.cu")
    (cached,) = folder.glob("report-*.json")
    cached.write_text(damage)
    again = kernels.compile_report(ROOT / "kernels" / "softmax.cu")
    assert len(calls) == 2
    assert (again.log, again.cubin) == (first.log, first.cubin)
    third = kernels.compile_report(ROOT / "kernels" / "softmax.cu")  # the rebuilt file serves
    assert len(calls) == 2 and third.cubin == first.cubin
