"""Perulangan pelatihan yang dipakai setiap tugas latih (``atensi.tasks``): model
karakter pada prosa buku, model kata *associative recall*, model rujukan *dia*.

Satu langkah: ambil batch acak dari ``rng``, hitung loss dan gradien, potong
norma gradien ke ``clip``, perbarui bobot dengan Adam pada laju belajar
jadwalnya (naik linear selama *warm-up*, lalu turun kosinus). Di langkah 0,
setiap ``eval_every`` langkah, dan di langkah terakhir model diukur dan satu
baris kemajuan dicetak. Setiap tugas hanya menyediakan dua fungsi: cara
mengambil batch dan cara mengukur model.

Juga di sini, karena setiap tugas mencatat larinya dengan cara yang sama: beban
CPU, nama berkas bertanggal, laporan waktu dan target, dan berkas hasil JSON.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from . import blas, files, model_checks
from . import validation as _val
from .formatting import id_float
from .model import Adam, TinyGPT
from .shipped import results_dir

RESULTS = results_dir()
TIME_LIMIT = 120  # seconds, wall clock and CPU, for a full training run
WALL_CLOCK = "waktu jam dinding"  # the name of the one target that measures the machine's load


def learning_rate(step, steps, lr, warmup):
    """Naik linear selama ``warmup`` langkah, lalu turun kosinus ke 0,1 × lr."""
    step = _val.check_int(step, "step", low=0)
    steps = _val.check_int(steps, "steps", low=1)
    lr = _val.check_positive(lr, "lr")
    warmup = _val.check_int(warmup, "warmup", low=0)
    if step <= warmup and warmup > 0:  # warmup = 0: the cosine starts at once
        return lr * step / warmup
    progress = (step - warmup) / max(1, steps - warmup)
    return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def clip_gradients(grads, limit):
    """Kecilkan semua gradien (di tempat) bila norma gabungannya melebihi ``limit``;
    mengembalikan norma sebelum dipotong."""
    norm = math.sqrt(sum(float((g * g).sum()) for g in grads.values()))
    if norm > limit:
        factor = np.float32(limit / norm)
        for g in grads.values():
            g *= factor
    return norm


def check_settings(model, *, steps, batch_size, lr, warmup, eval_every, clip, seed, log,
                   attention=None, attention_backward=None):
    """Tolak pengaturan pelatihan yang salah, sebelum pekerjaan apa pun dimulai."""
    model_checks.check_attention_function(attention, "attention")
    model_checks.check_attention_function(attention_backward, "attention_backward")
    for name, value in (("steps", steps), ("batch_size", batch_size), ("eval_every", eval_every)):
        _val.check_int(value, name, low=1)
    _val.check_int(warmup, "warmup", low=0)
    _val.check_positive(lr, "lr")
    _val.check_positive(clip, "clip")
    _val.check_int(seed, "seed", low=0)
    model_checks.check_printer(log, "log")
    _val.check_instance(model, TinyGPT, "model", "atensi.model.TinyGPT")


def fit(model: TinyGPT, draw, measure, *, steps, batch_size, lr, warmup, eval_every, clip,
        seed, log=print, positions=None, attention=None, attention_backward=None):
    """Latih ``model`` di tempat; mengembalikan kurva (dict array float64).

    ``draw(rng, batch_size)``: satu batch ``(x, y)``. ``measure()``: ukuran model
    saat ini sebagai ``(nilai, teks)``: ``nilai`` dict nama -> angka yang masuk
    kurva (misalnya ``{"val": ...}``), ``teks`` potongan baris kemajuan.
    ``positions``, ``attention``, ``attention_backward``: diteruskan ke
    ``model.loss_and_grads``. ``log``: fungsi cetak (``None`` = diam).

    Kurva: ``step``, ``train`` (loss batch setiap langkah), ``grad_norm``,
    ``val_step`` (langkah setiap pengukuran) dan setiap nama dari ``measure``;
    lalu ``seconds`` dan ``cpu_seconds``.
    """
    check_settings(model, steps=steps, batch_size=batch_size, lr=lr, warmup=warmup,
                   eval_every=eval_every, clip=clip, seed=seed, log=log, attention=attention,
                   attention_backward=attention_backward)
    rng = np.random.default_rng(seed)
    opt = Adam(model.params, lr=lr)
    curve = {k: [] for k in ("step", "train", "grad_norm", "val_step")}
    start, cpu_start = time.perf_counter(), time.process_time()

    def checkpoint(step):
        curve["val_step"].append(step)
        values, text = measure()
        for name, value in values.items():
            curve.setdefault(name, []).append(value)
        if log:
            last = id_float(curve["train"][-1], 3) if curve["train"] else "  –  "
            log(f"langkah {step:>5}/{steps}  loss latih {last}  {text}  "
                f"({id_float(time.perf_counter() - start, 1)} s)")

    with blas.one_thread():
        checkpoint(0)
        for step in range(1, steps + 1):
            x, y = draw(rng, batch_size)
            loss, grads = model.loss_and_grads(x, y, attention=attention, positions=positions,
                                               attention_backward=attention_backward)
            curve["grad_norm"].append(clip_gradients(grads, clip))
            opt.step(grads, lr=learning_rate(step, steps, lr, warmup))
            curve["step"].append(step)
            curve["train"].append(loss)
            if step % eval_every == 0 or step == steps:
                checkpoint(step)
    out = {k: np.asarray(v, dtype=np.float64) for k, v in curve.items() if len(v)}
    out["seconds"] = np.float64(time.perf_counter() - start)
    out["cpu_seconds"] = np.float64(time.process_time() - cpu_start)
    return out


# ------------------------------------------------------------ run records


def cpu_load():
    """Beban CPU rata-rata satu menit, sebagai teks (``"tidak diketahui"`` bila tidak ada)."""
    try:
        return f"{id_float(os.getloadavg()[0], 1)}"
    except OSError:
        return "tidak diketahui"


def dated_path(path) -> Path:
    """``results/model_kecil.npz`` → ``results/model_kecil-20261201-091500.npz`` (UTC), dipesan.

    Nama itu dibuat kosong secara eksklusif, jadi dua lari yang mulai di detik
    yang sama mendapat ``…-091500.npz`` dan ``…-091500-2.npz``. Foldernya
    diperiksa sebelum pelatihan (``files.check_output_path``). Pesanan yang tidak
    terisi dihapus oleh :func:`release_reservations`.
    """
    path = Path(path)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
    number = 1
    while True:
        extra = "" if number == 1 else f"-{number}"
        name = path.with_name(f"{path.stem}-{stamp}{extra}{path.suffix}")
        try:
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            number += 1
            continue
        except OSError as err:
            raise files.write_problem(name, err) from None
        _reserved.append(name)
        try:
            files.check_output_path(name, "berkas hasil")
        except ValueError:
            release_reservations()
            raise
        return name


_reserved: list = []


def release_reservations() -> None:
    """Remove the names :func:`dated_path` reserved that are still empty (a run that failed)."""
    while _reserved:
        name = _reserved.pop()
        with contextlib.suppress(OSError):
            if os.lstat(name).st_size == 0:
                os.unlink(name)


def save_or_rescue(write, out, log, what="Bobot") -> Path:
    """``write(out)``; when ``out`` cannot be written, the result goes to a temporary
    folder instead and the error (``files.WriteError``) says where it is. ``~`` in
    ``out`` is the home folder (never a folder literally named ``~``)."""
    out = Path(out).expanduser()
    try:
        write(out)
        return Path(out)
    except OSError as err:
        problem = files.write_problem(out, err)
    name = Path(out).name
    if len(os.fsencode(name)) > 200:
        name = "hasil" + Path(out).suffix[:20]
    try:
        rescue = Path(tempfile.mkdtemp(prefix="atensi-hasil-")) / name
        write(rescue)
    except OSError:
        raise files.WriteError(problem.errno, f"{problem} Hasil lari ini juga tidak bisa "
                               "disimpan di folder sementara, jadi hilang.", out) from None
    if _reserved and Path(out) in _reserved:
        release_reservations()
    raise files.WriteError(problem.errno, f"{problem} {what} hasil lari ini disimpan "
                           f"sementara di '{rescue}'; pindahkan dengan: mv '{rescue}' "
                           "PATH_LAIN", out)


def time_checks(info):
    """Target waktu sebuah lari penuh: [(nama, tercapai?)] untuk ``report_targets``."""
    return [(f"{WALL_CLOCK} ≤ {TIME_LIMIT} s", info["seconds"] <= TIME_LIMIT),
            (f"waktu CPU ≤ {TIME_LIMIT} s", info["cpu_seconds"] <= TIME_LIMIT)]


def report_time(log, info):
    """Baris penutup: waktu jam dinding, waktu CPU, dan beban CPU sekarang."""
    log("")
    log(f"Selesai dalam {id_float(info['seconds'], 1)} s; waktu CPU proses "
        f"{id_float(info['cpu_seconds'], 1)} s (beban CPU sekarang {info['load']}).")


def report_targets(log, checks, info):
    """Satu baris ``Target: ...; ...``, dan penjelasan bila hanya jam dinding yang lewat."""
    log("Target: " + "; ".join(f"{name}: {'ya' if ok else 'TIDAK'}" for name, ok in checks))
    if info["seconds"] > TIME_LIMIT >= info["cpu_seconds"]:
        log(f"Waktu jam dinding melebihi {TIME_LIMIT} s karena CPU sedang dipakai proses lain; "
            "pelatihan memakai satu thread, jadi di mesin yang tenang waktunya mendekati "
            "waktu CPU.")


def write_result(out, result, log):
    """Tulis hasil eksperimen ``result`` (dict) sebagai JSON ke ``out`` (lewat berkas sementara)."""
    text = json.dumps(result, ensure_ascii=False, indent=1)
    out = save_or_rescue(lambda path: files.write_text(path, text), out, log, "Hasil")
    log(f"Hasil ditulis ke {out}.")


def read_result(path, remake):
    """Baca hasil eksperimen JSON; ``remake``: perintah yang membuatnya."""
    path = files.as_path(path).expanduser()
    text = files.read_text(path, "eksperimen", remake)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"Berkas eksperimen '{path}' rusak ({err}). Buat ulang dengan: {remake}"
        ) from err
