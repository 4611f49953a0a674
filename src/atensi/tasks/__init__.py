"""Tugas latih buku ini: satu deskripsi terdaftar per tugas.

``REGISTERED`` adalah satu-satunya daftar tugas. Setiap nama di sana adalah
modul ``atensi.tasks.<nama>`` yang memuat ``TASK = Task(...)``: data (pembuat
pembagian latih/uji), konfigurasi model, pengaturan pelatihan (penuh dan
cepat), target, berkas bobot, eksperimen dan pemeriksanya, serta alat ukur
(``atensi.tasks.probes``). Perintah ``python -m atensi.train``, pelari
(``atensi.tasks.runner``), :func:`load_weights` dan :func:`load_experiment`
membaca daftar ini; tugas baru cukup satu modul dan satu nama di sini (resep
"tugas latih baru" di CONTRIBUTING.md).

    names()                         nama tugas, berurutan
    get("rujukan")                  -> Task
    load_weights("ingat")           model terlatih yang dikirim buku (TinyGPT)
    load_experiment("teks")         hasil eksperimen yang dikirim buku (dict), diperiksa
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import files, training_loop
from ..model import TinyGPT

# The first is the command's default task (python -m atensi.train without --task).
REGISTERED = ("teks", "ingat", "rujukan")
COMMAND = "python -m atensi.train"


@dataclass(frozen=True)
class Task:
    """Deskripsi satu tugas latih.

    ``train(quick=, steps=, log=)`` melatih model tanpa menulis berkas dan
    mengembalikan ``(model, curve, info, checks)``: ``checks`` daftar
    ``(nama target, tercapai?)`` yang dicetak, termasuk target waktu.
    ``targets(info)``: target model saja, dari ``info`` (juga ``info`` berkas
    bobot yang dikirim). ``check_model(model, name)``: model itu, bila model
    tugas ini. ``run_experiment(steps=, log=)`` -> dict hasil;
    ``check_experiment(result, path, remake)`` -> hasil yang diperiksa, atau
    ``ValueError`` yang menyebut berkasnya.
    """

    name: str            # --task
    title: str           # how messages name the model, e.g. "model rujukan"
    summary: str         # one line of --help
    weights: Path        # the weights file the book ships
    model: dict          # Config arguments (without vocab)
    training: dict       # full run
    quick: dict          # --quick
    data: Callable       # the split (or corpus) the task trains and measures on
    train: Callable
    targets: Callable
    check_model: Callable
    experiment: str | None = None        # --experiment
    experiment_summary: str = ""
    experiment_file: Path | None = None
    run_experiment: Callable | None = None
    check_experiment: Callable | None = None
    probes: tuple = field(default=())    # the atensi.tasks.probes the task measures with

    @property
    def command(self) -> str:
        """The command that makes the shipped weights."""
        default = self.name == REGISTERED[0]
        return COMMAND if default else f"{COMMAND} --task {self.name}"

    @property
    def experiment_command(self) -> str:
        return f"{COMMAND} --experiment {self.experiment}"


_loaded: dict = {}


def get(name) -> Task:
    """Deskripsi tugas ``name`` (salah satu ``REGISTERED``)."""
    if isinstance(name, Task):
        return name
    if not isinstance(name, str) or name not in REGISTERED:
        raise ValueError(f"Argumen 'task' harus nama tugas latih, salah satu dari "
                         f"{', '.join(repr(n) for n in REGISTERED)}, tetapi yang diterima "
                         f"{str(name)[:60]!r}. Daftarnya: atensi.tasks.REGISTERED.")
    if name not in _loaded:
        # Imported by name, not at the top: a task's module may be the module of
        # the command itself (atensi.train), which imports this package.
        task = importlib.import_module(f"{__name__}.{name}").TASK
        if task.name != name:
            raise RuntimeError(f"atensi.tasks.{name}.TASK bernama '{task.name}', bukan '{name}'.")
        _loaded[name] = task
    return _loaded[name]


def names() -> tuple:
    return REGISTERED


def all_tasks() -> list:
    """Setiap tugas terdaftar, berurutan."""
    return [get(name) for name in REGISTERED]


def by_experiment(experiment: str) -> Task:
    """Tugas yang memiliki eksperimen ``experiment`` (nama ``--experiment``)."""
    for task in all_tasks():
        if task.experiment == experiment:
            return task
    known = [t.experiment for t in all_tasks() if t.experiment]
    raise ValueError(f"Argumen 'experiment' harus salah satu dari "
                     f"{', '.join(repr(n) for n in known)}, tetapi yang diterima "
                     f"{str(experiment)[:60]!r}.")


def _shown(path) -> str:
    # The reader copies this path into a command, so the file's name at its end
    # must survive; only a path too long to read loses its middle.
    text = str(path)
    return text if len(text) <= 400 else text[:100] + "..." + text[-250:]


def load_weights(task, path=None) -> TinyGPT:
    """Model terlatih tugas ``task`` yang dikirim buku (``task.weights``), atau berkas
    bobot ``path``; berkas lain diperiksa: harus berkas bobot model tugas itu."""
    task = get(task)
    path = files.as_path(path).expanduser() if path is not None else task.weights
    shown = _shown(path)
    if path.is_dir():
        raise IsADirectoryError(f"Argumen 'path' = '{shown}' adalah folder, bukan berkas bobot. "
                                f"Sebutkan berkas .npz-nya, misalnya {task.weights.name}.")
    if not path.is_file():
        shipped = path == task.weights
        raise FileNotFoundError(
            f"Berkas bobot '{shown}' tidak ditemukan. Buat dengan: {task.command}"
            + ("" if shipped else f" --out {shown}")
            + (", atau ambil berkas itu dari repositori buku." if shipped else "."))
    try:
        model = TinyGPT.load(path)
    except (ValueError, TypeError, KeyError) as err:
        # TinyGPT.load's advice names the character model's command, and may
        # advise deleting the file, which may be one the book ships.
        detail = str(err).split(". ")[0]
        raise ValueError(f"Berkas '{shown}' bukan berkas bobot {task.title} yang bisa dibaca "
                         f"({detail[:120]}). Muat model buku dengan "
                         f"tasks.load_weights(\"{task.name}\") tanpa path, atau latih sendiri "
                         f"dengan: {task.command} --out BERKAS") from None
    try:
        return task.check_model(model, "path")
    except (TypeError, ValueError) as err:
        raise ValueError(f"Berkas '{shown}' berisi model tugas lain, bukan {task.title}: "
                         f"{str(err).split(': ', 1)[-1]}") from None


def load_experiment(task, path=None) -> dict:
    """Hasil eksperimen tugas ``task`` (JSON dari ``--experiment``), diperiksa isinya
    sebelum dikembalikan; ``path``: berkas lain (bawaan: berkas yang dikirim buku)."""
    task = get(task)
    if task.experiment is None:
        raise ValueError(f"Tugas '{task.name}' tidak punya eksperimen. Tugas yang punya: "
                         f"{', '.join(t.name for t in all_tasks() if t.experiment)}.")
    path = files.as_path(path).expanduser() if path is not None else task.experiment_file
    remake = task.experiment_command
    return task.check_experiment(training_loop.read_result(path, remake), path, remake)
