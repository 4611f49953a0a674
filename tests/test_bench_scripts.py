"""scripts/bench_torch_cpu.py and scripts/bench_compile.py: the measurements
that are scripts, not library, and what they add to a bench results file."""

import importlib.util
from pathlib import Path

import pytest

from atensi import kernels
from atensi.bench import measure, report

ROOT = Path(__file__).resolve().parents[1]


def _script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


torch_cpu = _script("bench_torch_cpu")
compile_timing = _script("bench_compile")


def test_comparison_with_torch_is_interleaved_and_formatted():
    pytest.importorskip("torch")
    got = torch_cpu.compare_with_torch([(1, 40), (2, 17)], repeats=3, threads=2, heads=2, d_k=8)
    assert [(c["B"], c["T"]) for c in got] == [(1, 40), (2, 17)]
    for c in got:
        assert c["threads"] == 2 and c["repeats"] == 3
        assert c["fast_ms"] > 0 and c["torch_ms"] > 0
        assert c["ratio"] == pytest.approx(c["torch_ms"] / c["fast_ms"])
        assert c["max_rel_err"] <= 1e-5
    lines = torch_cpu.torch_comparison_lines(got)
    assert "berselang-seling" in lines[0] and "B = 2, T = 17" in lines[2]
    assert "×" in lines[1] and " ms terhadap " in lines[1] and "." not in lines[1].split("×")[0]


def test_comparison_without_torch_is_empty(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_torch(name, *args, **kwargs):
        if name == "torch":
            raise ImportError("tidak ada torch")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    assert torch_cpu.compare_with_torch([(1, 8)]) == []
    assert torch_cpu.torch_comparison_lines([]) == []


@pytest.mark.slow
def test_compile_and_emulation_are_measured():
    e = compile_timing.compile_and_emulation(archs=("sm_90",), T=16)
    assert e["compile_files"] == len(list(kernels.kernels_dir().glob("*.cu")))
    assert e["compile_seconds"] > 0 and e["spill_bytes"] == 0
    assert set(e["chain_ms"]) == {"v1", "v2", "fused"}
    assert all(ms > 0 for ms in e["chain_ms"].values())
    text = "\n".join(compile_timing.compile_lines(e, T=16))
    assert "NVRTC" in text and "T = 16" in text and "target" not in text



def _results():
    row = {"label": "NumPy naif", "method": "numpy_naive", "device": "cpu", "B": 1, "T": 32,
           "time_ms": 1.5, "gflops": 2.0, "peak_mib": 0.5, "repeats": 3, "max_rel_err": 0.0,
           "tolerance": 1e-4, "ratio": 1.0}
    machine = {"cpu": "x86_64", "cpu_cores": 2, "numpy": "2.1.3", "gpu": None}
    return {"schema": measure.SCHEMA, "date": "2026-12-01T10:00:00+00:00", "preset": "quick",
            "machine": machine, "rows": [row]}


def test_scripts_add_their_numbers_to_a_results_file(tmp_path, monkeypatch, capsys):
    path = report.save_results(_results(), tmp_path / "hasil.json")
    monkeypatch.setattr(torch_cpu, "compare_with_torch", lambda shapes, repeats: [{"ratio": 1.5}])
    monkeypatch.setattr(torch_cpu, "torch_comparison_lines", lambda c: ["baris"])
    assert torch_cpu.main(["--preset", "tiny", "--json", str(path)]) == 0
    assert report.load_results(path)["cpu_vs_torch"] == [{"ratio": 1.5}]
    assert "Ditambahkan ke" in capsys.readouterr().out


def test_scripts_refuse_a_results_file_that_is_not_there(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(compile_timing, "compile_and_emulation", lambda: {})
    monkeypatch.setattr(compile_timing, "compile_lines", lambda measured: [])
    missing = tmp_path / "tidak_ada.json"
    with pytest.raises(SystemExit) as exit_info:
        compile_timing.main(["--json", str(missing)])
    assert exit_info.value.code != 0 and not missing.exists()
    assert "python -m atensi.bench --quick --json" in capsys.readouterr().err
