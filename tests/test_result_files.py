"""Results JSON with valid syntax and wrong content is refused when read, in Indonesian,
naming the file, the part that is wrong and the command that remakes it."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from atensi import tasks
from atensi.bench import measure, report

ROOT = Path(__file__).resolve().parents[1]
RECALL = json.loads((ROOT / "results" / "eksperimen_ingat.json").read_text(encoding="utf-8"))


def bench_result():
    row = {"label": "NumPy naif", "method": "numpy_naive", "device": "cpu", "B": 1, "T": 32,
           "time_ms": 1.5, "gflops": 2.0, "peak_mib": 0.5, "repeats": 3, "max_rel_err": 0.0,
           "tolerance": 1e-4, "ratio": 1.0}
    gpu_row = dict(row, label="fused", method="gpu_fused", device="gpu", peak_mib=None,
                   latency_bound=False, fp32_peak_share=0.25, launch_floor_ms=0.005)
    return {"schema": measure.SCHEMA, "date": "2026-12-01T10:00:00+00:00", "preset": "quick",
            "seconds": 3.0, "skipped": [],
            "machine": {"cpu": "Uji CPU", "cpu_cores": 2, "numpy": "2.0", "python": "3.11",
                        "cupy": "13.0", "gpu": {"name": "Uji GPU", "cuda_runtime": "12.4",
                                                "nvidia_driver": "550.1"}},
            "rows": [row, gpu_row]}


def write(path: Path, data) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_good_files_load(tmp_path):
    assert tasks.load_experiment("ingat", write(tmp_path / "e.json", RECALL)) == RECALL
    loaded = report.load_results(write(tmp_path / "b.json", bench_result()))
    assert "Uji GPU" in report.caption(loaded, "gpu") and "fused" in report.format_table(loaded)


def _recall(how):
    data = copy.deepcopy(RECALL)
    runs = data["runs"]
    if how == "accuracy above one":
        runs["seragam"]["test_accuracy"] = 1.7
    elif how == "run missing":
        del runs["seragam"]
    elif how == "curve lengths differ":
        runs["tanpa_mask"]["curve"]["val"].pop()
    elif how == "step as text":
        runs["tanpa_skala"]["curve"]["val_step"][0] = "nol"
    elif how == "runs a list":
        data["runs"] = list(runs.values())
    elif how == "not an object":
        data = [1, 2]
    elif how == "training missing":
        del data["training"]
    elif how == "masked accuracy missing":
        del runs["tanpa_mask"]["masked_accuracy"]
    elif how == "accuracy not finite":
        runs["tanpa_mask"]["test_accuracy"] = float("nan")
    return data


@pytest.mark.parametrize("how", ["accuracy above one", "run missing", "curve lengths differ",
                                 "step as text", "runs a list", "not an object",
                                 "training missing", "masked accuracy missing",
                                 "accuracy not finite"])
def test_recall_experiment_with_wrong_content_is_refused(tmp_path, how):
    path = write(tmp_path / "eksperimen_ingat.json", _recall(how))
    with pytest.raises(ValueError) as info:
        tasks.load_experiment("ingat", path)
    message = str(info.value)
    assert f"'{path}'" in message and "isinya tidak sesuai" in message
    assert message.endswith("Buat ulang dengan: python -m atensi.train --experiment ingat")


def _bench(how):
    data = bench_result()
    rows = data["rows"]
    if how == "negative time":
        rows[0]["time_ms"] = -1.0
    elif how == "no rows":
        data["rows"] = []
    elif how == "row without label":
        del rows[1]["label"]
    elif how == "machine missing":
        del data["machine"]
    elif how == "error NaN":
        rows[0]["max_rel_err"] = float("nan")
    elif how == "speed as text":
        rows[0]["gflops"] = "cepat"
    elif how == "shape as float":
        rows[0]["T"] = 32.5
    elif how == "unknown device":
        rows[0]["device"] = "tpu"
    elif how == "gpu row without gpu":
        data["machine"]["gpu"] = None
    elif how == "date cut short":
        data["date"] = "2026"
    elif how == "gpu without driver":
        del data["machine"]["gpu"]["nvidia_driver"]
    return data


@pytest.mark.parametrize("how", ["negative time", "no rows", "row without label",
                                 "machine missing", "error NaN", "speed as text",
                                 "shape as float", "unknown device", "gpu row without gpu",
                                 "date cut short", "gpu without driver"])
def test_bench_results_with_wrong_content_are_refused(tmp_path, how):
    path = write(tmp_path / "bench_gpu.json", _bench(how))
    with pytest.raises(ValueError) as info:
        report.load_results(path)
    message = str(info.value)
    assert str(path) in message and "isinya tidak sesuai" in message
    assert f"Buat ulang dengan: python -m atensi.bench --quick --json {path}" in message


@pytest.mark.parametrize("content", [b"[1, 2]", b"", b"\xff\xfe{}", b'{"schema": 1, "rows": '])
def test_bench_results_that_are_not_results_are_refused_in_indonesian(tmp_path, content):
    path = tmp_path / "bench_gpu.json"
    path.write_bytes(content)
    with pytest.raises(ValueError) as info:
        report.load_results(path)
    message = str(info.value)
    assert str(path) in message and "Buat ulang dengan" in message
    assert ("bukan hasil atensi.bench" in message
            or "tidak bisa dibaca sebagai hasil atensi.bench" in message)


SKALA = json.loads((ROOT / "results" / "eksperimen_skala.json").read_text(encoding="utf-8"))


def _skala(how):
    data = copy.deepcopy(SKALA)
    if how == "training missing":
        del data["training"]
    elif how == "steps as text":
        data["training"]["steps"] = "500"
    elif how == "model missing":
        del data["model"]
    elif how == "loss not finite":
        data["runs"]["dengan"]["val"][3] = float("inf")
    elif how == "loss negative":
        data["runs"]["tanpa"]["train"][0] = -2.0
    elif how == "d_k zero":
        data["d_k"] = 0
    return data


def test_shipped_skala_experiment_loads(tmp_path):
    assert tasks.load_experiment("teks", write(tmp_path / "e.json", SKALA)) == SKALA


@pytest.mark.parametrize("how", ["training missing", "steps as text", "model missing",
                                 "loss not finite", "loss negative", "d_k zero"])
def test_skala_experiment_with_wrong_content_is_refused(tmp_path, how):
    path = write(tmp_path / "eksperimen_skala.json", _skala(how))
    with pytest.raises(ValueError) as info:
        tasks.load_experiment("teks", path)
    message = str(info.value)
    assert f"'{path}'" in message
    assert "Buat ulang dengan: python -m atensi.train --experiment skala" in message
