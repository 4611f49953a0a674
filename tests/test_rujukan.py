"""atensi.rujukan and atensi.rujukan_train: the word model that resolves *dia*.

The sentence set and its held-out (name, role) split, the plain-sentence API
and its refusals, the positional options of TinyGPT the experiment uses,
determinism of training, and the targets on the committed weights.
"""

from __future__ import annotations

import numpy as np
import pytest

from atensi import rujukan, rujukan_train, tasks, train
from atensi.model import Config, TinyGPT, init_params
from atensi.tasks import probes

RUNNING = "Ani memanggil Budi , dia menoleh"
PASSIVE = "Ani dipanggil Budi , dia menoleh"
FLIP = "Ani memanggil Budi karena dia bosan"


@pytest.fixture(scope="module")
def split():
    return rujukan.make_split(0)


@pytest.fixture(scope="module")
def committed():
    return tasks.load_weights("rujukan")


def _names(rows, column):
    return [rujukan.VOCAB[int(t)] for t in rows[:, column]]


def _verbs(rows):
    return [rujukan.VOCAB[int(t)] for t in rows[:, rujukan.VERB]]


# --- the sentences and the split ------------------------------------------------


def test_both_word_tasks_speak_of_the_same_people_without_importing_each_other():
    from atensi import recall

    assert rujukan.NAMES == recall.NAMES


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


def _acted_on(rows):
    passive = rujukan.is_passive(rows)
    return [rujukan.VOCAB[int(r[rujukan.FIRST if p else rujukan.SECOND])]
            for r, p in zip(rows, passive)]


def _completions(rows):
    return [rujukan.VOCAB[int(t)] for t in rows[:, rujukan.COMPLETION]]


def test_test_sentences_are_exactly_the_held_out_name_role_and_verb_completion_pairs(split):
    for rows, expected in ((split.train, False), (split.test, True)):
        held = [rujukan.held_out(n, v) or rujukan.held_out_completion(v, c)
                for n, v, c in zip(_acted_on(rows), _verbs(rows), _completions(rows))]
        assert all(h == expected for h in held)
        assert np.array_equal(rujukan.is_held_out(rows), np.full(len(rows), expected))
    # Held-out names still act with that verb in training: they only ever call.
    for active, names in rujukan.HELD_OUT.items():
        pair = dict(rujukan.VERB_PAIRS)[active]
        actors = {r[rujukan.SECOND if v in rujukan.PASSIVE else rujukan.FIRST]
                  for r, v in zip(split.train, _verbs(split.train)) if v in (active, pair)}
        assert {rujukan.NAMES.index(n) for n in names} <= actors
    # Each held-out verb-completion pair is missing from training, in both forms,
    # and every completion is still trained with the other verbs.
    trained = set(zip(map(rujukan._active, _verbs(split.train)), _completions(split.train)))
    for active, completion in rujukan.HELD_OUT_COMPLETION.items():
        assert (active, completion) not in trained
        assert any((v, completion) in trained for v in rujukan.ACTIVE if v != active)
        tested = set(zip(_verbs(split.test), _completions(split.test)))
        assert (active, completion) in tested and (dict(rujukan.VERB_PAIRS)[active],
                                                   completion) in tested


def test_every_name_is_a_referent_in_both_places_and_both_roles_in_training(split):
    # The test asks for a role, not for an answer the model never had to give.
    columns = rujukan.referent_column(split.train)
    pelaku = rujukan.is_pelaku(split.train)
    for column in (rujukan.FIRST, rujukan.SECOND):
        for role in (False, True):
            rows = split.train[(columns == column) & (pelaku == role)]
            assert set(_names(rows, rujukan.ANSWER)) == set(rujukan.NAMES)


def test_completion_roles_cover_both_and_karena_joins_both():
    assert set(rujukan.COMPLETION_ROLE) == set(rujukan.COMPLETIONS)
    assert set(rujukan.COMPLETION_ROLE.values()) == {"sasaran", "pelaku"}
    karena = {rujukan.COMPLETION_ROLE[c] for c, link in rujukan.LINK.items() if link == "karena"}
    assert karena == {"sasaran", "pelaku"}  # the joining word alone never decides


def test_the_answer_depends_on_verb_form_word_order_and_completion(split):
    for rows in (split.train, split.test):
        passive, pelaku = rujukan.is_passive(rows), rujukan.is_pelaku(rows)
        acted_on = np.where(passive, rows[:, rujukan.FIRST], rows[:, rujukan.SECOND])
        actor = np.where(passive, rows[:, rujukan.SECOND], rows[:, rujukan.FIRST])
        assert np.array_equal(rows[:, rujukan.ANSWER], np.where(pelaku, actor, acted_on))
        assert np.array_equal(rows[:, rujukan.COMMA], [rujukan.VOCAB.index(rujukan.LINK[c])
                                                       for c in _completions(rows)])
    # The test set is balanced: both fixed-place guesses are at chance.
    assert rujukan.first_name_accuracy(split.test) == 0.5
    assert rujukan.second_name_accuracy(split.test) == 0.5
    # And the completion matters: each verb form in the test set has both answers.
    for passive in (False, True):
        rows = split.test[rujukan.is_passive(split.test) == passive]
        assert set(rujukan.referent_column(rows)) == {rujukan.FIRST, rujukan.SECOND}


def test_the_running_sentence_its_passive_twin_and_the_flip_are_test_sentences(split):
    texts = {rujukan.sentence(row[:rujukan.SENTENCE]) for row in split.test}
    assert RUNNING in texts and PASSIVE in texts and FLIP in texts
    assert rujukan.seen_in_training([RUNNING, FLIP, "Ani memanggil Siti , dia menoleh"]) == [
        False, False, True]


def test_rows_read_as_text_and_round_trip_through_the_word_model(split):
    text = rujukan.sentence(split.test[0])
    words = text.split()
    assert len(words) == rujukan.LENGTH and words[3] in rujukan.LINKS and words[4] == "dia"
    assert words[6:8] == ["siapa", "?"] and words[-1] in words[:3]
    model = TinyGPT(Config(vocab=len(rujukan.VOCAB), T=rujukan.LENGTH), rujukan.VOCAB)
    assert np.array_equal(model.encode(text), split.test[0])


def test_the_vocabulary_and_constants_have_the_published_shape():
    assert len(set(rujukan.VOCAB)) == len(rujukan.VOCAB)
    assert ("memanggil", "dipanggil") in rujukan.VERB_PAIRS and "menoleh" in rujukan.COMPLETIONS
    assert all(a.startswith("me") and p.startswith("di") for a, p in rujukan.VERB_PAIRS)
    assert rujukan.COMPLETION_ROLE["menoleh"] == "sasaran"
    assert rujukan.COMPLETION_ROLE["bosan"] == "pelaku"


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
    passive_flip = "Ani dipanggil Budi karena dia bosan"
    assert rujukan.resolve(committed, [RUNNING, PASSIVE, FLIP, passive_flip]) == [
        "Budi", "Ani", "Ani", "Budi"]
    rows = rujukan.head_attention(committed, [RUNNING, PASSIVE, FLIP])
    assert rows.shape == (3, rujukan.SENTENCE)
    assert rows[0, rujukan.SECOND] >= 0.8 and rows[1, rujukan.FIRST] >= 0.8
    assert rows[2, rujukan.FIRST] >= 0.8


def test_names_are_accepted_in_any_case(committed):
    assert rujukan.resolve(committed, ["ani memanggil budi, dia menoleh"]) == ["Budi"]


@pytest.mark.parametrize("bad, match", [
    (["Ani memanggil Budi , dia bosan"], "'karena'"),
    (["Ani memanggil Budi karena dia menoleh"], "','"),
    (["\u0410ni memanggil Budi , dia menoleh"], r"huruf U\+0410 \(Kiril\) yang mirip 'A'"),
    (["Ani memanggil Bu\u200bdi , dia menoleh"], r"tak terlihat U\+200B \(spasi lebar nol\)"),
    (["Ani memanggil \u202eBudi , dia menoleh"], r"U\+202E \(pembalik arah"),
])
def test_wrong_links_and_lookalike_characters_are_named(committed, bad, match):
    with pytest.raises(ValueError, match=match) as info:
        rujukan.resolve(committed, bad)
    assert "\u202e" not in str(info.value)  # shown by its code, never acted on


def test_messages_quote_at_most_about_eighty_characters(committed):
    huge = "A" * 1_000_000 + " memanggil Budi , dia menoleh"
    with pytest.raises(ValueError) as info:
        rujukan.resolve(committed, [huge])
    assert len(str(info.value)) < 600


@pytest.mark.parametrize("model", [None, "results/model_rujukan.npz", "params"])
def test_what_is_not_a_model_is_refused_by_name(committed, model):
    model = committed.params if model == "params" else model
    for call in (rujukan.resolve, rujukan.head_attention):
        with pytest.raises(TypeError, match=r"'model' harus model rujukan; muat dengan "
                                            r"tasks\.load_weights\(\"rujukan\"\)"):
            call(model, [RUNNING])


@pytest.mark.parametrize("name", ["model_kecil.npz", "model_ingat.npz"])
def test_a_model_of_another_task_is_refused(committed, name):
    with pytest.raises(ValueError, match="bukan model rujukan"):
        tasks.load_weights("rujukan", train.RESULTS / name)
    other = TinyGPT.load(train.RESULTS / name)
    with pytest.raises(ValueError, match="bukan model rujukan"):
        rujukan.resolve(other, [RUNNING])


def test_a_short_window_and_overflowing_weights_are_the_models_fault(committed):
    c = committed.config
    short = TinyGPT(Config(vocab=c.vocab, T=4, d_model=8, n_head=1, n_layer=1, d_mlp=8),
                    rujukan.VOCAB)
    with pytest.raises(ValueError, match="hanya membaca 4 token") as info:
        rujukan.resolve(short, [RUNNING])
    assert "Potong" not in str(info.value)
    big = TinyGPT(c, rujukan.VOCAB, {k: v * np.float32(1e20) if v.ndim > 1 else v
                                     for k, v in committed.params.items()})
    big.info = dict(committed.info)
    for call in (rujukan.resolve, rujukan.head_attention):
        with pytest.raises(ValueError, match="Bobot 'model'") as info:
            call(big, [RUNNING])
        assert "'Q'" not in str(info.value)


@pytest.mark.parametrize("head, error", [
    ([True, False], TypeError), ((5, 0), ValueError), ((0.5, 0), TypeError),
    ("ab", TypeError), ((1,), TypeError), ((0, 3), ValueError), (None, None),
])
def test_bad_heads_are_refused_by_name(committed, head, error):
    if error is None:
        assert rujukan.head_attention(committed, [RUNNING], head=head).shape == (1, 6)
        return
    with pytest.raises(error, match="'head'"):
        rujukan.head_attention(committed, [RUNNING], head=head)


@pytest.mark.parametrize("tokens, error", [
    ([-1], ValueError), ([1.7], TypeError), ([len(rujukan.VOCAB)], ValueError),
    (["a"], TypeError), ([float("nan")], TypeError), (None, TypeError), ([True], TypeError),
    ([], TypeError),
])
def test_sentence_refuses_what_is_not_a_token_row(tokens, error):
    with pytest.raises(error, match="'tokens'"):
        rujukan.sentence(tokens)


def test_sentence_reads_a_row_of_whole_numbers():
    ids = [rujukan.VOCAB.index(w) for w in ("Ani", "memanggil", "Budi")]
    assert rujukan.sentence(ids) == "Ani memanggil Budi"
    assert rujukan.sentence(np.array(ids, dtype=np.int32)) == "Ani memanggil Budi"


@pytest.mark.parametrize("content", ["null", "[]", '{"runs": 5}', "skala"])
def test_the_experiment_reader_refuses_other_json(tmp_path, content):
    path = tmp_path / "e.json"
    if content == "skala":
        path.write_bytes((train.RESULTS / "eksperimen_skala.json").read_bytes())
    else:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=r"eksperimen rujukan.*--experiment rujukan"):
        tasks.load_experiment("rujukan", path)


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
    means = probes.head_means(committed, split.test)
    for l, h in (info["head"], info["verb_head"], info["completion_head"]):
        zeroed = rujukan.accuracy(committed, split.test,
                                  attention=probes.HeadAblation(c.n_layer, l, h))
        mean = rujukan.accuracy(committed, split.test,
                                attention=probes.MeanAblation(c.n_layer, l, h, means))
        limit = (rujukan_train.ABLATED if [l, h] == info["head"]
                 else rujukan_train.READER_ABLATED)
        assert zeroed <= limit and mean <= limit
        assert np.isclose(mean, info["mean_ablated_accuracy"][l][h])
        assert np.isclose(zeroed, info["zeroed_accuracy"][l][h])
    named = {tuple(info["head"]), tuple(info["verb_head"]), tuple(info["completion_head"])}
    assert len(named) == 3  # three different heads: verb, completion, name
    named_again = rujukan_train.name_heads(share, rujukan.completion_share(committed, split.test),
                                           rujukan.verb_share(committed, split.test))
    assert list(named_again) == [info["head"], info["completion_head"], info["verb_head"]]
    assert info["test_accuracy_verb_completion"] >= rujukan_train.ACCURACY
    for l in range(c.n_layer):
        for h in range(c.n_head):
            if (l, h) not in named:
                assert info["zeroed_accuracy"][l][h] >= rujukan_train.OTHERS
    assert all(ok for _, ok in rujukan_train.checks_for(info))
    assert info["cpu_seconds"] <= 120
