"""atensi.bench: the cost table runs, has its columns, and records the machine.

No timing is asserted (the machine is shared); the numbers are only checked
for being consistent with each other (GFLOP/s from the time, ratios from the
fastest row).
"""

import dataclasses
import datetime as dt
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import kernels
from atensi.bench import measure, report

ROOT = Path(__file__).resolve().parents[1]
# The PyTorch CPU row appears only where PyTorch is installed (never required).
_TORCH_ROW = ["torch_sdpa_cpu"] if measure._torch() is not None else []


@pytest.fixture(scope="module")
def tiny():
    """Every kind of CPU row once, on small shapes (preset 'tiny')."""
    return measure.run("tiny", device="cpu")


@pytest.mark.slow
def test_rows_cover_every_cpu_method_and_shape(tiny):
    shapes = {}
    for r in tiny["rows"]:
        shapes.setdefault((r["B"], r["T"]), []).append(r["method"])
    cpu = ["numpy_naive", "numpy_blocked", "numpy_fast"] + _TORCH_ROW
    assert shapes == {
        (1, 32): cpu + ["cpu_chain_v2", "cpu_fused"],
        (1, 256): cpu,
        (2, 48): cpu,
    }
    assert all(r["device"] == "cpu" and r["H"] == 12 and r["d_k"] == 64 for r in tiny["rows"])


def test_numbers_are_consistent(tiny):
    for r in tiny["rows"]:
        assert r["time_ms"] > 0 and r["repeats"] >= 1
        want = 4 * r["B"] * 12 * r["T"] ** 2 * 64 / 2 / (r["time_ms"] / 1e3) / 1e9
        assert math.isclose(r["gflops"], want, rel_tol=1e-9)
        if r["method"] == "torch_sdpa_cpu":  # tracemalloc cannot see PyTorch's memory
            assert r["peak_mib"] is None and r["max_rel_err"] <= 1e-4, r
            continue
        assert r["peak_mib"] > 0
        assert r["max_rel_err"] <= 1e-5, r
        assert r["fp32_peak_share"] is None  # CPU rows
    for shape in {(r["B"], r["T"]) for r in tiny["rows"]}:
        rows = [r for r in tiny["rows"] if (r["B"], r["T"]) == shape]
        assert min(r["ratio"] for r in rows) == 1.0
        fastest = min(r["time_ms"] for r in rows)
        for r in rows:
            assert math.isclose(r["ratio"], r["time_ms"] / fastest)


def test_naive_memory_grows_with_T_squared_blocked_does_not(tiny):
    def peak(method):
        return next(r["peak_mib"] for r in tiny["rows"] if (r["method"], r["T"]) == (method, 256))

    one_square = 12 * 256 * 256 * 4 / 2**20  # one (12, T, T) float32 array
    assert peak("numpy_naive") >= 2 * one_square  # scores and weights at least
    assert peak("numpy_blocked") < peak("numpy_naive") / 3  # 128 × 128 tiles


def test_table_has_the_indonesian_columns(tiny):
    text = report.format_table(tiny, "cpu")
    header = text.splitlines()[0]
    for column in report.COLUMNS:
        assert column in header
    assert report.FP32_COLUMN not in header  # CPU only
    for r in tiny["rows"]:
        assert r["label"] in text
    assert "1,00×" in text
    lines = [line for line in text.splitlines()[2:] if not set(line) <= {"-", " "}]
    assert len(lines) == len(tiny["rows"])


def test_markdown_table(tiny):
    lines = report.format_table(tiny, "cpu", markdown=True).splitlines()
    assert lines[0].startswith("| metode |") and set(lines[1]) <= set("|-: ")
    assert len(lines) == 2 + len(tiny["rows"])
    assert all(line.count("|") == len(report.COLUMNS) + 1 for line in lines)


def test_wrong_result_is_flagged(tiny):
    rows = [dict(r) for r in tiny["rows"]]
    rows[1]["max_rel_err"] = 0.5
    assert "SALAH" in report.format_table(rows)
    assert "SALAH" not in report.format_table(tiny)


def test_json_records_machine_and_date(tiny, tmp_path):
    path = report.save_results(tiny, tmp_path / "hasil" / "bench.json")
    loaded = report.load_results(path)
    assert loaded == json.loads(json.dumps(tiny))
    m = loaded["machine"]
    assert m["cpu"] and m["cpu_cores"] >= 1 and m["python"] and m["numpy"] == np.__version__
    assert dt.datetime.fromisoformat(loaded["date"]).tzinfo is not None
    assert loaded["preset"] == "tiny"
    if not kernels.gpu_available():
        assert m["gpu"] is None
    assert "Diukur pada" in report.caption(loaded) and loaded["date"][:10] in report.caption(loaded)


def test_square_method_too_big_is_skipped_and_said_so():
    preset = dataclasses.replace(measure.PRESETS["tiny"], max_square_bytes=2**20, emulation_T=())
    results = measure.run(preset, device="cpu")
    assert results["preset"] == "custom"
    assert ("numpy_naive", 256) not in {(r["method"], r["T"]) for r in results["rows"]}
    assert results["skipped"] == [
        {"method": "numpy_naive", "device": "cpu", "B": 1, "T": 256,
         "why": "array (B, H, T, T) lebih dari 1 MiB"}
    ]


def test_emulation_rows_need_a_compiler(monkeypatch):
    """Without g++ (say, on a GPU machine) the CPU-emulation rows are left out, and said so."""
    monkeypatch.setattr(kernels.loading, "_cpu_available", lambda: False)
    preset = dataclasses.replace(measure.PRESETS["tiny"], sweep=(), batches=())
    results = measure.run(preset, device="cpu")
    assert [r["method"] for r in results["rows"]] == (
        ["numpy_naive", "numpy_blocked", "numpy_fast"] + _TORCH_ROW)
    assert [(s["method"], s["T"]) for s in results["skipped"]] == [("cpu_chain_v2", 32), ("cpu_fused", 32)]
    assert all("g++" in s["why"] for s in results["skipped"])


def test_load_results_without_a_file_gives_none(tmp_path):
    assert report.load_results(tmp_path / "tidak_ada.json") is None


def test_load_results_refuses_other_json(tmp_path):
    path = tmp_path / "lain.json"
    path.write_text('{"halo": 1}')
    with pytest.raises(ValueError, match="bukan hasil atensi.bench"):
        report.load_results(path)


def test_bad_arguments():
    with pytest.raises(ValueError, match="'preset'"):
        measure.run("sedang")
    with pytest.raises(ValueError, match="'device'"):
        measure.run("tiny", device="tpu")
    if not kernels.gpu_available():
        with pytest.raises(RuntimeError, match="device='gpu'"):
            measure.run("tiny", device="gpu")


def _row(method, B, T, ms, mib, share=None):
    return {"method": method, "device": "gpu" if share is not None or method.startswith(("gpu", "cupy")) else "cpu",
            "B": B, "T": T, "time_ms": ms, "peak_mib": mib, "fp32_peak_share": share}


def test_summary_computes_the_ratios():
    rows = [
        _row("numpy_naive", 1, 1024, 120.0, 144.0),
        _row("numpy_blocked", 1, 1024, 40.0, 6.0),
        _row("gpu_chain_v1", 8, 1024, 30.0, 800.0),
        _row("cupy_cublas", 8, 1024, 3.0, 900.0),
        _row("gpu_fused", 8, 1024, 2.0, 24.0, share=0.25),
    ]
    s = report.summary({"rows": rows})
    assert s == {
        "cpu_blocked_speedup": 3.0,
        "cpu_blocked_memory_ratio": 6.0 / 144.0,
        "gpu_fused_vs_v1": 15.0,
        "gpu_fused_vs_cublas": 1.5,
        "gpu_fused_fp32_share": 0.25,
    }
    assert all(v is None for v in report.summary({"rows": rows[2:3]}).values())


def test_flop_count():
    assert measure.flops(1, 1024) == 4 * 12 * 1024**2 * 64 / 2
    assert measure.flops(8, 1024, causal=False) == 4 * 8 * 12 * 1024**2 * 64


@pytest.mark.slow
def test_command_line(tmp_path):
    out = tmp_path / "bench.json"
    proc = subprocess.run(
        [sys.executable, "-m", "atensi.bench", "--preset", "tiny", "--device", "cpu",
         "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, env=dict(os.environ),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for column in report.COLUMNS:
        assert column in proc.stdout
    assert "NumPy berubin" in proc.stdout and "Diukur pada" in proc.stdout
    assert "NumPy cepat" in proc.stdout and "Model roofline per kernel" in proc.stdout
    assert report.load_results(out)["rows"]


@kc.gpu_test
def test_gpu_rows():
    results = measure.run("tiny", device="gpu")
    methods = {r["method"] for r in results["rows"]}
    assert {"cupy_cublas", "gpu_chain_v1", "gpu_chain_v2", "gpu_fused"} <= methods
    # Each row against its own tolerance: PyTorch's SDPA sums in its own order.
    for r in results["rows"]:
        assert r["device"] == "gpu" and r["max_rel_err"] <= r["tolerance"], r
    assert results["machine"]["gpu"]["name"]
    assert report.FP32_COLUMN in report.format_table(results, "gpu")


def test_backward_rows_plain_and_blocked():
    b = measure.backward_comparison(T=256, block=64, repeats=1, max_seconds=0.1)
    assert b["plain"]["T"] == 256 and b["blocked"]["max_rel_err"] < 1e-5
    assert 0 < b["memory_ratio"] < 1 / 2
    text = "\n".join(report.backward_lines(b))
    assert "berubin / biasa" in text and "MiB" in text and "target" not in text


# ---- results/targets.json and scripts/check_targets.py ----------------------------------

TARGETS = json.loads((ROOT / "results" / "targets.json").read_text(encoding="utf-8"))["targets"]


def _check_targets():
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_targets", ROOT / "scripts" / "check_targets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _full_results(**changes):
    """A results file as the CLI writes it, with every target measured."""
    rows = [
        _row("numpy_naive", 1, 1024, 120.0, 144.0),
        _row("numpy_blocked", 1, 1024, 40.0, 6.0),
        _row("gpu_chain_v1", 8, 1024, 30.0, 800.0),
        _row("cupy_cublas", 8, 1024, 3.0, 900.0),
        _row("gpu_fused", 8, 1024, 2.0, 24.0, share=0.25),
    ]
    rows = [dict(row, label=row["method"], gflops=1.0, ratio=1.0, max_rel_err=0.0) for row in rows]
    machine = {"cpu": "x86_64", "cpu_cores": 2, "numpy": "2.1.3", "cupy": "13.3.0",
               "gpu": {"name": "NVIDIA H200", "cuda_runtime": 12060, "nvidia_driver": "560.35"}}
    results = {
        "schema": measure.SCHEMA, "date": "2026-12-01T00:00:00+00:00", "preset": "full",
        "machine": machine, "rows": rows,
        "cpu_vs_torch": [{"ratio": 1.4}, {"ratio": 1.1}],
        "compile_and_emulation": {"compile_seconds": 3.0, "chain_ms": {"v1": 900.0, "fused": 300.0}},
        "backward": {"plain": {"B": 1, "T": 1024}, "memory_ratio": 0.05},
    }
    results.update(changes)
    return results


def test_targets_are_data_outside_the_library():
    for module in (ROOT / "src" / "atensi" / "bench").glob("*.py"):
        source = module.read_text(encoding="utf-8")
        assert "target ≥" not in source and "target ≤" not in source, module.name
    for name, target in TARGETS.items():
        assert ("min" in target) != ("max" in target), name
        assert target["what"], name


def test_every_target_is_read_from_a_results_file():
    check = _check_targets()
    assert set(TARGETS) <= set(check.measured(_full_results()))
    lines, ok = check.check(_full_results(), TARGETS)
    assert ok and len(lines) == len(TARGETS) and all("terpenuhi" in line for line in lines)


def test_a_missed_target_fails_and_an_unmeasured_one_is_said():
    check = _check_targets()
    slow = _full_results(compile_and_emulation={"compile_seconds": 9.5, "chain_ms": {}})
    lines, ok = check.check(slow, TARGETS)
    assert not ok
    assert any(line.startswith("compile_seconds: 9,5") and "TIDAK terpenuhi" in line for line in lines)
    assert any(line.startswith("emulated_chain_ms: tidak diukur") for line in lines)
    # The backward memory target is stated for B = 1, T = 1024 only.
    other = _full_results(backward={"plain": {"B": 1, "T": 256}, "memory_ratio": 0.3})
    assert "backward_memory_ratio" not in check.measured(other)


def test_check_targets_command(tmp_path):
    check = _check_targets()
    path = report.save_results(_full_results(cpu_vs_torch=[{"ratio": 0.5}]), tmp_path / "hasil.json")
    assert check.main([str(path)]) == 1
    with pytest.raises(SystemExit) as stop:
        check.main([str(tmp_path / "tidak_ada.json")])
    assert stop.value.code == 2
