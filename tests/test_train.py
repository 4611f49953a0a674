"""atensi.corpus and atensi.train: the corpus, the baselines, the committed results, and the
command line generated from atensi.tasks."""

from __future__ import annotations

import dataclasses
import errno
import functools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from atensi import corpus, recall_train, rujukan_train, tasks, train
from atensi.model import Config, TinyGPT
from atensi.tasks import runner

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


@pytest.mark.slow
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


@pytest.mark.slow
def test_quick_run_prints_indonesian_progress(capsys):
    c = corpus.load()
    train.run_training(quick=True, steps=2, corpus=c)
    out = capsys.readouterr().out
    assert "langkah     2/2" in out and "Cross-entropy validasi" in out and "bigram" in out
    assert "Target:" in out


# --- the √d_k experiment ----------------------------------------------------------


def test_experiment_file_has_both_runs_with_the_same_settings():
    result = tasks.load_experiment("teks")
    runs = result["runs"]
    assert set(runs) == {"dengan", "tanpa"}
    assert result["d_k"] == 64 and result["training"] == train.SKALA_TRAINING
    steps = result["training"]["steps"]
    for run in runs.values():
        assert len(run["train"]) == steps and len(run["entropy"]) == len(run["val"])
    # Same seeds: the very first batch loss (before any update) is identical up to the
    # scaling of the scores, which changes the attention but not the embedding lookup.
    assert runs["dengan"]["val_step"] == runs["tanpa"]["val_step"]


@pytest.mark.slow
def test_experiment_first_steps_reproduce(tmp_path):
    result = tasks.load_experiment("teks")
    small = train.run_experiment(steps=2, log=lambda *_: None)
    for name in ("dengan", "tanpa"):
        assert np.allclose(small["runs"][name]["train"], result["runs"][name]["train"][:2],
                           rtol=1e-4, atol=1e-5)


def test_missing_or_broken_experiment_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="--experiment skala"):
        tasks.load_experiment("teks", tmp_path / "x.json")
    bad = tmp_path / "rusak.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match="rusak"):
        tasks.load_experiment("teks", bad)


def test_chapter_loads_the_committed_results_and_glues_what_it_computes():
    import re

    import jupytext

    path = corpus.CHAPTERS / "melatih.md"
    text = path.read_text(encoding="utf-8")
    code = "\n".join(c.source for c in jupytext.read(path).cells if c.cell_type == "code")
    assert 'tasks.load_weights("teks")' in code and 'tasks.load_experiment("teks")' in code
    assert "attention_maps.explorer(bobot)" in code
    used = set(re.findall(r"\{glue:text\}`([^`]+)`", text))
    defined = set(re.findall(r"glue\(\s*f?\"([^\"{]+)\"", code))
    for prefix in re.findall(r"glue\(\s*f\"([^\"{]+)\{k\}\"", code):
        defined |= {prefix + k for k in ("d_model", "n_head", "d_k", "n_layer", "T", "vocab")}
    for prefix, suffix in re.findall(r"glue\(\s*f\"([^\"{]+)\{nama\}([^\"]*)\"", code):
        defined |= {prefix + n + suffix for n in ("dengan", "tanpa")}
    assert used and used <= defined, used - defined
    assert len(re.findall(r"`{3,4}\{exercise\}\n:label: (\S+)", text)) >= 3


# --- what the command line may write ------------------------------------------------


@pytest.fixture
def shipped(tmp_path, monkeypatch):
    """The book's files, replaced by sentinels in a temporary folder."""
    weights, experiment = tmp_path / "model_kecil.npz", tmp_path / "eksperimen_skala.json"
    weights.write_bytes(b"bobot buku")
    experiment.write_text("hasil buku", encoding="utf-8")
    _replace_task(monkeypatch, "teks", weights=weights, experiment_file=experiment)
    return weights, experiment


def _replace_task(monkeypatch, name, **fields):
    """The registry's description of ``name`` with ``fields`` changed, for this test only."""
    monkeypatch.setitem(tasks._loaded, name, dataclasses.replace(tasks.get(name), **fields))


def _dated(path):
    return sorted(path.parent.glob(f"{path.stem}-*{path.suffix}"))


@pytest.mark.slow
def test_steps_never_overwrite_the_shipped_weights(shipped, capsys):
    weights, _ = shipped
    assert train.main(["--steps", "2"]) == 0
    assert weights.read_bytes() == b"bobot buku"
    dated = _dated(weights)
    assert len(dated) == 1 and str(dated[0]) in capsys.readouterr().out
    assert TinyGPT.load(dated[0]).info["training"]["steps"] == 2


@pytest.mark.slow
def test_experiment_with_steps_never_overwrites_the_shipped_results(shipped, capsys):
    _, experiment = shipped
    assert train.main(["--experiment", "skala", "--steps", "1"]) == 0
    assert experiment.read_text(encoding="utf-8") == "hasil buku"
    dated = _dated(experiment)
    assert len(dated) == 1 and str(dated[0]) in capsys.readouterr().out
    assert tasks.load_experiment("teks", dated[0])["training"]["steps"] == 1


@pytest.mark.slow
def test_full_run_that_misses_its_targets_keeps_the_shipped_weights(shipped, monkeypatch, capsys):
    weights, _ = shipped
    monkeypatch.setitem(train.TRAINING, "steps", 2)  # far too short to beat the bigram
    assert train.main([]) == 0
    out = capsys.readouterr().out
    assert "TIDAK" in out and "tidak ditimpa" in out
    assert weights.read_bytes() == b"bobot buku"
    assert len(_dated(weights)) == 1 and str(_dated(weights)[0]) in out


@pytest.mark.slow
def test_full_run_that_meets_its_targets_writes_the_shipped_weights(shipped, monkeypatch):
    weights, _ = shipped
    monkeypatch.setitem(train.TRAINING, "steps", 2)
    real = train.baselines
    monkeypatch.setattr(train, "baselines", lambda *a: dict(
        real(*a), bigram_ce=1e9, unigram_ce=1e9, unigram_entropy=1e9))
    assert train.main([]) == 0
    assert TinyGPT.load(weights).info["training"]["steps"] == 2
    assert _dated(weights) == []


@pytest.mark.parametrize("argv, words", [
    (["--out", "{tmp}"], ["--out", "folder"]),
    (["--steps", "0"], ["--steps", ">= 1"]),
    (["--steps", "x"], ["--steps", "bukan bilangan bulat"]),
    (["--experiment", "lain"], ["--experiment", "pilihan"]),
    (["--tidak-ada"], ["tidak dikenal"]),
])
def test_bad_arguments_are_one_indonesian_line_before_training(argv, words, tmp_path, monkeypatch,
                                                                capsys):
    monkeypatch.setattr(train, "train", lambda *a, **k: pytest.fail("pelatihan dimulai"))
    with pytest.raises(SystemExit) as info:
        train.main([a.format(tmp=tmp_path) for a in argv])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Pemakaian: python -m atensi.train" in err
    assert all(w in err for w in words), err


@pytest.fixture(scope="module")
def small_model_and_corpus():
    c = corpus.load()
    config = Config(vocab=len(c.chars), T=8, d_model=8, n_head=2, n_layer=1, d_mlp=16)
    return TinyGPT(config, c.chars), c


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(clip=-1.0), ValueError, "'clip'"),
    (dict(clip=float("nan")), ValueError, "'clip'"),
    (dict(warmup=-5), ValueError, "'warmup'"),
    (dict(lr="x"), TypeError, "'lr'"),
    (dict(lr=0.0), ValueError, "'lr'"),
    (dict(log=5), TypeError, "'log'"),
    (dict(corpus=None), TypeError, "'corpus'"),
    (dict(steps=1.5), TypeError, "'steps'"),
    (dict(seed=-1), ValueError, "'seed'"),
    (dict(entropy="ya"), TypeError, "'entropy'"),
    (dict(corpus="teks"), TypeError, r"'corpus' harus atensi\.corpus\.Corpus.*corpus\.load"),
])
def test_bad_training_arguments_are_refused_in_indonesian(small_model_and_corpus, kwargs, error,
                                                          words):
    model, c = small_model_and_corpus
    args = dict(corpus=c, steps=1, log=None) | kwargs
    with pytest.raises(error, match=words):
        train.train(model, args.pop("corpus"), **args)


def test_validation_text_shorter_than_a_window_is_refused(small_model_and_corpus):
    model, c = small_model_and_corpus
    short = corpus.Corpus(c.train, c.val[:5], c.chars, c.path)
    with pytest.raises(ValueError, match=r"'corpus\.val' hanya 5 karakter.*T \+ 2"):
        train.train(model, short, steps=1, log=None)


@pytest.mark.parametrize("reader", [corpus.load, functools.partial(tasks.load_experiment, "teks")])
def test_folder_and_non_utf8_files_are_refused_clearly(reader, tmp_path):
    with pytest.raises(IsADirectoryError, match="folder, bukan berkas"):
        reader(tmp_path)
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("ç".encode("latin-1") * 2000)
    with pytest.raises(ValueError, match="bukan teks UTF-8"):
        reader(bad)


def test_corpus_command_refuses_a_folder_before_work(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(corpus, "build_snapshot", lambda: pytest.fail("korpus dibangun"))
    with pytest.raises(SystemExit) as info:
        corpus.main(["--out", str(tmp_path)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "'--out'" in err and "folder" in err and len(err.strip().splitlines()) == 1


# ---- the command line and what it writes ----------------------------------------------------


def test_weights_that_cannot_be_written_after_training_are_kept_and_named(tmp_path, monkeypatch,
                                                                            capsys):
    (tmp_path / "sementara").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "sementara"))
    out = tmp_path / "penuh" / "bobot.npz"
    real_save = TinyGPT.save

    def save(self, path, **kwargs):
        if Path(path).parent.name == "penuh":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_save(self, path, **kwargs)

    monkeypatch.setattr(TinyGPT, "save", save)
    assert train.main(["--quick", "--steps", "1", "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    rescued = list((tmp_path / "sementara").glob("atensi-hasil-*/bobot.npz"))
    assert len(rescued) == 1 and f"'{rescued[0]}'" in err and "disk penuh" in err
    assert TinyGPT.load(rescued[0]).info["training"]["steps"] == 1


def test_a_failed_run_gives_back_its_dated_name(shipped, monkeypatch, capsys):
    weights, _ = shipped
    monkeypatch.setattr(train, "train", lambda *a, **k: (_ for _ in ()).throw(
        ValueError("gagal di tengah")))
    assert train.main(["--steps", "3"]) == 1
    assert _dated(weights) == []


def test_an_unwritable_output_is_refused_before_training(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(train, "train", lambda *a, **k: pytest.fail("pelatihan dimulai"))
    with pytest.raises(SystemExit) as info:
        train.main(["--quick", "--out", str(tmp_path / ("x" * 300 + ".npz"))])
    assert info.value.code == 2
    assert "lebih pendek" in capsys.readouterr().err


def _run_train(*args, env=None, code=None):
    import os

    command = [sys.executable, "-c", code, *args] if code else [
        sys.executable, "-m", "atensi.train", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})


@pytest.mark.parametrize("env", [dict(PYTHONIOENCODING="ascii"),
                                 dict(LC_ALL="C", LANG="C", PYTHONUTF8="0",
                                      PYTHONIOENCODING="")])
def test_a_terminal_without_the_typography_still_gets_the_report(env):
    proc = _run_train("--quick", "--steps", "1", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "model <= 0,7 x unigram" in proc.stdout  # ≤ and × spelled in ASCII


_INTERRUPTED = """
import os, runpy, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from atensi import training_loop
def interrupted(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(30)
training_loop.fit = interrupted
sys.argv = ["atensi.train", *sys.argv[1:]]
runpy.run_module("atensi.train", run_name="__main__", alter_sys=True)
"""


def test_ctrl_c_is_one_indonesian_line_and_exit_code_130():
    proc = _run_train("--quick", code=_INTERRUPTED)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.strip() == "python -m atensi.train: dihentikan (Ctrl-C)."


# --- public helpers: bad input is refused by name, before any work --------------------

_IDS = np.arange(100) % 5
_RNG = np.random.default_rng(0)


@pytest.mark.parametrize("call, error, words", [
    (lambda: train.batch(_IDS[:5], 8, 2, _RNG), ValueError, r"'ids' hanya 5 karakter.*T \+ 2"),
    (lambda: train.batch(_IDS, 0, 2, _RNG), ValueError, r"'T' harus bilangan bulat >= 1"),
    (lambda: train.batch(_IDS, 8, -1, _RNG), ValueError, r"'B' harus bilangan bulat >= 1"),
    (lambda: train.batch(_IDS, 8, 2, 0), TypeError, r"'rng' harus np\.random\.Generator.*default_rng"),
    (lambda: train.batch("abc", 8, 2, _RNG), TypeError, r"'ids' harus bilangan bulat"),
    (lambda: train.batch(_IDS.reshape(10, 10), 4, 2, _RNG), ValueError, r"'ids' harus array satu dimensi"),
    (lambda: train.baselines(_IDS, _IDS[:8], _IDS[:8], 0), ValueError, r"'vocab' harus bilangan bulat >= 1"),
    (lambda: train.baselines(_IDS + 10, _IDS[:8], _IDS[:8], 5), ValueError, r"Token di 'train_ids' harus 0\.\.4"),
    (lambda: train.baselines(_IDS * 1.0, _IDS[:8], _IDS[:8], 5), TypeError, r"'train_ids' harus bilangan bulat"),
    (lambda: train.baselines(_IDS[:0], _IDS[:8], _IDS[:8], 5), ValueError, r"'train_ids'.*paling sedikit dua"),
    (lambda: train.baselines(_IDS, _IDS[:0], _IDS[:0], 5), ValueError, r"'x_val' kosong"),
    (lambda: train.baselines(_IDS, _IDS[:8], _IDS[:7], 5), ValueError, r"'y_val' harus berbentuk sama"),
])
def test_batch_and_baselines_refuse_bad_input_in_indonesian(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_evaluate_refuses_bad_input_in_indonesian():
    config = Config(vocab=5, T=8, d_model=8, n_head=2, n_layer=1, d_mlp=16)
    model = TinyGPT(config, "abcde")
    x, y = train.windows(_IDS, 8)
    with pytest.raises(TypeError, match=r"'model' harus atensi\.model\.TinyGPT"):
        train.evaluate(None, x, y)
    with pytest.raises(ValueError, match=r"'x' harus .*B >= 1"):
        train.evaluate(model, x[:0], y[:0])
    with pytest.raises(ValueError, match=r"'y' harus berbentuk sama dengan 'x'"):
        train.evaluate(model, x, y[:2])
    with pytest.raises(ValueError, match=r"'chunk' harus bilangan bulat >= 1"):
        train.evaluate(model, x, y, chunk=0)
    assert np.isfinite(train.evaluate(model, x, y))


@pytest.mark.parametrize("content", ["[1, 2]", '{"runs": {}}', '{"d_k": 64, "runs": '
                                     '{"dengan": {}, "tanpa": {}}}'])
def test_experiment_file_with_other_json_is_refused(tmp_path, content):
    path = tmp_path / "hasil.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=r"bukan hasil eksperimen √d_k.*--experiment skala"):
        tasks.load_experiment("teks", path)


@pytest.mark.parametrize("markdown, words", [
    (None, r"'markdown' harus teks \(str\).*NoneType"),
    (b"# Judul", r"'markdown' harus teks \(str\), bukan bytes.*decode"),
    (5, r"'markdown' harus teks"),
])
def test_extract_refuses_what_is_not_text(markdown, words):
    with pytest.raises(TypeError, match=words):
        corpus.extract(markdown)


def test_build_snapshot_refuses_bad_chapter_lists_before_reading_any(tmp_path):
    good = tmp_path / "bab.md"
    good.write_text("Paragraf yang cukup panjang untuk korpus.\n", encoding="utf-8")
    bad = tmp_path / "rusak.md"
    bad.write_bytes(b"\xff\xfe bukan utf-8")
    cases = [
        ("chapters/pengantar.md", TypeError, r"'chapters' harus daftar path bab.*chapters=\["),
        (b"abc", TypeError, r"'chapters' harus daftar path bab"),
        (5, TypeError, r"'chapters' harus daftar path bab"),
        ([], ValueError, r"'chapters' kosong"),
        ([None], TypeError, r"'chapters\[0\]' harus path berkas"),
        ([good, tmp_path], FileNotFoundError, r"'chapters'.*adalah folder.*chapters=None"),
        ([good, tmp_path / "hilang.md"], FileNotFoundError, r"'chapters'.*tidak ada"),
        ([good, bad], ValueError, r"rusak\.md' bukan teks UTF-8"),
    ]
    for chapters, error, words in cases:
        with pytest.raises(error, match=words):
            corpus.build_snapshot(chapters)
    assert corpus.build_snapshot([good]).startswith(corpus.HEADER + "bab\n")


@pytest.mark.parametrize("argv", [
    ["--task", "rujukan", "--quick", "--out", "results/model_ingat.npz"],
    ["--task", "rujukan", "--steps", "40", "--out", "results/model_rujukan.npz"],
    ["--task", "rujukan", "--out", "results/model_rujukan.npz"],
    ["--experiment", "rujukan", "--steps", "1", "--out", "results/eksperimen_rujukan.json"],
    ["--experiment", "ingat", "--steps", "1", "--out", "results/eksperimen_skala.json"],
    ["--quick", "--out", "results/model_kecil.npz"],
    ["--task", "ingat", "--quick", "--out", "results/targets.json"],
    ["--quick", "--out", "results/../results/model_rujukan.npz"],
])
def test_no_option_writes_over_a_file_the_book_ships(argv, monkeypatch, capsys):
    root = Path(__file__).resolve().parents[1]
    monkeypatch.chdir(root)
    before = {p.name: p.stat().st_mtime_ns for p in (root / "results").iterdir()}
    for module, name in ((train, "train"), (rujukan_train, "train_rujukan"),
                         (recall_train, "train_recall")):
        monkeypatch.setattr(module, name, lambda *a, **k: pytest.fail("pelatihan dimulai"))
    with pytest.raises(SystemExit) as info:
        train.main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "dikirim buku" in err and "--out" in err
    assert {p.name: p.stat().st_mtime_ns for p in (root / "results").iterdir()} == before


@pytest.mark.parametrize("task, experiment", [
    (t, e) for t in ("teks", "ingat", "rujukan") for e in ("skala", "ingat", "rujukan")
    if (t, e) not in (("teks", "skala"), ("ingat", "ingat"), ("rujukan", "rujukan"))])
def test_contradictory_task_and_experiment_are_refused(task, experiment, monkeypatch, capsys):
    monkeypatch.setattr(train, "run_experiment", lambda *a, **k: pytest.fail("dijalankan"))
    with pytest.raises(SystemExit) as info:
        train.main(["--task", task, "--experiment", experiment, "--steps", "1"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "bertentangan" in err and f"--task {task}" in err


def test_the_home_folder_in_out_is_expanded(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    seen = {}
    monkeypatch.setattr(runner, "run", lambda task, **k: seen.update(k, task=task))
    assert train.main(["--task", "rujukan", "--quick", "--out", "~/q.npz"]) == 0
    assert Path(seen["out"]) == tmp_path / "q.npz" and seen["task"] == "rujukan"
    assert not (tmp_path / "~").exists()


def test_a_book_folder_that_cannot_be_written_says_where_to_write_instead(tmp_path, monkeypatch,
                                                                           capsys):
    # A file where the folder should be: unwritable even for root (a read-only
    # site-packages behaves the same for a student).
    blocked = tmp_path / "site-packages"
    blocked.write_text("bukan folder", encoding="utf-8")
    _replace_task(monkeypatch, "rujukan", weights=blocked / "model_rujukan.npz")
    monkeypatch.setattr(rujukan_train, "train_rujukan",
                        lambda *a, **k: pytest.fail("pelatihan dimulai"))
    assert train.main(["--task", "rujukan"]) == 1
    assert train.main(["--task", "rujukan", "--steps", "3"]) == 1
    err = capsys.readouterr().err
    assert err.count("--out BERKAS") == 2 and "Traceback" not in err
