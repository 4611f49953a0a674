"""atensi.tasks and atensi.tasks.runner: the registry of training tasks, the one loader of
weights and experiments, the one rule for the files the book ships, and the command line
generated from the registry (every old command still means the same run)."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from atensi import corpus, tasks, train
from atensi.model import Config, TinyGPT
from atensi.tasks import runner

NAMES = tasks.REGISTERED
WITH_EXPERIMENT = [n for n in NAMES if tasks.get(n).experiment]


def _replace_task(monkeypatch, name, **fields):
    """The registry's description of ``name`` with ``fields`` changed, for this test only."""
    monkeypatch.setitem(tasks._loaded, name, dataclasses.replace(tasks.get(name), **fields))


# --- the registry ----------------------------------------------------------------------


def test_the_three_tasks_of_the_book_are_registered_with_their_shipped_files():
    assert NAMES[:3] == ("teks", "ingat", "rujukan")  # the first is the command's default
    shipped = {t.name: (t.weights.name, t.experiment_file.name) for t in tasks.all_tasks()[:3]}
    assert shipped == {"teks": ("model_kecil.npz", "eksperimen_skala.json"),
                       "ingat": ("model_ingat.npz", "eksperimen_ingat.json"),
                       "rujukan": ("model_rujukan.npz", "eksperimen_rujukan.json")}
    assert [t.experiment for t in tasks.all_tasks()[:3]] == ["skala", "ingat", "rujukan"]
    for task in tasks.all_tasks():
        assert task.weights.is_file(), task.name
        assert task.experiment is None or task.experiment_file.is_file(), task.name
        assert task.quick["steps"] < task.training["steps"], task.name


@pytest.mark.parametrize("bad", ["kata", "", None, 3, "TEKS"])
def test_an_unknown_task_is_refused_with_the_list(bad):
    with pytest.raises(ValueError, match=r"'task'.*'teks', 'ingat', 'rujukan'"):
        tasks.get(bad)


# --- loading: one way for every task -----------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_the_shipped_weights_load_and_meet_the_targets_they_record(name):
    task = tasks.get(name)
    model = tasks.load_weights(name)
    assert model.config == Config(vocab=model.config.vocab, **task.model)
    checks = task.targets(model.info)
    assert checks and all(ok for _, ok in checks), checks


@pytest.mark.parametrize("name, other", [(a, b) for a in NAMES for b in NAMES if a != b])
def test_the_weights_of_another_task_are_refused(name, other):
    task = tasks.get(name)
    with pytest.raises(ValueError, match=f"bukan {re.escape(task.title)}"):
        tasks.load_weights(name, tasks.get(other).weights)


@pytest.mark.parametrize("name", NAMES)
def test_a_missing_folder_or_foreign_weights_file_is_named_without_advising_deletion(
        name, tmp_path, monkeypatch):
    task = tasks.get(name)
    with pytest.raises(FileNotFoundError, match=f"{task.command} --out") as info:
        tasks.load_weights(name, tmp_path / "tidak_ada.npz")
    assert str(tmp_path / "tidak_ada.npz") in str(info.value)
    with pytest.raises(IsADirectoryError, match="'path'.*folder"):
        tasks.load_weights(name, tmp_path)
    with pytest.raises(ValueError, match=f"bukan berkas bobot {re.escape(task.title)}") as info:
        tasks.load_weights(name, corpus.SNAPSHOT)
    assert "apus" not in str(info.value)  # neither "Hapus" nor "hapus": it may be a book file
    with pytest.raises(TypeError, match="'path'"):
        tasks.load_weights(name, 5)
    _replace_task(monkeypatch, name, weights=tmp_path / task.weights.name)
    with pytest.raises(FileNotFoundError, match="ambil berkas itu dari repositori buku"):
        tasks.load_weights(name)


@pytest.mark.parametrize("name", NAMES)
def test_a_weights_path_may_start_in_the_home_folder(name, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "m.npz").write_bytes(tasks.get(name).weights.read_bytes())
    loaded = tasks.load_weights(name, "~/m.npz")
    assert loaded.chars == tasks.load_weights(name).chars


@pytest.mark.parametrize("name", WITH_EXPERIMENT)
def test_every_shipped_experiment_loads_checked(name):
    result = tasks.load_experiment(name)
    assert result["model"] and result["runs"]


@pytest.mark.parametrize("name", WITH_EXPERIMENT)
@pytest.mark.parametrize("other", WITH_EXPERIMENT)
def test_every_experiment_check_refuses_the_other_tasks_results(name, other, tmp_path):
    task = tasks.get(name)
    path = tmp_path / "e.json"
    path.write_bytes(tasks.get(other).experiment_file.read_bytes())
    if name == other:
        assert tasks.load_experiment(name, path) == json.loads(path.read_text(encoding="utf-8"))
        return
    with pytest.raises(ValueError) as info:
        tasks.load_experiment(name, path)
    assert str(path) in str(info.value) and task.experiment_command in str(info.value)


@pytest.mark.parametrize("name", WITH_EXPERIMENT)
def test_a_missing_or_broken_experiment_names_its_command(name, tmp_path):
    task = tasks.get(name)
    with pytest.raises(FileNotFoundError, match=task.experiment_command):
        tasks.load_experiment(name, tmp_path / "x.json")
    broken = tmp_path / "rusak.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(ValueError, match=f"rusak.*{task.experiment_command}"):
        tasks.load_experiment(name, broken)


# --- the runner: one rule for the book's files --------------------------------------------


def _fake_task(monkeypatch, tmp_path, name, *, met=True, wall_clock=True):
    """``name`` with its shipped files in ``tmp_path`` (sentinels) and a training that
    only builds a tiny model, so the runner's rule is tested without training."""
    task = tasks.get(name)
    weights = tmp_path / task.weights.name
    experiment = tmp_path / f"eksperimen_{name}.json"
    weights.write_bytes(b"bobot buku")
    experiment.write_text("hasil buku", encoding="utf-8")
    calls = []

    def fake_train(*, quick, steps, log):
        calls.append(dict(quick=quick, steps=steps))
        config = Config(vocab=3, T=4, d_model=4, n_head=1, n_layer=1, d_mlp=4)
        model = TinyGPT(config, ("a", "b", "c"))
        info = {"training": {"steps": steps or 1}}
        return model, {}, info, [("target", met), ("waktu CPU ≤ 120 s", True),
                                 ("waktu jam dinding ≤ 120 s", wall_clock)]

    def fake_experiment(*, steps, log):
        calls.append(dict(experiment=True, steps=steps))
        return {"langkah": steps}

    _replace_task(monkeypatch, name, weights=weights, experiment_file=experiment,
                  train=fake_train, run_experiment=fake_experiment)
    return weights, experiment, calls


def _dated(path):
    return sorted(path.parent.glob(f"{path.stem}-*{path.suffix}"))


@pytest.mark.parametrize("name", NAMES)
def test_a_quick_run_writes_nothing(name, tmp_path, monkeypatch):
    weights, _, calls = _fake_task(monkeypatch, tmp_path, name)
    runner.run(name, quick=True, log=None)
    assert calls == [dict(quick=True, steps=None)]
    assert weights.read_bytes() == b"bobot buku" and _dated(weights) == []


@pytest.mark.parametrize("name, which", [(n, "weights") for n in NAMES]
                         + [(n, "experiment") for n in WITH_EXPERIMENT])
def test_out_naming_a_book_file_is_refused_before_training(name, which, tmp_path, monkeypatch):
    weights, experiment, calls = _fake_task(monkeypatch, tmp_path, name)
    target = weights if which == "weights" else experiment
    with pytest.raises(ValueError, match="'out'.*dikirim buku"):
        runner.run(name, quick=which == "weights", experiment=which == "experiment", steps=None
                   if which == "weights" else 1, out=target, log=None)
    assert calls == []
    assert weights.read_bytes() == b"bobot buku"
    assert experiment.read_text(encoding="utf-8") == "hasil buku"


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("met, wall_clock, shipped_written", [
    (True, True, True), (True, False, True), (False, True, False)])
def test_only_a_full_run_that_meets_its_targets_writes_the_book_weights(
        name, met, wall_clock, shipped_written, tmp_path, monkeypatch):
    weights, _, _ = _fake_task(monkeypatch, tmp_path, name, met=met, wall_clock=wall_clock)
    log = []
    runner.run(name, log=log.append)
    if shipped_written:
        assert TinyGPT.load(weights).info["training"]["steps"] == 1 and _dated(weights) == []
    else:
        assert weights.read_bytes() == b"bobot buku"
        (dated,) = _dated(weights)
        assert TinyGPT.load(dated).info["training"]["steps"] == 1
        assert any("tidak ditimpa" in line for line in log)


@pytest.mark.parametrize("name", WITH_EXPERIMENT)
def test_steps_write_a_dated_file_beside_the_book_files(name, tmp_path, monkeypatch):
    weights, experiment, _ = _fake_task(monkeypatch, tmp_path, name)
    runner.run(name, steps=3, log=None)
    runner.run(name, steps=2, experiment=True, log=None)
    assert weights.read_bytes() == b"bobot buku"
    assert experiment.read_text(encoding="utf-8") == "hasil buku"
    assert TinyGPT.load(_dated(weights)[0]).info["training"]["steps"] == 3
    assert json.loads(_dated(experiment)[0].read_text(encoding="utf-8")) == {"langkah": 2}


@pytest.mark.parametrize("name", WITH_EXPERIMENT)
def test_a_full_experiment_writes_the_book_experiment(name, tmp_path, monkeypatch):
    _, experiment, _ = _fake_task(monkeypatch, tmp_path, name)
    runner.run(name, experiment=True, log=None)
    assert json.loads(experiment.read_text(encoding="utf-8")) == {"langkah": None}


def test_every_book_file_is_shipped_and_dated_files_are_not(tmp_path):
    shipped = runner.shipped_files()
    for task in tasks.all_tasks():
        assert task.weights.resolve() in shipped
        assert task.experiment is None or task.experiment_file.resolve() in shipped
    assert corpus.SNAPSHOT.resolve() in shipped
    assert not any(runner._DATED.search(p.stem) for p in shipped)


# --- the command line, generated from the registry ----------------------------------------


def test_help_lists_every_registered_task_and_experiment(capsys):
    with pytest.raises(SystemExit) as info:
        train.main(["--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for task in tasks.all_tasks():
        assert f"{task.name}: {task.summary}" in text and task.weights.name in text
        assert task.experiment is None or f"{task.experiment}: " in text


OLD_COMMANDS = [
    ([], "teks", dict(experiment=False, quick=False, steps=None, out=None)),
    (["--quick"], "teks", dict(experiment=False, quick=True, steps=None, out=None)),
    (["--steps", "5"], "teks", dict(experiment=False, quick=False, steps=5, out=None)),
    (["--experiment", "skala"], "teks", dict(experiment=True, quick=False, steps=None, out=None)),
    (["--task", "teks", "--experiment", "skala", "--steps", "2"], "teks",
     dict(experiment=True, quick=False, steps=2, out=None)),
    (["--task", "ingat"], "ingat", dict(experiment=False, quick=False, steps=None, out=None)),
    (["--task", "ingat", "--quick"], "ingat",
     dict(experiment=False, quick=True, steps=None, out=None)),
    (["--experiment", "ingat"], "ingat", dict(experiment=True, quick=False, steps=None, out=None)),
    (["--task", "rujukan"], "rujukan", dict(experiment=False, quick=False, steps=None, out=None)),
    (["--task", "rujukan", "--quick"], "rujukan",
     dict(experiment=False, quick=True, steps=None, out=None)),
    (["--experiment", "rujukan", "--steps", "1"], "rujukan",
     dict(experiment=True, quick=False, steps=1, out=None)),
    (["--task", "rujukan", "--quick", "--out", "{tmp}/q.npz"], "rujukan",
     dict(experiment=False, quick=True, steps=None, out="{tmp}/q.npz")),
]


@pytest.mark.parametrize("argv, task, run", OLD_COMMANDS)
def test_every_old_command_line_is_still_the_same_run(argv, task, run, tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(runner, "run", lambda name, **kw: seen.append((name, kw)))
    assert train.main([a.format(tmp=tmp_path) for a in argv]) == 0
    want = {k: (v.format(tmp=tmp_path) if isinstance(v, str) else v) for k, v in run.items()}
    assert seen == [(task, want)]


def test_a_task_is_trained_by_the_command_from_its_description(tmp_path, monkeypatch, capsys):
    weights, _, calls = _fake_task(monkeypatch, tmp_path, "ingat")
    assert train.main(["--task", "ingat", "--steps", "4"]) == 0
    assert calls == [dict(quick=False, steps=4)]
    (dated,) = _dated(weights)
    assert str(dated) in capsys.readouterr().out
    assert TinyGPT.load(dated).chars == ("a", "b", "c")  # what the description's train made
