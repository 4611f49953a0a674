"""Satu pelari untuk setiap tugas latih, dengan satu aturan untuk berkas buku.

Aturannya (sama untuk setiap tugas di ``atensi.tasks``):

* berkas yang dikirim buku (bobot, eksperimen, korpus, dan setiap berkas lain
  di ``results/`` yang bukan berkas bertanggal) tidak pernah ditulis lewat
  ``out``/``--out``; permintaan itu ditolak sebelum pelatihan;
* hanya pelatihan penuh bawaan (tanpa ``quick``, ``steps`` dan ``out``) yang
  menulis berkas bobot buku, dan hanya bila semua target tercapai (target
  waktu jam dinding tidak dihitung: itu bergantung pada beban mesin, waktu
  CPU-lah targetnya); bila tidak, bobotnya masuk ke berkas bertanggal di
  sebelahnya, jadi tidak ada yang hilang;
* ``steps`` tanpa ``out`` menulis berkas bertanggal; ``quick`` tanpa ``out``
  tidak menulis apa pun;
* eksperimen penuh bawaan menulis berkas eksperimen buku.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import corpus as corpus_mod
from .. import files, training_loop
from ..shipped import results_dir
from . import all_tasks, get

_DATED = re.compile(r"-\d{8}-\d{6}(-\d+)?$")


def shipped_files() -> set:
    """Berkas yang dikirim buku (bobot dan eksperimen setiap tugas, korpus, dan setiap
    berkas lain di folder hasil yang bukan berkas bertanggal), sebagai path absolut."""
    named = {corpus_mod.SNAPSHOT}
    for task in all_tasks():
        named.add(task.weights)
        if task.experiment_file is not None:
            named.add(task.experiment_file)
    out = {Path(p).resolve() for p in named}
    for folder in {Path(p).resolve().parent for p in named} | {results_dir().resolve()}:
        if folder.is_dir():
            out |= {p.resolve() for p in folder.iterdir()
                    if p.is_file() and not _DATED.search(p.stem)}
    return out


def refuse_shipped(path, name: str = "--out") -> None:
    """Tolak ``path`` yang menunjuk berkas yang dikirim buku, sebelum pelatihan apa pun."""
    target = files.as_path(path, name).expanduser().resolve()
    if target in shipped_files():
        raise ValueError(
            f"'{name}' = '{str(path)[:80]}' adalah berkas yang dikirim buku, dan berkas itu "
            "tidak pernah ditimpa lewat --out. Tulis ke nama lain, misalnya --out "
            f"~/{target.name}; berkas buku hanya dibuat ulang oleh pelatihan penuh bawaan "
            "(perintah yang sama tanpa --quick, --steps dan --out), dan hanya bila targetnya "
            "tercapai.")


def default_target(path, full: bool) -> Path:
    """The file a run without --out writes (the book's own for a full run, else a
    dated name beside it), checked before training; a folder that cannot be
    written (a read-only site-packages) is refused with the way out."""
    try:
        if full:
            files.check_output_path(path, "berkas hasil", Path(path).suffix)
            return Path(path)
        return training_loop.dated_path(path)
    except (ValueError, OSError) as err:
        raise ValueError(f"{err} Tulis ke folder yang bisa ditulis dengan --out BERKAS, misalnya "
                         f"--out ~/{Path(path).name}.") from None


def targets_met(checks) -> bool:
    """Every target reached, the wall clock aside (it measures the machine's load)."""
    return all(ok for name, ok in checks if not name.startswith(training_loop.WALL_CLOCK))


def _silent(*_):
    pass


def run(task, *, experiment=False, quick=False, steps=None, out=None, log=print):
    """Latih tugas ``task`` (nama atau ``Task``) dan tulis hasilnya menurut aturan di atas.

    ``experiment``: jalankan eksperimen tugas itu, bukan pelatihan modelnya.
    ``log``: fungsi cetak (``None`` = diam).
    Mengembalikan ``(model, curve, info, checks)``, atau dict hasil eksperimen.
    """
    task = get(task)
    if log is None:  # silent, as training_loop.fit's log=None
        log = _silent
    if experiment and task.experiment is None:
        raise ValueError(f"Tugas '{task.name}' tidak punya eksperimen.")
    if quick and experiment:
        raise ValueError("quick tidak berlaku untuk eksperimen; pakai steps=N.")
    full = not quick and steps is None
    shipped = task.experiment_file if experiment else task.weights
    if out is not None:
        out = files.as_path(out, "out").expanduser()
        refuse_shipped(out, "out")
        files.check_output_path(out, "out", shipped.suffix)
        target = out
    elif quick:
        target = None
    else:
        target = default_target(shipped, full)
    if experiment:
        result = task.run_experiment(steps=steps, log=log)
        if target is not None:
            training_loop.write_result(target, result, log)
        return result
    model, curve, info, checks = task.train(quick=quick, steps=steps, log=log)
    if target is not None and target == shipped and not targets_met(checks):
        target = training_loop.dated_path(shipped)
        log(f"Tidak semua target tercapai, jadi {shipped} milik buku tidak ditimpa.")
    if target is not None:
        written = training_loop.save_or_rescue(
            lambda path: model.save(path, curve=curve, info=info), target, log)
        log(f"Bobot ditulis ke {written}.")
    return model, curve, info, checks
