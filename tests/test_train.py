"""atensi.corpus and atensi.train: the corpus, the baselines, and the committed results."""

from __future__ import annotations

import numpy as np
import pytest

from atensi import corpus, train
from atensi.model import Config, TinyGPT

CHAPTER = """---
jupytext:
  formats: ipynb,md:myst
---

```{code-cell} ipython3
x = 1  # kode dibuang
```

(label-bab)=
# Judul Bab

Kalimat *pertama* dengan $Q K^\\top$ dan `kode` serta {term}`atensi`
yang berlanjut.  Angka {glue:text}`angka` dibuang, [tautan](http://x) tidak.

$$
S = QK^\\top
$$ (eq-x)

| tabel | dibuang |
| --- | --- |

````{exercise}
:label: ex-1

Soal dalam bahasa Indonesia.

```python
print("kode jawaban")
```
````

```{literalinclude} ../kernels/scores.cu
:language: cuda
```
"""


def test_extract_keeps_prose_and_drops_code_math_directives_and_markup():
    paragraphs = corpus.extract(CHAPTER)
    assert paragraphs == [
        "Judul Bab",
        "Kalimat pertama dengan dan serta atensi yang berlanjut. Angka dibuang, tautan tidak.",
        "Soal dalam bahasa Indonesia.",
    ]


def test_split_is_fixed_every_tenth_paragraph_of_each_chapter_is_validation():
    text = "### a\n" + "\n".join(f"a{n}" for n in range(1, 21)) + "\n### b\n" + "b1\nb2\n"
    tr, val = corpus.split(text)
    assert val.split() == ["a10", "a20"]
    assert tr.split() == [f"a{n}" for n in range(1, 21) if n % 10] + ["b1", "b2"]
    assert corpus.split(text) == (tr, val)


def test_snapshot_is_committed_and_loads():
    c = corpus.load()
    assert c.path == corpus.SNAPSHOT and len(c.train) > 10 * len(c.val) * 0.5
    assert "Budi" in c.train + c.val
    assert "def " not in c.train and "np." not in c.train and "$$" not in c.train


def test_missing_corpus_file_says_how_to_make_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"tidak ditemukan.*python -m atensi\.corpus"):
        corpus.load(tmp_path / "tidak_ada.txt")


def test_baselines_on_a_text_with_a_perfect_bigram():
    ids = np.array([0, 1, 2] * 200)
    x, y = train.windows(ids, 10)
    base = train.baselines(ids, x, y, 3)
    assert base["bigram_ce"] < 0.05
    assert abs(base["unigram_entropy"] - np.log(3)) < 1e-9


def test_learning_rate_schedule():
    assert train.learning_rate(25, 1000, 1.0, 50) == 0.5
    assert train.learning_rate(50, 1000, 1.0, 50) == 1.0
    assert abs(train.learning_rate(1000, 1000, 1.0, 50) - 0.1) < 1e-12


# --- the committed weights and their curve --------------------------------------


@pytest.fixture(scope="module")
def committed():
    return TinyGPT.load(train.WEIGHTS)


def test_committed_weights_are_small_and_match_the_training_settings(committed):
    assert train.WEIGHTS.stat().st_size <= 2 * 1024 * 1024
    c = corpus.load()
    assert committed.config == Config(vocab=len(c.chars), **train.MODEL)
    assert committed.chars == c.chars
    assert committed.info["training"] == train.TRAINING
    assert len(committed.curve["train"]) == train.TRAINING["steps"]


def test_committed_weights_meet_the_targets_they_record(committed):
    info = committed.info
    assert info["val_ce"] < info["bigram_ce"]
    assert info["val_ce"] <= 0.7 * min(info["unigram_entropy"], info["unigram_ce"])
    # The recorded validation loss is what these weights give now.
    c = corpus.load()
    x, y = train.windows(committed.encode(c.val), committed.config.T)
    assert abs(train.evaluate(committed, x, y) - info["val_ce"]) < 1e-4


def test_first_training_steps_reproduce_the_committed_curve(committed):
    c = corpus.load()
    s = train.TRAINING
    model = TinyGPT(committed.config, c.chars)
    curve = train.train(model, c, steps=3, batch_size=s["batch"], lr=s["lr"],
                        warmup=s["warmup"], eval_every=1000, clip=s["clip"], seed=s["seed"],
                        log=None)
    # Same seed, same batches, same first steps (the learning rate schedule depends on
    # the total number of steps only after the warm-up).
    assert s["warmup"] >= 3
    assert np.allclose(curve["train"], committed.curve["train"][:3], rtol=1e-4, atol=1e-5)
    assert np.isclose(curve["val"][0], committed.curve["val"][0], rtol=1e-5)


def test_quick_run_prints_indonesian_progress(capsys):
    c = corpus.load()
    train.run_training(quick=True, steps=2, corpus=c)
    out = capsys.readouterr().out
    assert "langkah     2/2" in out and "Cross-entropy validasi" in out and "bigram" in out
    assert "Target:" in out


# --- the √d_k experiment ----------------------------------------------------------


def test_experiment_file_has_both_runs_with_the_same_settings():
    result = train.load_experiment()
    runs = result["runs"]
    assert set(runs) == {"dengan", "tanpa"}
    assert result["d_k"] == 64 and result["training"] == train.SKALA_TRAINING
    steps = result["training"]["steps"]
    for run in runs.values():
        assert len(run["train"]) == steps and len(run["entropy"]) == len(run["val"])
    # Same seeds: the very first batch loss (before any update) is identical up to the
    # scaling of the scores, which changes the attention but not the embedding lookup.
    assert runs["dengan"]["val_step"] == runs["tanpa"]["val_step"]


def test_experiment_first_steps_reproduce(tmp_path):
    result = train.load_experiment()
    small = train.run_experiment(steps=2, log=lambda *_: None)
    for name in ("dengan", "tanpa"):
        assert np.allclose(small["runs"][name]["train"], result["runs"][name]["train"][:2],
                           rtol=1e-4, atol=1e-5)


def test_missing_or_broken_experiment_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="--experiment skala"):
        train.load_experiment(tmp_path / "x.json")
    bad = tmp_path / "rusak.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="rusak"):
        train.load_experiment(bad)


def test_chapter_loads_the_committed_results_and_glues_what_it_computes():
    import re

    import jupytext

    path = corpus.CHAPTERS / "melatih.md"
    text = path.read_text(encoding="utf-8")
    code = "\n".join(c.source for c in jupytext.read(path).cells if c.cell_type == "code")
    assert "TinyGPT.load(train.WEIGHTS)" in code and "train.load_experiment()" in code
    assert "model_explorer.attention_maps(bobot)" in code
    used = set(re.findall(r"\{glue:text\}`([^`]+)`", text))
    defined = set(re.findall(r"glue\(\s*f?\"([^\"{]+)\"", code))
    for prefix in re.findall(r"glue\(\s*f\"([^\"{]+)\{k\}\"", code):
        defined |= {prefix + k for k in ("d_model", "n_head", "d_k", "n_layer", "T", "vocab")}
    for prefix, suffix in re.findall(r"glue\(\s*f\"([^\"{]+)\{nama\}([^\"]*)\"", code):
        defined |= {prefix + n + suffix for n in ("dengan", "tanpa")}
    assert used and used <= defined, used - defined
    assert len(re.findall(r"`{3,4}\{exercise\}\n:label: (\S+)", text)) >= 3
