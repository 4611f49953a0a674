"""Tugas ``ingat``: model kata pada *associative recall* (``atensi.recall``,
``atensi.recall_train``).

    python -m atensi.train --task ingat        -> results/model_ingat.npz
    python -m atensi.train --experiment ingat  -> results/eksperimen_ingat.json
"""

from __future__ import annotations

from .. import recall, recall_train, result_checks
from . import Task, probes

TASK = Task(
    name="ingat",
    title="model kata (tugas ingat)",
    summary="model kata pada tugas associative recall",
    weights=recall_train.RECALL_WEIGHTS,
    model=recall_train.RECALL_MODEL,
    training=recall_train.RECALL_TRAINING,
    quick=recall_train.RECALL_QUICK,
    data=recall.make_split,
    train=recall_train.run_recall,
    targets=recall_train.targets,
    check_model=recall_train.check_model,
    experiment="ingat",
    experiment_summary="ablasi √d_k dan mask model kata, atensi seragam",
    experiment_file=recall_train.RECALL_EXPERIMENT,
    run_experiment=recall_train.run_recall_experiment,
    check_experiment=result_checks.check_recall_experiment,
    probes=(probes.HeadAblation, probes.uniform_attention, probes.unmasked_attention),
)
