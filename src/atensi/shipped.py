"""The outputs the book ships (model weights, corpus, experiments): one resolver for ``results/``.

The files live in ``results/`` at the repository root, where the training
commands write them and the repository's readers find them. A wheel copies
them into ``atensi/results/`` (``setup.py``), so a plain ``pip install`` of
the repository (Colab, Binder) loads the same models; an editable install and
the repository read the root folder directly.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent  # .../atensi


def results_dir() -> Path:
    """Folder hasil yang dikirim bersama buku: salinan di dalam paket, atau ``results/`` repo.

    Wheel (``pip install`` biasa, misalnya di Colab) membawa salinannya di
    ``atensi/results/``; instalasi *editable* dan repositori membaca
    ``results/`` di akar repo.
    """
    inside = _PACKAGE / "results"
    if inside.is_dir():
        return inside  # installed from a wheel
    return _PACKAGE.parents[1] / "results"  # src/atensi -> repo root
