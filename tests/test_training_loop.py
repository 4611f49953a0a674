"""atensi.training_loop: the schedule, the clipping, and the one loop every task trains with.

The pinned numbers below were computed with the two separate loops that
``atensi.train`` and ``atensi.recall_train`` had before they shared this one
(same seeds, same small configs); the shared loop reproduced them bit for bit.
"""

from __future__ import annotations

import errno
import math
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from atensi import corpus, recall, recall_train, tasks, train, training_loop
from atensi.model import Config, TinyGPT
from atensi.tasks import probes


def _text(seed, n):
    rng = np.random.default_rng(seed)
    words = ["atensi", "kunci", "nilai", "kueri", "skor", "bobot", "lapisan", "model"]
    return " ".join(words[i] for i in rng.integers(0, len(words), n)) + "\n"


def _char_run():
    tr, va = _text(1, 400), _text(2, 60)
    chars = "".join(sorted(set(tr) | set(va)))
    c = corpus.Corpus(tr, va, chars, corpus.SNAPSHOT)
    model = TinyGPT(Config(vocab=len(chars), T=16, d_model=16, n_head=2, n_layer=1, d_mlp=32,
                           seed=3), chars)
    curve = train.train(model, c, steps=4, batch_size=4, lr=4e-3, warmup=2, eval_every=2,
                        clip=1.0, seed=5, log=None, entropy=True)
    return model, curve


def _recall_run(attention=None, attention_backward=None):
    split = recall.make_split(0, n_train=300, n_test=40)
    model = TinyGPT(Config(vocab=len(recall.VOCAB), **dict(recall_train.RECALL_MODEL,
                                                           d_model=16, d_mlp=32)), recall.VOCAB)
    curve = recall_train.train_recall(model, split, steps=4, batch_size=8, lr=5e-3, warmup=2,
                                      eval_every=2, clip=1.0, seed=7, log=None,
                                      attention=attention, attention_backward=attention_backward)
    return model, curve


# run: (sum of all parameters, sum of their magnitudes, first l0.Wq values, batch losses,
#       validation values)
PINNED = {
    "karakter": (89.87200839017169, 824.116966852831,
                 [-0.11435803771018982, 0.308217853307724, 0.02831174060702324],
                 [2.8711581230163574, 2.862915515899658, 2.8387973308563232, 2.8757593631744385],
                 [2.8691482543945312, 2.844114303588867, 2.833099603652954]),
    "kata": (63.910138761946655, 1200.9674140496918,
             [0.016253529116511345, -0.3214647173881531, 0.15392515063285828],
             [3.1068172454833984, 3.204347610473633, 3.1365091800689697, 3.08941912651062],
             [0.125, 0.075, 0.075]),
    "kata, atensi seragam": (63.863400427151646, 1200.7706773797763,
                             [0.009076505899429321, -0.3130379915237427, 0.16300271451473236],
                             [3.1097192764282227, 3.2095470428466797, 3.130450487136841,
                              3.078735113143921],
                             [0.075, 0.025, 0.025]),
}
RUNS = {
    "karakter": _char_run,
    "kata": _recall_run,
    "kata, atensi seragam": lambda: _recall_run(probes.uniform_attention,
                                                probes.uniform_attention_backward),
}


@pytest.mark.parametrize("run", sorted(RUNS))
def test_a_short_seeded_run_reproduces_the_pinned_weights_and_curve(run):
    model, curve = RUNS[run]()
    total, magnitude, first, losses, val = PINNED[run]
    params = [p.astype(np.float64) for p in model.params.values()]
    assert sum(float(p.sum()) for p in params) == pytest.approx(total, rel=1e-5)
    assert sum(float(np.abs(p).sum()) for p in params) == pytest.approx(magnitude, rel=1e-6)
    assert np.allclose(model.params["l0.Wq"].ravel()[:3], first, rtol=1e-5, atol=1e-7)
    assert np.allclose(curve["train"], losses, rtol=1e-6)
    assert np.allclose(curve["val"], val, rtol=1e-6)
    assert list(curve["step"]) == [1, 2, 3, 4] and list(curve["val_step"]) == [0, 2, 4]


def test_the_character_run_records_entropy_at_every_measurement():
    _, curve = _char_run()
    assert curve["entropy"].shape == (3, 1)  # three measurements, one layer
    assert np.allclose(curve["entropy"][:, 0], [1.5800127983093262, 1.5758516788482666,
                                                1.575446367263794], rtol=1e-6)
    assert set(curve) == {"step", "train", "grad_norm", "val_step", "val", "entropy", "seconds",
                          "cpu_seconds"}


def test_fit_measures_at_step_zero_every_eval_every_steps_and_at_the_end():
    model = TinyGPT(Config(vocab=3, T=4, d_model=4, n_head=1, n_layer=1, d_mlp=4), "abc")
    lines, seen = [], []
    ids = np.arange(4)[None] % 3

    def measure():
        seen.append(len(seen))
        return {"val": float(len(seen)), "other": 0.0}, "ukuran"

    curve = training_loop.fit(model, lambda rng, B: (np.repeat(ids, B, 0), np.repeat(ids, B, 0)),
                              measure, steps=5, batch_size=2, lr=1e-3, warmup=1, eval_every=2,
                              clip=1.0, seed=0, log=lines.append)
    assert list(curve["val_step"]) == [0, 2, 4, 5] and list(curve["val"]) == [1, 2, 3, 4]
    assert len(curve["other"]) == 4 and len(curve["train"]) == len(curve["grad_norm"]) == 5
    assert len(lines) == 4 and lines[-1].startswith("langkah     5/5  loss latih")
    assert "ukuran" in lines[0]


def test_clip_gradients_scales_to_the_limit_and_returns_the_norm_before():
    grads = {"a": np.array([3.0], np.float32), "b": np.array([4.0], np.float32)}
    assert training_loop.clip_gradients(grads, 1.0) == 5.0
    assert math.isclose(math.hypot(grads["a"][0], grads["b"][0]), 1.0, rel_tol=1e-6)
    small = {"a": np.array([0.3], np.float32)}
    assert training_loop.clip_gradients(small, 1.0) == pytest.approx(0.3)
    assert small["a"][0] == np.float32(0.3)


def test_learning_rate_schedule():
    assert training_loop.learning_rate(25, 1000, 1.0, 50) == 0.5
    assert training_loop.learning_rate(50, 1000, 1.0, 50) == 1.0
    assert abs(training_loop.learning_rate(1000, 1000, 1.0, 50) - 0.1) < 1e-12


def test_no_warm_up_is_allowed():
    assert training_loop.learning_rate(0, 10, 1e-3, 0) == pytest.approx(1e-3)
    assert training_loop.learning_rate(10, 10, 1e-3, 0) == pytest.approx(1e-4)


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(steps=0), ValueError, "'steps'"),
    (dict(batch_size=2.0), TypeError, "'batch_size'"),
    (dict(eval_every=-1), ValueError, "'eval_every'"),
    (dict(clip=0.0), ValueError, "'clip'"),
    (dict(log="print"), TypeError, "'log' harus fungsi cetak"),
    (dict(model="model"), TypeError, "'model' harus atensi.model.TinyGPT"),
    (dict(split=[1, 2]), TypeError, "'split' harus atensi.recall.Split.*make_split"),
])
def test_the_word_task_refuses_bad_settings_before_training(kwargs, error, words, monkeypatch):
    monkeypatch.setattr(recall, "inputs_targets", lambda *a: pytest.fail("pelatihan dimulai"))
    args = dict(model=TinyGPT(Config(vocab=len(recall.VOCAB), T=14, d_model=4, n_head=1,
                                     n_layer=1, d_mlp=4), recall.VOCAB),
                split=recall.make_split(0, n_train=10, n_test=5), steps=1, batch_size=2,
                lr=1e-3, warmup=0, eval_every=1, clip=1.0, seed=0, log=None) | kwargs
    with pytest.raises(error, match=words):
        recall_train.train_recall(args.pop("model"), args.pop("split"), **args)


def test_the_time_targets_and_the_busy_machine_note(capsys):
    info = {"seconds": 130.0, "cpu_seconds": 60.0}
    checks = training_loop.time_checks(info)
    assert [ok for _, ok in checks] == [False, True]
    lines = []
    training_loop.report_targets(lines.append, checks, info)
    assert lines[0] == "Target: waktu jam dinding ≤ 120 s: TIDAK; waktu CPU ≤ 120 s: ya"
    assert "CPU sedang dipakai proses lain" in lines[1]


def test_results_round_trip_and_a_broken_one_names_its_remake_command(tmp_path):
    path = tmp_path / "hasil.json"
    lines = []
    training_loop.write_result(path, {"a": [1, 2], "nama": "√d_k"}, lines.append)
    assert training_loop.read_result(path, "buat") == {"a": [1, 2], "nama": "√d_k"}
    assert lines == [f"Hasil ditulis ke {path}."]
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match=r"rusak.*python -m atensi\.train --experiment ingat"):
        tasks.load_experiment("ingat", path)
    with pytest.raises(IsADirectoryError, match="folder, bukan berkas"):
        tasks.load_experiment("ingat", tmp_path)


# ---- output files ---------------------------------------------------------------------------


def test_dated_names_taken_in_the_same_second_are_all_different(tmp_path, monkeypatch):
    monkeypatch.setattr(training_loop.time, "gmtime", lambda *a: time.struct_time(
        (2026, 12, 1, 9, 15, 0, 1, 335, 0)))
    target = tmp_path / "model_kecil.npz"
    names = [training_loop.dated_path(target) for _ in range(3)]
    assert [n.name for n in names] == ["model_kecil-20261201-091500.npz",
                                       "model_kecil-20261201-091500-2.npz",
                                       "model_kecil-20261201-091500-3.npz"]
    assert all(n.is_file() for n in names)  # reserved on disk, not only named
    names[1].write_bytes(b"hasil lari kedua")
    training_loop.release_reservations()  # a run that failed gives back what it did not fill
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model_kecil-20261201-091500-2.npz"]


def test_a_result_that_cannot_be_written_is_kept_in_a_temporary_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "sementara"))
    (tmp_path / "sementara").mkdir()
    out = tmp_path / "penuh" / "hasil.json"

    def write(path):
        if Path(path).parent.name == "penuh":
            raise OSError(errno.ENOSPC, "No space left on device")
        Path(path).write_text("isi")

    with pytest.raises(OSError, match="disk penuh") as err:
        training_loop.save_or_rescue(write, out, None, "Hasil")
    message = str(err.value)
    rescued = list((tmp_path / "sementara").glob("atensi-hasil-*/hasil.json"))
    assert len(rescued) == 1 and rescued[0].read_text() == "isi"
    assert str(out) in message and f"mv '{rescued[0]}'" in message


@pytest.mark.parametrize("name", ["attention", "attention_backward"])
def test_an_attention_that_is_not_a_function_is_refused_before_training(name, monkeypatch):
    tr, va = _text(1, 200), _text(2, 60)
    chars = "".join(sorted(set(tr) | set(va)))
    c = corpus.Corpus(tr, va, chars, corpus.SNAPSHOT)
    model = TinyGPT(Config(vocab=len(chars), T=16, d_model=16, n_head=2, n_layer=1, d_mlp=32), chars)
    monkeypatch.setattr(TinyGPT, "loss_and_grads", lambda *a, **k: pytest.fail("dilatih"))
    with pytest.raises(TypeError, match=f"Argumen '{name}' harus None .* yang diterima 5 \\(int\\)"):
        train.train(model, c, steps=1, log=None, **{name: 5})
    x = np.zeros((1, 4), np.int64)
    with pytest.raises(TypeError, match=f"Argumen '{name}' harus None"):
        training_loop.fit(model, lambda rng, B: (x, x), lambda: ({}, ""), steps=1, batch_size=1,
                          lr=1e-3, warmup=0, eval_every=1, clip=1.0, seed=0, log=None, **{name: "kernels"})


def test_a_tilde_in_a_result_path_means_the_home_folder(tmp_path, monkeypatch):
    home, work = tmp_path / "rumah", tmp_path / "kerja"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    lines = []
    training_loop.write_result("~/hasil.json", {"a": 1}, lines.append)
    assert (home / "hasil.json").is_file() and not (work / "~").exists()
    assert lines == [f"Hasil ditulis ke {home / 'hasil.json'}."]
    assert training_loop.read_result("~/hasil.json", "buat") == {"a": 1}
