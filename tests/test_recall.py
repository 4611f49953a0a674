"""atensi.recall and atensi.recall_train: the word-level associative-recall model.

The story corpus (determinism, vocabulary, the held-out split), the word
vocabulary in TinyGPT, gradients with only some positions graded, and the
targets on the committed weights (the probes: tests/test_tasks_probes.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from atensi import recall, recall_train, tasks
from atensi.explorers import attention_maps
from atensi.model import Config, TinyGPT, init_params
from atensi.tasks import probes

WORDS = ("Budi", "Ani", "apel", "buku", "punya", ".", "Ini")


def tiny_words(dtype=np.float64, **kw):
    config = Config(**dict(dict(vocab=len(WORDS), T=6, d_model=8, n_head=2, n_layer=2,
                                d_mlp=12, seed=1), **kw))
    return TinyGPT(config, WORDS, init_params(config, dtype))


@pytest.fixture(scope="module")
def split():
    return recall.make_split(0)


@pytest.fixture(scope="module")
def committed():
    return tasks.load_weights("ingat")


# --- the corpus ---------------------------------------------------------------


def test_the_corpus_is_the_same_for_the_same_seed_and_differs_for_another():
    a, b = recall.make_split(0, n_train=300, n_test=50), recall.make_split(0, n_train=300, n_test=50)
    assert np.array_equal(a.train, b.train) and np.array_equal(a.test, b.test)
    assert np.array_equal(a.test_query, b.test_query)
    c = recall.make_split(1, n_train=300, n_test=50)
    assert not np.array_equal(a.train, c.train)
    # The test stories do not depend on how many training stories were drawn.
    d = recall.make_split(0, n_train=100, n_test=50)
    assert np.array_equal(a.test, d.test)


def test_no_held_out_pair_is_ever_seen_in_training(split):
    held = {(n, o) for n in range(len(recall.NAMES)) for o in range(len(recall.OBJECTS))
            if recall.held_out(n, o)}
    assert len(held) == len(recall.NAMES) * len(recall.OBJECTS) // recall.HELD_OUT_EVERY
    assert not recall.pairs_in(split.train) & held
    # Not even a name and an object that merely share a training story.
    names = {recall.VOCAB.index(w): n for n, w in enumerate(recall.NAMES)}
    objects = {recall.VOCAB.index(w): n for n, w in enumerate(recall.OBJECTS)}
    for row in split.train[:2000]:
        ns = [names[int(row[4 * f])] for f in range(recall.FACTS)]
        os_ = [objects[int(row[4 * f + 2])] for f in range(recall.FACTS)]
        assert not any(recall.held_out(n, o) for n in ns for o in os_)
    # Every test story asks about a held-out pair, and its answer is that name.
    for row, q in zip(split.test, split.test_query):
        name, obj = names[int(row[4 * q])], objects[int(row[4 * q + 2])]
        assert recall.held_out(name, obj)
        assert row[recall.ANSWER] == row[4 * q] and row[recall.ANSWER - 1] == row[4 * q + 2]


def test_stories_read_as_indonesian_and_round_trip_through_the_word_model(split):
    text = recall.story(split.test[0])
    words = text.split()
    assert len(words) == recall.LENGTH and words[3] == "." and words[-3] == "Ini"
    assert words[1] == "punya" and words[-1] in recall.NAMES and words[-2] in recall.OBJECTS
    model = TinyGPT(Config(vocab=len(recall.VOCAB), T=recall.LENGTH), recall.VOCAB)
    assert np.array_equal(model.encode(text), split.test[0])
    assert model.decode(split.test[0]) == text


def test_the_vocabulary_has_distinct_words_without_spaces():
    assert len(set(recall.VOCAB)) == len(recall.VOCAB)
    assert all(w and not any(c.isspace() for c in w) for w in recall.VOCAB)
    assert set(recall.NAMES).isdisjoint(recall.OBJECTS)


def test_a_bad_seed_is_refused_in_indonesian():
    with pytest.raises(ValueError, match="'seed'"):
        recall.make_split(-1)
    with pytest.raises(TypeError, match="'n_train'"):
        recall.make_split(0, n_train=2.5)


# --- the word vocabulary in TinyGPT ------------------------------------------


def test_word_model_encodes_decodes_and_refuses_unknown_words():
    model = tiny_words()
    ids = model.encode("Budi punya apel .")
    assert ids.tolist() == [0, 4, 2, 5]
    assert model.decode(ids) == "Budi punya apel ."
    with pytest.raises(ValueError, match="tidak dikenal.*jeruk"):
        model.encode("Budi punya jeruk")


def test_word_vocabulary_with_spaces_or_duplicates_is_refused():
    config = Config(vocab=2, T=4, d_model=8, n_head=2, n_layer=1, d_mlp=8)
    with pytest.raises(ValueError, match="tanpa spasi"):
        TinyGPT(config, ("a b", "c"))
    with pytest.raises(ValueError, match="2 kata berbeda"):
        TinyGPT(config, ("a", "a"))


def test_word_model_saves_and_loads_its_vocabulary(tmp_path):
    model = tiny_words(np.float32)
    back = TinyGPT.load(model.save(tmp_path / "kata.npz"))
    assert back.chars == WORDS and back.words
    x = np.array([[0, 4, 2, 5, 6, 2]])
    assert np.array_equal(back.logits(x), model.logits(x))


def test_the_character_model_still_loads_as_characters():
    from atensi import train

    model = TinyGPT.load(train.WEIGHTS)
    assert isinstance(model.chars, str) and not model.words
    assert model.decode(model.encode("atensi")) == "atensi"


def test_word_model_generates_whole_words():
    model = tiny_words()
    text = model.generate("Budi punya", 3, temperature=0)
    assert len(text.split()) == 3 and all(w in WORDS for w in text.split())
    with pytest.raises(ValueError, match="token"):
        model.generate("Budi punya apel", 4)  # 3 + 4 > T = 6


@pytest.mark.slow
@pytest.mark.parametrize("positions", [None, [-1], [1, 3]])
def test_gradient_with_graded_positions_matches_finite_differences(positions):
    model = tiny_words()
    rng = np.random.default_rng(0)
    x = rng.integers(0, len(WORDS), (3, 6))
    y = rng.integers(0, len(WORDS), (3, 6))

    def loss():
        return model.loss_and_grads(x, y, positions=positions)[0]

    _, grads = model.loss_and_grads(x, y, positions=positions)
    for name, p in model.params.items():
        flat = p.reshape(-1)
        for i in rng.choice(flat.size, size=min(flat.size, 6), replace=False):
            old = flat[i]
            flat[i] = old + 1e-6
            plus = loss()
            flat[i] = old - 1e-6
            minus = loss()
            flat[i] = old
            numeric = (plus - minus) / 2e-6
            assert abs(numeric - grads[name].reshape(-1)[i]) <= 1e-6 * max(1.0, abs(numeric)), name


def test_graded_positions_equal_the_loss_of_those_columns_only():
    model = tiny_words()
    rng = np.random.default_rng(3)
    x = rng.integers(0, len(WORDS), (2, 6))
    y = rng.integers(0, len(WORDS), (2, 6))
    logits = model.logits(x)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    expected = -np.log(p[np.arange(2), 5, y[:, 5]]).mean()
    assert np.isclose(model.loss_and_grads(x, y, positions=[5])[0], expected, rtol=1e-12)


@pytest.mark.parametrize("bad", [[], [6], (True,), "akhir", [1.5]])
def test_bad_positions_are_refused_before_any_work(bad):
    model = tiny_words()
    x = np.zeros((1, 6), dtype=np.int64)
    with pytest.raises(ValueError, match="'positions'"):
        model.loss_and_grads(x, x, positions=bad)


# --- training ------------------------------------------------------------------


@pytest.mark.slow
def test_two_short_runs_give_identical_weights(split):
    def run():
        model = TinyGPT(Config(vocab=len(recall.VOCAB), **recall_train.RECALL_MODEL), recall.VOCAB)
        recall_train.train_recall(model, split, steps=4, batch_size=8, lr=5e-3, warmup=2,
                                  eval_every=4, clip=1.0, seed=0, log=None)
        return model.params

    a, b = run(), run()
    assert all(np.array_equal(a[k], b[k]) for k in a)


# --- the committed weights -----------------------------------------------------


def test_committed_weights_meet_the_targets(committed, split):
    info = committed.info
    assert committed.words and committed.chars == recall.VOCAB
    assert committed.config == Config(vocab=len(recall.VOCAB), **recall_train.RECALL_MODEL)
    accuracy = recall.accuracy(committed, split.test)
    assert accuracy >= 0.95 and accuracy == info["test_accuracy"]
    assert recall.bigram_accuracy(split.train, split.test) <= 1 / recall.FACTS
    assert info["cpu_seconds"] <= 120


@pytest.mark.slow
def test_the_named_head_looks_at_the_asked_object_and_ablating_it_breaks_recall(committed, split):
    share = recall.attention_share(committed, split.test, split.test_query)
    layer, head = committed.info["head"]
    assert share[layer, head] == share.max() and share[layer, head] > 0.5
    c = committed.config
    ablated = recall.accuracy(committed, split.test,
                              attention=probes.HeadAblation(c.n_layer, layer, head))
    assert ablated < 0.5 < committed.info["test_accuracy"]
    assert np.isclose(ablated, committed.info["head_ablated_accuracy"])


# --- the explorer on the word model ----------------------------------------------


def test_word_head_summary_counts_the_earlier_same_word():
    words = ["a", "b", "a", "c", "b"]
    A = np.tril(np.ones((5, 5)))
    A[2] = [0.7, 0.1, 0.2, 0, 0]  # "a" again: 0.7 on the earlier "a"
    A[4] = [0.1, 0.6, 0.1, 0.1, 0.1]  # "b" again: 0.6 on the earlier "b"
    summary = attention_maps.word_head_summary(A, words)
    assert np.isclose(summary["kata_sama"], (0.7 + 0.6) / 2)
    assert np.isclose(summary["sebelumnya"], np.mean([A[2, 1], A[3, 2], A[4, 3]]))
    with pytest.raises(ValueError, match="berbentuk"):
        attention_maps.word_head_summary(A[:4, :4], words)


@pytest.mark.slow
def test_the_static_explorer_shows_word_labels_for_the_word_model(committed, split):
    story = recall.story(split.test[0][:-1])
    box = attention_maps.explorer(committed, (story,), mode="static")
    c = committed.config
    assert len(box.frames) == c.n_layer * c.n_head
    html = box.to_html()
    assert "Cerita:" in html and "kata yang sama" in html
    with pytest.raises(ValueError, match="tidak dikenal"):
        attention_maps.explorer(committed, ("Budi punya mobil",), mode="static")
