"""Isi berkas hasil (``results/*.json``) diperiksa saat dibaca.

JSON yang sintaksnya sah belum tentu hasil yang benar: berkas dari versi lama,
disunting tangan, atau berisi angka yang mustahil (waktu negatif, akurasi di
atas 1, kurva yang panjangnya tidak cocok). Pembaca berkas hasil memanggil
satu pemeriksa di sini; yang ditolak memberi satu pesan bahasa Indonesia yang
menyebut berkasnya, bagian yang salah, dan perintah yang membuatnya ulang.

* ``check_skala_experiment(result, path)``: ``--experiment skala``
  (``tasks.load_experiment("teks")`` through ``train.check_experiment_file``;
  its runs and curves are checked first by ``check_experiment``);
* ``check_recall_experiment(result, path)``: ``--experiment ingat``
  (``tasks.load_experiment("ingat")``); ``--experiment rujukan`` is checked
  beside its task (``rujukan_train.check_experiment``);
* ``check_bench_results(result, path)``: ``python -m atensi.bench --json``
  (``atensi.bench.report.load_results``).

Kurva latihan dan hasil eksperimen √d_k yang diberikan sebagai argumen
(``model_plots``, ``tasks.load_experiment``) diperiksa oleh ``check_curve``
dan ``check_experiment``: pesannya menyebut argumennya ("Argumen 'curve' ...").
"""

from __future__ import annotations

import math

from atensi.figure_checks import figure_array

RECALL_REMAKE = "python -m atensi.train --experiment ingat"
BENCH_REMAKE = "python -m atensi.bench --quick --json <path>"


class _Wrong(Exception):
    """One part of a result that is not what it should be: (where, what it must be, got)."""


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _fail(where, want, got):
    raise _Wrong(where, want, got)


def _mapping(value, where, keys=()):
    if not isinstance(value, dict):
        _fail(where, "objek JSON ({...})", _shown(value))
    for key in keys:
        if key not in value:
            _fail(f"bagian '{key}'" if where == "isinya" else f"{where}['{key}']", "ada",
                  "tidak ada")
    return value


def _number(value, where, *, low=None, high=None, above=None, integer=False, none=False):
    if value is None and none:
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or (integer and not float(value).is_integer()) or not math.isfinite(value):
        kind = "bilangan bulat" if integer else "angka berhingga"
        _fail(where, kind + (" atau null" if none else ""), _shown(value))
    if (low is not None and value < low) or (high is not None and value > high) \
            or (above is not None and value <= above):
        bounds = (f"> {above:g}" if above is not None else
                  f"di antara {low:g} dan {high:g}" if high is not None else f">= {low:g}")
        _fail(where, f"angka {bounds}", _shown(value))
    return value


def _text(value, where):
    if not isinstance(value, str) or not value:
        _fail(where, "teks yang tidak kosong", _shown(value))
    return value


def _numbers(value, where, *, length=None, **bounds):
    if not isinstance(value, list) or not value:
        _fail(where, "daftar angka yang tidak kosong", _shown(value))
    if length is not None and len(value) != length:
        _fail(where, f"berisi {length} angka (sepanjang pasangannya)", f"berisi {len(value)}")
    for n, x in enumerate(value):
        _number(x, f"{where}[{n}]", **bounds)
    return value


def _checked(check, result, path, remake, what):
    try:
        check(result)
    except _Wrong as wrong:
        where, want, got = wrong.args
        if path is None:  # the caller names the file (as validation's checks do)
            raise ValueError(f"{where} harus {want}, tetapi {got}. Buat dengan: {remake}") from None
        raise ValueError(
            f"Berkas {what} '{path}' berisi JSON yang isinya tidak sesuai: {where} harus {want}, "
            f"tetapi {got}. Berkas itu mungkin dari versi lama, terpotong saat disalin, atau "
            f"disunting tangan. Buat ulang dengan: {remake}") from None
    return result


# ------------------------------------------------------------------ experiments


def _model_and_training(result):
    model = _mapping(result["model"], "['model']", ("T", "d_model", "n_head", "n_layer"))
    for key in ("T", "d_model", "n_head", "n_layer"):
        _number(model[key], f"['model']['{key}']", integer=True, low=1)
    training = _mapping(result["training"], "['training']", ("steps", "batch", "lr"))
    _number(training["steps"], "['training']['steps']", integer=True, low=1)
    _number(training["batch"], "['training']['batch']", integer=True, low=1)
    _number(training["lr"], "['training']['lr']", above=0)


SKALA_REMAKE = "python -m atensi.train --experiment skala"


def _skala(result):
    _mapping(result, "isinya", ("model", "training", "d_k", "runs"))
    _model_and_training(result)
    _number(result["d_k"], "['d_k']", integer=True, low=1)
    runs = _mapping(result["runs"], "['runs']", ("dengan", "tanpa"))
    for name in ("dengan", "tanpa"):
        where = f"['runs']['{name}']"
        run = _mapping(runs[name], where, ("step", "train", "val_step", "val"))
        steps = _numbers(run["step"], f"{where}['step']", low=0)
        _numbers(run["train"], f"{where}['train']", length=len(steps), low=0)
        steps = _numbers(run["val_step"], f"{where}['val_step']", low=0)
        _numbers(run["val"], f"{where}['val']", length=len(steps), low=0)


def check_skala_experiment(result, path, remake=SKALA_REMAKE):
    """Hasil ``--experiment skala``: model, pelatihan, d_k, dan kurva "dengan" dan
    "tanpa" berisi angka berhingga yang panjangnya cocok; selain itu ``ValueError``
    (``path=None``: pesannya tanpa nama berkas, untuk pemanggil yang menyebutnya)."""
    return _checked(_skala, result, path, remake, "eksperimen")


def check_curve(curve, name: str, pairs=(("step", "train"), ("val_step", "val"))) -> dict:
    """A training curve: a dict whose ``pairs`` of keys hold number sequences of
    equal, non-zero length (steps and their values)."""
    if not isinstance(curve, dict):
        raise TypeError(f"Argumen '{name}' harus dict kurva latihan (hasil atensi.train.train), "
                        f"tetapi yang diterima {type(curve).__name__}.")
    for x, y in pairs:
        missing = [k for k in (x, y) if k not in curve]
        if missing:
            raise ValueError(
                f"Argumen '{name}' tidak punya kunci {', '.join(repr(k) for k in missing)} "
                f"(kuncinya: {', '.join(map(repr, list(curve)[:6])) or 'tidak ada'}). Berikan "
                "kurva dari atensi.train.train atau model.curve.")
        xs = figure_array(curve[x], f"{name}[{x!r}]", "Berikan kurva dari atensi.train.train.",
                          ndim=1, shape_name="daftar angka", finite=True)
        ys = figure_array(curve[y], f"{name}[{y!r}]", "Berikan kurva dari atensi.train.train.",
                          finite=True)
        if len(ys) != len(xs):
            raise ValueError(
                f"Argumen '{name}': '{x}' ({len(xs)} nilai) dan '{y}' ({len(ys)} nilai) harus "
                "sama panjang, satu nilai per langkah.")
    return curve


def check_experiment(result, name: str = "result") -> dict:
    """The √d_k experiment (``--experiment skala``): runs "dengan" and "tanpa", each a
    curve with its attention entropy per checkpoint."""
    hint = "Buat dengan: python -m atensi.train --experiment skala"
    if not isinstance(result, dict) or not isinstance(result.get("runs"), dict) \
            or set(result["runs"]) != {"dengan", "tanpa"} \
            or not isinstance(result.get("d_k"), int) or isinstance(result.get("d_k"), bool):
        raise ValueError(
            f"Argumen '{name}' harus hasil eksperimen √d_k: dict dengan 'd_k' (bilangan bulat) "
            f"dan 'runs' berisi 'dengan' dan 'tanpa', tetapi yang diterima {result!r:.80}. {hint}")
    for key, run in result["runs"].items():
        check_curve(run, f"{name}['runs'][{key!r}]",
                    (("step", "train"), ("val_step", "val"), ("val_step", "entropy")))
        if figure_array(run["entropy"], "entropy", hint).ndim != 2:
            raise ValueError(f"Argumen '{name}['runs'][{key!r}]['entropy']' harus berbentuk "
                             f"(titik ukur, lapisan). {hint}")
    return result


RECALL_RUNS = ("tanpa_skala", "tanpa_mask", "seragam")


def _recall(result):
    _mapping(result, "isinya", ("model", "training", "runs"))
    _model_and_training(result)
    runs = _mapping(result["runs"], "['runs']", RECALL_RUNS)
    for name in RECALL_RUNS:
        where = f"['runs']['{name}']"
        run = _mapping(runs[name], where, ("test_accuracy", "curve")
                       + (("masked_accuracy",) if name == "tanpa_mask" else ()))
        for key in ("test_accuracy", "train_accuracy", "masked_accuracy"):
            if key in run:
                _number(run[key], f"{where}['{key}']", low=0, high=1)
        curve = _mapping(run["curve"], f"{where}['curve']", ("val_step", "val"))
        steps = _numbers(curve["val_step"], f"{where}['curve']['val_step']", low=0)
        _numbers(curve["val"], f"{where}['curve']['val']", length=len(steps), low=0, high=1)
        if "step" in curve or "train" in curve:
            _mapping(curve, f"{where}['curve']", ("step", "train"))
            steps = _numbers(curve["step"], f"{where}['curve']['step']", low=0)
            _numbers(curve["train"], f"{where}['curve']['train']", length=len(steps), low=0)


def check_recall_experiment(result, path, remake=RECALL_REMAKE):
    """Hasil ``--experiment ingat``: tiga pelatihan (tanpa skala, tanpa mask, seragam),
    akurasi 0..1 dan kurva yang panjangnya cocok; selain itu ``ValueError``."""
    return _checked(_recall, result, path, remake, "eksperimen")


# ------------------------------------------------------------------ bench


def _bench(result):
    _mapping(result, "isinya", ("date", "preset", "machine", "rows"))
    _text(result["date"], "['date']")
    if len(result["date"]) < 10:
        _fail("['date']", "tanggal ISO (YYYY-MM-DD...)", _shown(result["date"]))
    _text(result["preset"], "['preset']")
    machine = _mapping(result["machine"], "['machine']", ("cpu", "cpu_cores", "numpy", "gpu"))
    _text(machine["cpu"], "['machine']['cpu']")
    _number(machine["cpu_cores"], "['machine']['cpu_cores']", integer=True, low=1)
    if machine["gpu"] is not None:
        gpu = _mapping(machine["gpu"], "['machine']['gpu']", ("name", "cuda_runtime"))
        _text(gpu["name"], "['machine']['gpu']['name']")
        if not (gpu.get("nvidia_driver") or "cuda_driver" in gpu):
            _fail("['machine']['gpu']['nvidia_driver']", "ada", "tidak ada")
        _mapping(machine, "['machine']", ("cupy",))
    rows = result["rows"]
    if not isinstance(rows, list) or not rows:
        _fail("['rows']", "daftar baris yang tidak kosong", _shown(rows))
    for n, row in enumerate(rows):
        where = f"['rows'][{n}]"
        _mapping(row, where, ("label", "method", "device", "B", "T", "time_ms", "gflops",
                              "peak_mib", "ratio", "max_rel_err"))
        _text(row["label"], f"{where}['label']")
        _text(row["method"], f"{where}['method']")
        if row["device"] not in ("cpu", "gpu"):
            _fail(f"{where}['device']", "'cpu' atau 'gpu'", _shown(row["device"]))
        if row["device"] == "gpu" and machine["gpu"] is None:
            _fail(f"{where}['device']", "'cpu' (['machine']['gpu'] kosong)", "'gpu'")
        for key in ("B", "T"):
            _number(row[key], f"{where}['{key}']", integer=True, low=1)
        _number(row["time_ms"], f"{where}['time_ms']", above=0)
        _number(row["gflops"], f"{where}['gflops']", low=0)
        _number(row["peak_mib"], f"{where}['peak_mib']", low=0, none=True)
        _number(row["ratio"], f"{where}['ratio']", above=0)
        _number(row["max_rel_err"], f"{where}['max_rel_err']", low=0)
        if "tolerance" in row:
            _number(row["tolerance"], f"{where}['tolerance']", above=0)
        if "fp32_peak_share" in row:
            _number(row["fp32_peak_share"], f"{where}['fp32_peak_share']", low=0, none=True)
        if "latency_bound" in row and not isinstance(row["latency_bound"], bool):
            _fail(f"{where}['latency_bound']", "true atau false", _shown(row["latency_bound"]))


def check_bench_results(result, path, remake=BENCH_REMAKE):
    """Hasil ``python -m atensi.bench --json``: mesin, tanggal, dan baris yang setiap
    angkanya mungkin (waktu > 0, galat >= 0...); selain itu ``ValueError``."""
    return _checked(_bench, result, path, remake, "hasil atensi.bench")
