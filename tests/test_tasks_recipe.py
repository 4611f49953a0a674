"""The recipe "tugas latih baru" of CONTRIBUTING.md, done for real in a copy of the
repository: one module in src/atensi/tasks/ and one name in REGISTERED, nothing else
edited. In the copy, ``python -m atensi.train --help`` lists the new task, ``--task <new>
--quick`` trains it and writes nothing, ``--steps N --out F`` writes a weights file that
``tasks.load_weights`` reads back, the full run writes the task's book file, and the
registry's own tests (unedited) cover the new task and the import drawing still holds."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NEW = "salin"

# A fourth task, written as the recipe says: the model must copy the first word
# of a row into the last position (one head looking back to position 0).
NEW_TASK = '''"""Tugas ``salin``: kata terakhir setiap baris adalah salinan kata pertamanya."""

from __future__ import annotations

import numpy as np

from .. import training_loop
from ..formatting import id_float
from ..model import Config, TinyGPT
from ..training_loop import RESULTS
from . import Task, probes

VOCAB = ("satu", "dua", "tiga", "empat", "lima")
LENGTH = 6
MODEL = dict(T=LENGTH - 1, d_model=16, n_head=1, n_layer=1, d_mlp=32, scale=True, seed=0)
TRAINING = dict(steps=300, batch=32, lr=1e-2, warmup=10, eval_every=50, clip=1.0, seed=0)
QUICK = dict(TRAINING, steps=6, eval_every=3)


def make_split(seed=0):
    rng = np.random.default_rng(seed)
    rows = rng.integers(0, len(VOCAB), (600, LENGTH))
    rows[:, -1] = rows[:, 0]
    return rows[:500], rows[500:]


def accuracy(model, rows, attention=None):
    logits = np.asarray(model.logits(rows[:, :-1], attention=attention))
    return float((logits[:, -1].argmax(-1) == rows[:, -1]).mean())


def targets(info):
    return [("akurasi uji >= 90 %", info["test_accuracy"] >= 0.9)]


def check_model(model, name="model"):
    if tuple(model.chars) != VOCAB:
        raise ValueError(f"'{name}' bukan model salin: kosakatanya lain.")
    return model


def run(*, quick=False, steps=None, log=print):
    train_rows, test_rows = make_split()
    settings = dict(QUICK if quick else TRAINING)
    if steps is not None:
        settings.update(steps=steps, eval_every=min(settings["eval_every"], steps))
    model = TinyGPT(Config(vocab=len(VOCAB), **MODEL), VOCAB)

    def draw(rng, B):
        rows = train_rows[rng.integers(0, len(train_rows), B)]
        return rows[:, :-1], rows[:, 1:]

    def measure():
        value = accuracy(model, test_rows)
        return {"val": value}, f"akurasi uji {id_float(100 * value, 1)} %"

    curve = training_loop.fit(model, draw, measure, steps=settings["steps"],
                              batch_size=settings["batch"], lr=settings["lr"],
                              warmup=settings["warmup"], eval_every=settings["eval_every"],
                              clip=settings["clip"], seed=settings["seed"], log=log,
                              positions=[LENGTH - 2])
    info = dict(test_accuracy=accuracy(model, test_rows),
                uniform_accuracy=accuracy(model, test_rows, probes.uniform_attention),
                seconds=float(curve["seconds"]), cpu_seconds=float(curve["cpu_seconds"]),
                load=training_loop.cpu_load(), training=settings)
    training_loop.report_time(log, info)
    checks = targets(info) + training_loop.time_checks(info)
    training_loop.report_targets(log, checks, info)
    return model, curve, info, checks


TASK = Task(
    name="salin",
    title="model salin",
    summary="model yang menyalin kata pertama",
    weights=RESULTS / "model_salin.npz",
    model=MODEL,
    training=TRAINING,
    quick=QUICK,
    data=make_split,
    train=run,
    targets=targets,
    check_model=check_model,
    probes=(probes.uniform_attention,),
)
'''


@pytest.mark.slow  # four interpreters and a pytest run in a copy: about 30 s on 2 cores
def test_a_new_task_needs_only_its_module_and_one_name_in_the_registry(tmp_path):
    copy = tmp_path / "repo"
    for part in ("src", "tests", "results"):
        shutil.copytree(ROOT / part, copy / part,
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for part in ("pyproject.toml", "CONTRIBUTING.md"):
        shutil.copy2(ROOT / part, copy / part)
    package = copy / "src" / "atensi" / "tasks"
    (package / f"{NEW}.py").write_text(NEW_TASK, encoding="utf-8")
    registry = package / "__init__.py"
    text = registry.read_text(encoding="utf-8")
    line = re.search(r"^REGISTERED = \((.*)\)$", text, re.M)
    assert line, "REGISTERED harus satu baris tuple di atensi/tasks/__init__.py"
    registry.write_text(text.replace(line.group(0), f'REGISTERED = ({line.group(1)}, "{NEW}")'),
                        encoding="utf-8")

    env = {k: v for k, v in os.environ.items() if k not in ("ATENSI_KERNELS_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(copy / "src")

    def command(*args):
        return subprocess.run([sys.executable, "-m", "atensi.train", *args], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=300)

    shown = command("--help")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert f"{NEW}: model yang menyalin kata pertama -> results/model_{NEW}.npz" in text
    assert "{teks,ingat,rujukan," + NEW + "}" in text.replace(" ", "")

    before = sorted(p.name for p in (copy / "results").iterdir())
    quick = command("--task", NEW, "--quick")
    assert quick.returncode == 0, quick.stdout + quick.stderr
    assert "langkah     6/6" in quick.stdout and "Target: akurasi uji" in quick.stdout
    assert sorted(p.name for p in (copy / "results").iterdir()) == before

    out = tmp_path / "salin.npz"
    short = command("--task", NEW, "--steps", "8", "--out", str(out))
    assert short.returncode == 0, short.stdout + short.stderr
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys; from atensi import tasks; "
         f"m = tasks.load_weights('{NEW}', sys.argv[1]); print(tasks.__file__, "
         "m.info['training']['steps'])", str(out)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert loaded.returncode == 0, loaded.stderr
    where, steps = loaded.stdout.split()
    assert where.startswith(str(copy / "src")) and steps == "8"

    # The full run meets its targets, so it writes the book's file for the task.
    full = command("--task", NEW)
    assert full.returncode == 0, full.stdout + full.stderr
    assert f"Bobot ditulis ke {copy / 'results' / f'model_{NEW}.npz'}" in full.stdout

    # Unedited, the registry's tests cover the new task too (its weights, the
    # runner's rule, --help), and the new module sits in the import drawing.
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA",
         "tests/test_tasks.py", "tests/test_imports.py"],
        cwd=copy, env=env, capture_output=True, text=True, timeout=300)
    log = tests.stdout + tests.stderr
    assert tests.returncode == 0, log[-4000:]
    covered = re.findall(rf"^PASSED tests/test_tasks\.py::\w+\[[^\]]*{NEW}[^\]]*\]$", log, re.M)
    assert len(covered) >= 8, log[-4000:]
