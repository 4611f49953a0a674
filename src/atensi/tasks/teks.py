"""Tugas ``teks``: model karakter pada prosa buku ini (``atensi.train``).

    python -m atensi.train                     -> results/model_kecil.npz
    python -m atensi.train --experiment skala  -> results/eksperimen_skala.json
"""

from __future__ import annotations

from .. import corpus, train
from . import Task

TASK = Task(
    name="teks",
    title="model karakter",
    summary="model karakter pada prosa buku",
    weights=train.WEIGHTS,
    model=train.MODEL,
    training=train.TRAINING,
    quick=train.QUICK,
    data=corpus.load,
    train=train.run_training,
    targets=train.targets,
    check_model=train.check_model,
    experiment="skala",
    experiment_summary="eksperimen √d_k model karakter",
    experiment_file=train.EXPERIMENT,
    run_experiment=train.run_experiment,
    check_experiment=train.check_experiment_file,
    probes=(),
)
