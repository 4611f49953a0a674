"""atensi.rujukan and atensi.rujukan_train: the word model that resolves *dia*.

The sentence set and its held-out (name, role) split, the plain-sentence API
and its refusals, the positional options of TinyGPT the experiment uses,
determinism of training, and the targets on the committed weights.
"""

from __future__ import annotations

import numpy as np
import pytest

from atensi import rujukan, rujukan_train, train
from atensi.model import Config, TinyGPT, init_params

RUNNING = "Ani memanggil Budi , dia menoleh"
PASSIVE = "Ani dipanggil Budi , dia menoleh"


@pytest.fixture(scope="module")
def split():
    return rujukan.make_split(0)


@pytest.fixture(scope="module")
def committed():
    return rujukan.load()


def _names(rows, column):
    return [rujukan.VOCAB[int(t)] for t in rows[:, column]]


def _verbs(rows):
    return [rujukan.VOCAB[int(t)] for t in rows[:, rujukan.VERB]]


# --- the sentences and the split ------------------------------------------------


def test_the_split_is_the_same_for_the_same_seed_and_only_reordered_by_another(split):
    again, other = rujukan.make_split(0), rujukan.make_split(1)
    assert np.array_equal(split.train, again.train) and np.array_equal(split.test, again.test)
    assert not np.array_equal(split.train, other.train)
    key = lambda rows: sorted(map(tuple, rows.tolist()))  # noqa: E731
    assert key(split.train) == key(other.train) and key(split.test) == key(other.test)


def test_no_test_sentence_is_ever_seen_in_training(split):
    train_set = set(map(tuple, split.train[:, :rujukan.SENTENCE].tolist()))
    test_set = set(map(tuple, split.test[:, :rujukan.SENTENCE].tolist()))
    assert not train_set & test_set
    assert len(test_set) == len(split.test) and len(train_set) == len(split.train)


def test_every_test_sentence_asks_a_held_out_name_role_pair_and_training_none(split):
    for rows, expected in ((split.train, False), (split.test, True)):
        referents = _names(rows, rujukan.ANSWER)
        assert all(rujukan.held_out(n, v) == expected for n, v in zip(referents, _verbs(rows)))
    # Held-out names still act with that verb in training: they only ever call.
    for active, names in rujukan.HELD_OUT.items():
        pair = dict(rujukan.VERB_PAIRS)[active]
        callers = {n for rows in (split.train,) for n, v, r in
                   zip(_names(rows, rujukan.FIRST) + _names(rows, rujukan.SECOND),
                       _verbs(rows) * 2, _names(rows, rujukan.ANSWER) * 2)
                   if v in (active, pair) and n != r}
        assert set(names) <= callers


def test_every_name_is_a_referent_in_both_places_in_training(split):
    # The test asks for a role, not for an answer the model never had to give.
    columns = rujukan.referent_column(split.train)
    for column in (rujukan.FIRST, rujukan.SECOND):
        rows = split.train[columns == column]
        assert set(_names(rows, rujukan.ANSWER)) == set(rujukan.NAMES)


def test_the_answer_is_the_one_acted_on_and_depends_on_the_verb_form(split):
    for rows in (split.train, split.test):
        passive = rujukan.is_passive(rows)
        want = np.where(passive, rows[:, rujukan.FIRST], rows[:, rujukan.SECOND])
        assert np.array_equal(rows[:, rujukan.ANSWER], want)
    # The test set is balanced: both fixed-place guesses are at chance.
    assert rujukan.first_name_accuracy(split.test) == 0.5
    assert rujukan.second_name_accuracy(split.test) == 0.5


def test_the_running_sentence_and_its_passive_twin_are_test_sentences(split):
    texts = {rujukan.sentence(row[:rujukan.SENTENCE]) for row in split.test}
    assert RUNNING in texts and PASSIVE in texts


def test_rows_read_as_text_and_round_trip_through_the_word_model(split):
    text = rujukan.sentence(split.test[0])
    words = text.split()
    assert len(words) == rujukan.LENGTH and words[3:5] == [",", "dia"]
    assert words[6:8] == ["siapa", "?"] and words[-1] in words[:3]
    model = TinyGPT(Config(vocab=len(rujukan.VOCAB), T=rujukan.LENGTH), rujukan.VOCAB)
    assert np.array_equal(model.encode(text), split.test[0])


def test_the_vocabulary_and_constants_have_the_published_shape():
    assert len(set(rujukan.VOCAB)) == len(rujukan.VOCAB)
    assert ("memanggil", "dipanggil") in rujukan.VERB_PAIRS and "menoleh" in rujukan.COMPLETIONS
    assert all(a.startswith("me") and p.startswith("di") for a, p in rujukan.VERB_PAIRS)


def test_the_bigram_baseline_answers_one_name_for_every_sentence(split):
    counts = {}
    for row in split.train:
        counts[int(row[rujukan.ANSWER])] = counts.get(int(row[rujukan.ANSWER]), 0) + 1
    guess = max(counts, key=counts.get)
    expected = float((split.test[:, rujukan.ANSWER] == guess).mean())
    assert rujukan.bigram_accuracy(split.train, split.test) == expected


# --- the plain-sentence API ------------------------------------------------------


def test_question_rows_add_the_question_slot():
    rows = rujukan.question_rows([RUNNING, "Ani memanggil Budi, dia menoleh"])
    assert rows.shape == (2, rujukan.ANSWER) and np.array_equal(rows[0], rows[1])
    assert rujukan.sentence(rows[0]) == RUNNING + " siapa ?"


@pytest.mark.parametrize("bad, match", [
    ([], "kosong"),
    (["Ani memanggil Bambang , dia menoleh"], "'Bambang'"),
    (["Ani memanggil Budi , dia pergi"], "'pergi'"),
    (["Ani memanggil Budi"], "tidak berbentuk"),
    (["Ani Budi memanggil , dia menoleh"], "tidak berbentuk"),
    (["Ani memanggil Budi , dia menoleh siapa ?"], "tidak berbentuk"),
    (["Ani memanggil Ani , dia menoleh"], "dua kali"),
])
def test_bad_sentences_are_refused_in_indonesian_naming_the_word(committed, bad, match):
    for call in (rujukan.resolve, rujukan.head_attention):
        with pytest.raises(ValueError, match=match):
            call(committed, bad)


@pytest.mark.parametrize("bad", [None, 3, [RUNNING, 7]])
def test_sentences_that_are_not_text_are_refused(committed, bad):
    with pytest.raises(TypeError, match="str"):
        rujukan.resolve(committed, bad)


def test_resolve_and_head_attention_on_the_running_sentence(committed):
    assert rujukan.resolve(committed, [RUNNING, PASSIVE]) == ["Budi", "Ani"]
    rows = rujukan.head_attention(committed, [RUNNING, PASSIVE])
    assert rows.shape == (2, rujukan.SENTENCE)
    assert rows[0, rujukan.SECOND] >= 0.8 and rows[1, rujukan.FIRST] >= 0.8


# --- positions in TinyGPT ----------------------------------------------------------


@pytest.mark.parametrize("positions", ["rope", "none"])
def test_positional_variants_have_right_gradients_and_survive_save(positions, tmp_path):
    config = Config(vocab=7, T=6, d_model=8, n_head=2, n_layer=2, d_mlp=12, seed=1,
                    positions=positions)
    model = TinyGPT(config, "abcdefg", init_params(config, np.float64))
    assert "wpe" not in model.params
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 7, (3, 6)), rng.integers(0, 7, (3, 6))
    _, grads = model.loss_and_grads(x, y)
    for name in ("l0.Wq", "l0.Wk", "l1.Wq", "wte"):
        flat = model.params[name].reshape(-1)
        for i in rng.choice(flat.size, 3, replace=False):
            old = flat[i]
            flat[i] = old + 1e-6
            plus = model.loss_and_grads(x, y)[0]
            flat[i] = old - 1e-6
            minus = model.loss_and_grads(x, y)[0]
            flat[i] = old
            assert abs((plus - minus) / 2e-6 - grads[name].reshape(-1)[i]) < 1e-7, name
    cached = model.generate("abc", 3, kv_cache=True, temperature=0, return_logits=True)[1]
    full = model.generate("abc", 3, kv_cache=False, temperature=0, return_logits=True)[1]
    assert np.allclose(cached, full, atol=1e-12)
    back = TinyGPT.load(TinyGPT(config, "abcdefg").save(tmp_path / "m.npz"))
    assert back.config.positions == positions


def test_without_positions_a_one_layer_model_cannot_see_the_order():
    config = Config(vocab=len(rujukan.VOCAB), T=rujukan.ANSWER, d_model=16, n_head=2,
                    n_layer=1, d_mlp=16, positions="none")
    model = TinyGPT(config, rujukan.VOCAB)
    a, b = rujukan.question_rows([RUNNING, "Budi memanggil Ani , dia menoleh"])
    la, lb = model.logits(a[None]), model.logits(b[None])
    assert np.allclose(la[0, -1], lb[0, -1], atol=1e-5)
    with pytest.raises(ValueError, match="'positions'"):
        Config(vocab=4, positions="sinus")


# --- training ------------------------------------------------------------------------


def test_two_short_runs_give_identical_weights(split):
    def run():
        config = Config(vocab=len(rujukan.VOCAB), **rujukan_train.MODEL)
        model = TinyGPT(config, rujukan.VOCAB)
        rujukan_train.train_rujukan(model, split, steps=4, batch_size=8, lr=5e-3, warmup=2,
                                    eval_every=4, clip=1.0, seed=0, log=None)
        return model.params

    a, b = run(), run()
    assert all(np.array_equal(a[k], b[k]) for k in a)


def test_a_quick_run_never_overwrites_the_shipped_weights(tmp_path, monkeypatch):
    shipped = tmp_path / "model_rujukan.npz"
    shipped.write_bytes(b"dikirim")
    monkeypatch.setattr(rujukan_train, "WEIGHTS", shipped)
    log = []
    rujukan_train.run_rujukan(quick=True, steps=2, out=shipped, log=log.append)
    assert shipped.read_bytes() == b"dikirim"
    assert any("tidak ditulis ulang" in line for line in log)


def test_the_command_line_knows_the_task(capsys):
    assert train.main(["--task", "rujukan", "--quick"]) == 0
    assert "Head pemilih nama" in capsys.readouterr().out


# --- the committed weights ---------------------------------------------------------


def test_committed_weights_meet_the_targets_on_the_held_out_split(committed, split):
    info = committed.info
    assert committed.chars == rujukan.VOCAB
    assert committed.config == Config(vocab=len(rujukan.VOCAB), **rujukan_train.MODEL)
    accuracy = rujukan.accuracy(committed, split.test)
    assert accuracy >= rujukan_train.ACCURACY and accuracy == info["test_accuracy"]
    assert np.isclose(committed.curve["val"][-1], accuracy)
    share = rujukan.attention_share(committed, split.test)
    layer, head = info["head"]
    assert share[layer, head] == share.max() >= rujukan_train.SHARE
    rows = rujukan.head_attention(committed, [rujukan.sentence(r[:rujukan.SENTENCE])
                                              for r in split.test])
    assert np.isclose(rows[np.arange(len(rows)), rujukan.referent_column(split.test)].mean(),
                      share[layer, head], atol=1e-6)
    c = committed.config
    means = rujukan.head_means(committed, split.test)
    for l, h in (info["head"], info["verb_head"]):
        zeroed = rujukan.accuracy(committed, split.test,
                                  attention=rujukan.HeadAblation(c.n_layer, l, h))
        mean = rujukan.accuracy(committed, split.test,
                                attention=rujukan.MeanAblation(c.n_layer, l, h, means))
        assert zeroed <= rujukan_train.ABLATED and mean <= rujukan_train.ABLATED
        assert np.isclose(zeroed, info["zeroed_accuracy"][l][h])
    named = {tuple(info["head"]), tuple(info["verb_head"])}
    for l in range(c.n_layer):
        for h in range(c.n_head):
            if (l, h) not in named:
                assert info["zeroed_accuracy"][l][h] >= rujukan_train.OTHERS
    assert all(ok for _, ok in rujukan_train.checks_for(info))
    assert info["cpu_seconds"] <= 120
