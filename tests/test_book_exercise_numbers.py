"""Exercise numbers of the pages outside the numbered parts start at 1 on each page."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "_ext"))

from atensi_book import indonesian  # noqa: E402


def test_each_unnumbered_page_counts_its_own_exercises():
    # As Sphinx leaves them: one counter shared by Pendahuluan and Menjalankan.
    env = SimpleNamespace(toc_fignumbers={
        "chapters/pendahuluan": {"exercise": {"a": (1,), "b": (2,), "c": (3,), "d": (4,)}},
        "chapters/menjalankan": {"exercise": {"float64": (5,), "cpu": (6,)},
                                 "figure": {"f": (3,)}},
        "chapters/softmax": {"exercise": {"x": (4, 2), "y": (4, 1)}},
        "chapters/glosarium": {},
    })
    assert indonesian.number_exercises_per_page(None, env) == ["chapters/menjalankan"]
    assert env.toc_fignumbers["chapters/menjalankan"] == {
        "exercise": {"float64": (1,), "cpu": (2,)}, "figure": {"f": (3,)}}
    assert env.toc_fignumbers["chapters/pendahuluan"]["exercise"]["d"] == (4,)
    assert env.toc_fignumbers["chapters/softmax"]["exercise"] == {"x": (4, 2), "y": (4, 1)}
    # A second pass changes nothing.
    assert indonesian.number_exercises_per_page(None, env) == []
