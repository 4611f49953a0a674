"""Tugas ``rujukan``: model kata yang menjawab siapa yang dirujuk *dia*
(``atensi.rujukan``, ``atensi.rujukan_train``).

    python -m atensi.train --task rujukan        -> results/model_rujukan.npz
    python -m atensi.train --experiment rujukan  -> results/eksperimen_rujukan.json
"""

from __future__ import annotations

from .. import rujukan, rujukan_train
from . import Task, probes

TASK = Task(
    name="rujukan",
    title="model rujukan",
    summary="rujukan *dia*",
    weights=rujukan_train.WEIGHTS,
    model=rujukan_train.MODEL,
    training=rujukan_train.TRAINING,
    quick=rujukan_train.QUICK,
    data=rujukan.make_split,
    train=rujukan_train.run_rujukan,
    targets=rujukan_train.checks_for,
    check_model=rujukan.check_model,
    experiment="rujukan",
    experiment_summary="seed lain, RoPE, tanpa posisi, atensi seragam",
    experiment_file=rujukan_train.EXPERIMENT,
    run_experiment=rujukan_train.run_rujukan_experiment,
    check_experiment=rujukan_train.check_experiment,
    probes=(probes.HeadAblation, probes.MeanAblation, probes.uniform_attention),
)
