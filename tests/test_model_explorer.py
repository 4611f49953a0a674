"""atensi.explorers.attention_maps: every bad argument is refused by name, before any map is drawn."""

import pytest

from atensi import example, model_plots, train
from atensi.explorers import attention_maps
from atensi.model import TinyGPT


@pytest.fixture(scope="module")
def model():
    return TinyGPT.load(train.WEIGHTS)


@pytest.fixture
def no_drawing(monkeypatch):
    def fail(*args, **kwargs):
        pytest.fail("peta digambar sebelum argumennya diperiksa")

    monkeypatch.setattr(model_plots, "attention_figure", fail)
    monkeypatch.setattr(attention_maps, "_numpy_maps", fail)


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(sentence=3), ValueError, "'sentence' harus bilangan bulat 0 sampai 2"),
    (dict(layer=9), ValueError, "'layer' harus bilangan bulat 0 sampai 1"),
    (dict(head=9), ValueError, "'head' harus bilangan bulat 0 sampai 3"),
    (dict(head=-1), ValueError, "'head'"),
    (dict(head=1.0), TypeError, "'head'"),
    (dict(sentences=("ab",)), ValueError, r"sentences\[0\].*terlalu pendek"),
    (dict(sentences="Budi makan."), TypeError, "'sentences' harus tuple atau list"),
    (dict(sentences=()), TypeError, "'sentences'"),
    (dict(sentences=("x" * 500,)), ValueError, "lebih panjang dari T"),
    (dict(kepala=1), TypeError, "tidak dikenal: kepala"),
])
@pytest.mark.parametrize("mode", ["live", "static"])
def test_bad_arguments_are_refused_by_name_before_drawing(model, no_drawing, kwargs, error,
                                                           words, mode):
    pytest.importorskip("ipywidgets")
    with pytest.raises(error, match=words):
        attention_maps.explorer(model, mode=mode, **kwargs)


def test_the_static_and_live_builders_check_too(model, no_drawing):
    pytest.importorskip("ipywidgets")
    with pytest.raises(ValueError, match="'head'"):
        attention_maps.live(model, head=9)
    with pytest.raises(ValueError, match="'layer'"):
        attention_maps.static(model, layer=5)
    with pytest.raises(TypeError, match="'model'"):
        attention_maps.static("bukan model")


def test_first_sentence_is_the_running_example_and_every_sentence_fits_the_model(model):
    first = attention_maps.SENTENCES[0]
    assert first.replace(",", " ").split() == list(example.TOKENS)
    for sentence in attention_maps.SENTENCES:
        ids = model.encode(sentence)
        assert model.decode(ids) == sentence  # every character is in the vocabulary
        assert 3 <= len(sentence) <= model.config.T


@pytest.mark.parametrize("n, error", [(-1, ValueError), (0, ValueError), (1.5, TypeError)])
def test_head_summaries_refuses_a_count_below_one(model, no_drawing, n, error):
    """n = -1 would silently drop the last window instead of meaning "all"."""
    with pytest.raises(error, match=r"'n' harus bilangan bulat"):
        attention_maps.head_summaries(model, "a" * (3 * model.config.T), n=n)
