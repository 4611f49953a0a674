"""atensi.model: gradients (finite differences, kernels), KV cache, files, errors."""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from atensi import kernels, reference
from atensi.model import Adam, Config, TinyGPT, count_params, init_params, kv_cache_bytes

CHARS = "abcdefg"


def tiny(dtype=np.float64, **kw):
    config = Config(**dict(dict(vocab=len(CHARS), T=6, d_model=8, n_head=2, n_layer=2,
                                d_mlp=12, seed=1), **kw))
    return TinyGPT(config, CHARS, init_params(config, dtype))


def _data(model, B=3, seed=0):
    rng = np.random.default_rng(seed)
    shape = (B, model.config.T)
    return rng.integers(0, model.config.vocab, shape), rng.integers(0, model.config.vocab, shape)


@pytest.mark.slow
@pytest.mark.parametrize("scale", [True, False])
def test_whole_model_gradient_matches_finite_differences(scale):
    model = tiny(scale=scale)
    x, y = _data(model)
    _, grads = model.loss_and_grads(x, y)
    rng = np.random.default_rng(2)
    for name, p in model.params.items():
        numeric, analytic = [], []
        flat = p.reshape(-1)
        for i in rng.choice(flat.size, size=min(flat.size, 12), replace=False):
            old = flat[i]
            flat[i] = old + 1e-6
            plus = model.loss(x, y)
            flat[i] = old - 1e-6
            minus = model.loss(x, y)
            flat[i] = old
            numeric.append((plus - minus) / 2e-6)
            analytic.append(grads[name].reshape(-1)[i])
        numeric, analytic = np.array(numeric), np.array(analytic)
        err = np.abs(numeric - analytic).max() / max(np.abs(numeric).max(), 1e-8)
        assert err <= 1e-6, f"{name}: galat relatif {err:.2e}"


def test_gradient_keys_shapes_and_dtype_follow_params():
    model = tiny(np.float32)
    loss, grads = model.loss_and_grads(*_data(model))
    assert np.isfinite(loss) and list(grads) == list(model.params)
    for k, g in grads.items():
        assert g.shape == model.params[k].shape and g.dtype == np.float32, k


def test_a_training_step_with_the_kernels_gives_the_same_loss_and_gradients():
    model = tiny(np.float32, T=19, d_model=16, n_head=2)  # T = 19: not a multiple of a block
    x, y = _data(model, B=2)

    def kernel_attention(Q, K, V, *, causal, scale):
        return kernels.attention(Q, K, V, causal=causal, scale=scale, backend="cpu")

    backward = getattr(kernels, "attention_backward", None)

    def kernel_backward(Q, K, V, dO, *, causal, scale):
        return backward(Q, K, V, dO, causal=causal, scale=scale, backend="cpu")

    loss_ref, g_ref = model.loss_and_grads(x, y)
    loss_k, g_k = model.loss_and_grads(
        x, y, attention=kernel_attention,
        attention_backward=kernel_backward if backward is not None else None)
    assert abs(loss_k - loss_ref) <= 1e-5 * abs(loss_ref)
    for k in g_ref:
        scale = np.abs(g_ref[k]).max() + 1e-6
        assert np.abs(g_k[k] - g_ref[k]).max() <= 1e-4 * scale, k


def test_the_model_attention_is_reference_attention_per_head():
    model = tiny(np.float32)
    A = model.attention_maps("abcdef")
    assert A.shape == (2, 2, 6, 6)
    assert np.allclose(A.sum(-1), 1, atol=1e-6)
    assert np.array_equal(A > 0, np.broadcast_to(np.tril(np.ones((6, 6), bool)), A.shape))


def test_adam_lowers_the_loss_on_a_fixed_batch():
    model = tiny(np.float32)
    x, y = _data(model)
    opt = Adam(model.params, lr=1e-2)
    first = model.loss(x, y)
    for _ in range(30):
        _, g = model.loss_and_grads(x, y)
        opt.step(g)
    assert model.loss(x, y) < 0.5 * first


@pytest.mark.parametrize("temperature", [0.0, 1.0])
def test_kv_cache_gives_the_same_logits_as_the_full_masked_forward_at_every_step(temperature):
    model = tiny(np.float32, T=24, d_model=16, n_head=4)
    prompt = "abcab"
    cached, logits_c = model.generate(prompt, 19, kv_cache=True, temperature=temperature,
                                      seed=3, return_logits=True)
    full, logits_f = model.generate(prompt, 19, kv_cache=False, temperature=temperature,
                                    seed=3, return_logits=True)
    assert cached == full and len(cached) == 19
    assert logits_c.shape == (19, len(CHARS))
    assert np.abs(logits_c - logits_f).max() <= 1e-4
    # and the full forward's last-position logits are what the model gives for that prefix
    ids = model.encode(prompt + full)
    direct = model.logits(ids[None, :-1])[0, len(prompt) - 1:]
    assert np.abs(direct - logits_f).max() <= 1e-5


def test_generation_is_seeded():
    model = tiny(np.float32, T=30)
    a = model.generate("ab", 20, seed=1)
    assert a == model.generate("ab", 20, seed=1)
    assert a != model.generate("ab", 20, seed=2)


def test_parameter_count_and_kv_cache_size():
    model = tiny(np.float32)
    parts = count_params(model.config)
    assert parts["total"] == model.n_params == sum(p.size for p in model.params.values())
    D, F, V, T, L = 8, 12, 7, 6, 2
    per_layer = 4 * D * D + D + D * F + F + F * D + D + 4 * D
    assert model.n_params == V * D + T * D + L * per_layer + 2 * D + D * V + V
    # ANDREA: 12 layers assumed, T = 1024, d_model = 768, float32, one sequence
    assert kv_cache_bytes(12, 1024, 768) == 2 * 12 * 1024 * 768 * 4 == 75_497_472


def test_save_and_load_round_trip(tmp_path):
    model = tiny(np.float32)
    path = model.save(tmp_path / "m.npz", curve={"train": [3.0, 2.5]}, info={"catatan": "uji"})
    back = TinyGPT.load(path)
    assert back.config == model.config and back.chars == model.chars
    assert all(np.array_equal(back.params[k], model.params[k]) for k in model.params)
    assert back.curve["train"].tolist() == [3.0, 2.5] and back.info == {"catatan": "uji"}


def test_load_missing_file_says_how_to_make_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"tidak ditemukan.*python -m atensi\.train"):
        TinyGPT.load(tmp_path / "tidak_ada.npz")


def test_load_truncated_file_says_it_is_broken(tmp_path):
    path = tiny(np.float32).save(tmp_path / "m.npz")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match=r"m\.npz.*rusak atau terpotong.*python -m atensi\.train"):
        TinyGPT.load(path)


def test_load_mismatched_file_names_what_does_not_match(tmp_path):
    path = tiny(np.float32).save(tmp_path / "m.npz")
    with np.load(path) as f:
        data = {k: f[k] for k in f.files}
    config = json.loads(str(data["config"]))
    config["d_model"] = 16
    data["config"] = np.array(json.dumps(config))
    bad = tmp_path / "beda.npz"
    np.savez(bad, **data)
    with pytest.raises(ValueError, match=r"beda\.npz.*tidak cocok.*seharusnya"):
        TinyGPT.load(bad)
    other = tmp_path / "lain.npz"
    np.savez(other, x=np.zeros(3))
    with pytest.raises(ValueError, match=r"lain\.npz.*bukan berkas bobot"):
        TinyGPT.load(other)
    assert zipfile.is_zipfile(other)


def test_bad_arguments_get_indonesian_errors():
    with pytest.raises(ValueError, match="habis dibagi"):
        Config(vocab=5, d_model=10, n_head=3)
    with pytest.raises(TypeError, match="'scale' harus bool"):
        Config(vocab=5, scale=1)
    model = tiny(np.float32)
    with pytest.raises(ValueError, match="tidak dikenal"):
        model.encode("abz")
    with pytest.raises(ValueError, match="melebihi konteks"):
        model.generate("abc", 10)
    with pytest.raises(ValueError, match="'temperature'"):
        model.generate("abc", 1, temperature=-1)
    with pytest.raises(ValueError, match=r"\(B, T\)"):
        model.logits(np.zeros(4, dtype=int))


def test_reference_attention_is_what_the_model_calls(monkeypatch):
    calls = []
    original = reference.attention

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(reference, "attention", spy)
    tiny(np.float32).logits(np.zeros((1, 4), dtype=int))
    assert calls == [{"causal": True, "scale": True}] * 2


# --- the attention-map explorer ---------------------------------------------------


def test_head_summary_names_a_previous_character_head():
    from atensi.explorers.attention_maps import head_summary

    text = "ab cd efg"
    A = np.eye(len(text), k=-1)
    A[0, 0] = 1
    s = head_summary(A, text)
    assert s["sebelumnya"] == 1 and s["diri"] == 0 and s["dua_sebelumnya"] == 0
    with pytest.raises(ValueError, match="berbentuk"):
        head_summary(np.eye(3), text)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["static", "live"])
def test_attention_map_explorer_has_one_frame_per_sentence_layer_and_head(mode):
    from atensi.explorers import attention_maps

    chars = "abc d."
    config = Config(vocab=len(chars), T=12, d_model=8, n_head=2, n_layer=1, d_mlp=8)
    model = TinyGPT(config, chars)
    sentences = ("ab cd.", "dcba a")
    box = attention_maps.explorer(model, sentences, mode=mode)
    if mode == "static":
        assert len(box.frames) == 2 * 1 * 2
        html = box.to_html()
        assert 'data-explorer="peta-atensi"' in html and "Kalimat:" in html
    else:
        assert set(box.controls) == {"sentence", "layer", "head"}
        box.controls["head"].value = 1  # the second head
        assert set(box.values) == {"sebelumnya", "dua_sebelumnya", "diri", "awal_kata"}
    with pytest.raises(ValueError, match="tidak dikenal"):
        attention_maps.explorer(model, ("xyz",), mode=mode)


# --- bad input: refused clearly, never a plausible wrong answer --------------------


def test_loss_refuses_targets_of_another_shape():
    model = tiny()
    x, y = _data(model)
    with pytest.raises(ValueError, match="'targets' harus berbentuk sama"):
        model.loss(x, y[:1])  # would broadcast to a plausible loss


def test_chars_as_a_list_is_refused():
    config = Config(vocab=len(CHARS), T=6, d_model=8, n_head=2, n_layer=1, d_mlp=12)
    with pytest.raises(TypeError, match="'chars' harus str"):
        TinyGPT(config, list(CHARS))


def test_tiny_temperature_is_greedy_not_the_last_character():
    model = tiny()
    greedy = model.generate("ab", 4, temperature=0)
    assert model.generate("ab", 4, temperature=1e-300) == greedy
    assert model.generate("ab", 4, temperature=np.float32(1e-30)) == greedy


@pytest.mark.parametrize("kwargs, error, name", [
    (dict(temperature=True), TypeError, "temperature"),
    (dict(temperature=float("nan")), ValueError, "temperature"),
    (dict(return_logits=1), TypeError, "return_logits"),
    (dict(seed=-1), ValueError, "seed"),
    (dict(seed=1.5), TypeError, "seed"),
])
def test_generate_checks_every_argument(kwargs, error, name):
    with pytest.raises(error, match=f"'{name}'"):
        tiny().generate("ab", 2, **kwargs)


def test_generate_accepts_numpy_numbers():
    model = tiny()
    assert model.generate("ab", 2, temperature=np.float64(0.5), seed=np.int64(3)) == \
        model.generate("ab", 2, temperature=0.5, seed=3)


@pytest.mark.parametrize("ids, error", [([-1], ValueError), ([1.7], TypeError),
                                        ([len(CHARS)], ValueError)])
def test_decode_refuses_what_is_not_a_token(ids, error):
    with pytest.raises(error, match="'ids'"):
        tiny().decode(ids)


def test_cross_entropy_refuses_negative_and_misshaped_targets():
    from atensi.model import cross_entropy

    logits = np.zeros((2, 3, 5))
    with pytest.raises(ValueError, match="'targets'.*negatif"):
        cross_entropy(logits, np.array([[0, 1, -1], [0, 0, 0]]))
    with pytest.raises(ValueError, match="'targets' harus berbentuk"):
        cross_entropy(logits, np.zeros((2, 1), int))
    with pytest.raises(TypeError, match="'targets'"):
        cross_entropy(logits, np.zeros((2, 3)))


@pytest.mark.parametrize("lr", [0.0, -1e-3, float("nan")])
def test_adam_refuses_a_learning_rate_that_is_not_positive(lr):
    with pytest.raises(ValueError, match="'lr'"):
        Adam(tiny().params, lr=lr)
    opt = Adam(tiny().params)
    with pytest.raises(ValueError, match="'lr'"):
        opt.step({k: np.zeros_like(v) for k, v in opt.params.items()}, lr=lr)


@pytest.mark.parametrize("change, error, words", [
    (lambda p: p.pop("wte"), ValueError, "tidak ada wte"),
    (lambda p: p.update(wte=p["wte"][:1]), ValueError, "'wte' harus berbentuk"),
    (lambda p: p.update(wte=p["wte"].astype(complex)), TypeError, "'wte' harus array float"),
    (lambda p: p["wte"].__setitem__((0, 0), np.nan), ValueError, "'wte' berisi NaN"),
])
def test_given_params_are_validated(change, error, words):
    config = Config(vocab=len(CHARS), T=6, d_model=8, n_head=2, n_layer=1, d_mlp=12)
    params = init_params(config)
    change(params)
    with pytest.raises(error, match=words):
        TinyGPT(config, CHARS, params)


def test_a_model_beyond_memory_is_refused_before_allocating(monkeypatch):
    from atensi import memory

    monkeypatch.setattr(memory, "available_memory", lambda kind="numpy": 1e8)
    with pytest.raises(MemoryError, match="Parameter model.*butuh sekitar"):
        TinyGPT(Config(vocab=4, d_model=4096, d_mlp=16384, n_layer=4, n_head=4), "abcd")


# --- load: headers first, finite real floats, JSON info ---------------------------


def _rewrite(path, out, change):
    with np.load(path, allow_pickle=False) as f:
        data = {k: f[k] for k in f.files}
    change(data)
    np.savez(out, **data)
    return out


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update({"param/wte": d["param/wte"] * np.nan}), "berisi NaN atau inf"),
    (lambda d: d.update({"param/wte": d["param/wte"] + 1j}), "bertipe complex"),
    (lambda d: d.update({"info": np.array("{bukan json")}), "'info'.*bukan objek JSON"),
    (lambda d: d.update({"info": np.array("[1, 2]")}), "'info'.*bukan objek JSON"),
    (lambda d: d.update({"lain": np.zeros(3)}), "kunci yang tidak dikenal: lain"),
])
def test_load_refuses_weights_that_are_not_finite_real_or_well_formed(tmp_path, change, words):
    path = tiny().save(tmp_path / "asli.npz")
    bad = _rewrite(path, tmp_path / "buruk.npz", change)
    with pytest.raises(ValueError, match=words):
        TinyGPT.load(bad)


@pytest.mark.slow
def test_load_reads_headers_before_data_so_a_zip_bomb_is_refused(tmp_path, monkeypatch):
    path = tiny().save(tmp_path / "asli.npz")
    bomb = tmp_path / "bom.npz"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        with dst.open("curve/extra.npy", "w", force_zip64=True) as f:
            np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False,
                                                     "shape": (2**27,)})
            chunk = bytes(2**24)
            for _ in range(64):  # 1 GiB of zeros, a few MiB on disk
                f.write(chunk)
    assert bomb.stat().st_size < 8 * 2**20
    read = np.lib.format.read_array

    def small_only(*args, **kwargs):  # metadata may be read; nothing big before the check
        array = read(*args, **kwargs)
        assert array.nbytes < 2**20, "data besar dibaca sebelum pemeriksaan"
        return array

    monkeypatch.setattr(np.lib.format, "read_array", small_only)
    with pytest.raises(ValueError, match="kurva latihan berukuran"):
        TinyGPT.load(bomb)


def test_load_of_a_file_that_is_not_npz_is_a_clear_refusal(tmp_path):
    junk = tmp_path / "acak.npz"
    junk.write_bytes(b"bukan arsip" * 100)
    with pytest.raises(ValueError, match="rusak atau terpotong"):
        TinyGPT.load(junk)
    single = tmp_path / "satu.npz"
    with open(single, "wb") as f:
        np.save(f, np.zeros(3))
    with pytest.raises(ValueError, match="bukan arsip .npz"):
        TinyGPT.load(single)


_CONFIG = dict(vocab=len(CHARS), T=6, d_model=8, n_head=2, n_layer=1, d_mlp=12)


@pytest.mark.parametrize("call, error, words", [
    (lambda: Config(**dict(_CONFIG, d_mlp=12.0)), TypeError, "'d_mlp' harus bilangan bulat"),
    (lambda: Config(**dict(_CONFIG, n_layer=0)), ValueError, "'n_layer' harus bilangan bulat >= 1"),
    (lambda: Config(**dict(_CONFIG, d_model=9, n_head=2)), ValueError,
     r"'d_model' \(9\) harus habis dibagi 'n_head' \(2\).*kelipatan"),
    (lambda: Config(**dict(_CONFIG, seed=-1)), ValueError, "'seed' harus bilangan bulat >= 0"),
    (lambda: Config(**dict(_CONFIG, scale="ya")), TypeError, "'scale' harus bool"),
    (lambda: TinyGPT(dict(_CONFIG), CHARS), TypeError, "'config' harus atensi.model.Config"),
    (lambda: TinyGPT(Config(**_CONFIG), ("a b", "c")), ValueError, "'chars' berupa daftar kata"),
    (lambda: TinyGPT(Config(**_CONFIG), CHARS[:-1]), ValueError, "'chars' harus berisi 7"),
    (lambda: tiny().to("gpu"), ValueError, "'module' harus salah satu dari 'numpy', 'cupy'"),
    (lambda: tiny().loss_and_grads(*_data(tiny(), B=2), positions=[9]), ValueError,
     "'positions' harus list kolom"),
    (lambda: tiny().generate("", 2), ValueError, "'prompt' harus teks yang tidak kosong"),
    (lambda: tiny().generate("ab", -1), ValueError, "'n' harus bilangan bulat >= 0"),
    (lambda: tiny().generate("ab", 2, kv_cache="ya"), TypeError, "'kv_cache' harus bool"),
    (lambda: tiny().generate("abcd", 3), ValueError, r"'prompt' \(4 token\) \+ 'n' \(3\)"),
    (lambda: kv_cache_bytes(2, 0, 8), ValueError, "'T' harus bilangan bulat >= 1"),
    (lambda: Adam({}), TypeError, "'params' harus dict nama -> array yang tidak kosong"),
    (lambda: Adam(tiny().params, betas=0.9), TypeError, "'betas' harus pasangan"),
    (lambda: Adam(tiny().params, betas=(0.9, 1.0)), ValueError, "'betas' harus di antara 0 dan 1"),
    (lambda: Adam(tiny().params).step({"wte": 0}), ValueError,
     "'grads' harus dict dengan kunci yang sama dengan params"),
])
def test_each_bad_argument_is_refused_by_name(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_config_keeps_plain_numbers_so_numpy_numbers_still_save(tmp_path):
    config = Config(**dict(_CONFIG, vocab=np.int64(len(CHARS)), seed=np.int32(2)),
                    scale=np.bool_(True))
    assert config == Config(**dict(_CONFIG, seed=2))
    assert type(config.vocab) is int and type(config.scale) is bool
    model = TinyGPT(config, CHARS)
    assert TinyGPT.load(model.save(tmp_path / "m.npz")).config == config


# --- damaged or ambiguous members, and refusals before any work -------------------


def _with_member(path, out, name, header, data=b""):
    """A copy of ``path`` with one more member ``name`` (a .npy header and raw data)."""
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            if info.filename != name:
                dst.writestr(info, src.read(info))
        with dst.open(name, "w") as f:
            np.lib.format.write_array_header_1_0(f, header)
            f.write(data)
    return out


@pytest.mark.parametrize("change, words", [
    (lambda d: d.update({"format": np.array("x")}), r"'format' harus satu bilangan bulat.*<U1"),
    (lambda d: d.update({"format": np.array(1.5)}), r"'format' harus satu bilangan bulat.*float64"),
    (lambda d: d.update({"format": np.arange(3)}), r"'format' harus satu bilangan bulat.*\(3,\)"),
    (lambda d: d.update({"info": np.array(5)}), r"'info' harus teks.*int64"),
    (lambda d: d.update({"info": np.array(b"\xff")}), r"'info' harus teks.*S1"),
    (lambda d: d.update({"config": np.arange(4)}), r"'config' harus teks"),
])
def test_load_refuses_damaged_metadata_in_indonesian(tmp_path, change, words):
    path = tiny().save(tmp_path / "asli.npz")
    bad = _rewrite(path, tmp_path / "buruk.npz", change)
    with pytest.raises(ValueError, match=words + r".*rusak.*python -m atensi\.train"):
        TinyGPT.load(bad)


@pytest.mark.parametrize("member", ["format.npy", "info.npy", "curve/train.npy"])
def test_load_refuses_a_header_larger_than_its_data_before_allocating(tmp_path, member):
    """NumPy would allocate what the header declares (here 4 TiB) before reading."""
    path = tiny().save(tmp_path / "asli.npz", curve={"train": np.zeros(3)})
    header = {"descr": "|u1", "fortran_order": False, "shape": (2**21, 2**21)}
    bad = _with_member(path, tmp_path / "buruk.npz", member, header, b"\0" * 16)
    with pytest.raises(ValueError, match=r"mengaku berisi \(2097152, 2097152\).*rusak"):
        TinyGPT.load(bad)


def test_load_refuses_two_arrays_for_one_name(tmp_path):
    model = tiny()
    path = model.save(tmp_path / "asli.npz")
    twice = tmp_path / "ganda.npz"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(twice, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, src.read(info))
        with pytest.warns(UserWarning, match="Duplicate name"):
            dst.writestr("param/wte.npy", src.read("param/wte.npy"))
    with pytest.raises(ValueError, match=r"dua array atau lebih bernama param/wte.*tidak jelas"):
        TinyGPT.load(twice)


def test_load_of_a_folder_names_path(tmp_path):
    with pytest.raises(IsADirectoryError, match=r"'path' = .* adalah folder.*model_kecil\.npz"):
        TinyGPT.load(tmp_path)


@pytest.mark.parametrize("info, error, words", [
    ({"a": {1, 2}}, TypeError, r"'info' harus bisa ditulis sebagai JSON.*bertipe set.*list\(\.\.\.\)"),
    ([1, 2], TypeError, r"'info' harus dict"),
])
def test_save_refuses_info_that_json_cannot_hold_before_writing(tmp_path, info, error, words):
    with pytest.raises(error, match=words):
        tiny().save(tmp_path / "m.npz", info=info)
    assert not list(tmp_path.iterdir())


def test_save_to_a_folder_names_path(tmp_path):
    with pytest.raises(ValueError, match=r"'path' menunjuk ke folder"):
        tiny().save(tmp_path)


def test_count_params_of_something_else_is_refused():
    for bad in (5, None, {"vocab": 4}):
        with pytest.raises(TypeError, match=r"'config' harus atensi\.model\.Config"):
            count_params(bad)


@pytest.mark.parametrize("bad, error, words", [
    (np.nan, ValueError, r"'grads\['w'\]' berisi NaN atau inf.*tidak diubah"),
    (np.inf, ValueError, r"'grads\['w'\]' berisi NaN atau inf"),
    ("shape", ValueError, r"'grads\['w'\]' harus berbentuk sama.*\(3,\)"),
    ("list", TypeError, r"'grads\['w'\]' harus array float"),
])
def test_adam_refuses_bad_gradients_before_changing_anything(bad, error, words):
    params = {"w": np.ones(3), "b": np.ones(2)}
    opt = Adam(params)
    grads = {"w": np.ones(3), "b": np.ones(2)}
    grads["w"] = {"shape": np.ones(4), "list": [1.0, 2.0, 3.0]}.get(bad) if isinstance(bad, str) \
        else np.full(3, bad)
    with pytest.raises(error, match=words):
        opt.step(grads)
    assert (params["w"] == 1).all() and (params["b"] == 1).all() and opt.t == 0


@pytest.mark.parametrize("logits, error, words", [
    (np.full((2, 7), np.nan), ValueError, r"'logits' berisi 14 nilai NaN atau inf"),
    (np.full((2, 7), np.inf), ValueError, r"'logits' berisi 14 nilai NaN atau inf"),
    (np.zeros((2, 7), int), TypeError, r"'logits' harus bertipe float"),
    (np.zeros((0, 7)), ValueError, r"'logits' kosong"),
    ("x", TypeError, r"'logits' harus array"),
])
def test_cross_entropy_refuses_logits_that_are_not_finite_numbers(logits, error, words):
    from atensi.model import cross_entropy

    targets = np.zeros(np.shape(logits)[:-1], int) if not isinstance(logits, str) else np.zeros(1, int)
    with pytest.raises(error, match=words):
        cross_entropy(logits, targets)


def test_to_cupy_without_a_gpu_says_what_to_do(monkeypatch):
    from atensi.kernels import loading

    monkeypatch.setattr(loading, "gpu_status", lambda: (False, "CuPy tidak menemukan driver CUDA"))
    model = tiny()
    with pytest.raises(RuntimeError, match=r"'module' = 'cupy' butuh GPU.*driver CUDA.*to\('numpy'\)"):
        model.to("cupy")
    assert isinstance(model.params["wte"], np.ndarray)


def test_an_attention_that_is_not_a_function_is_refused_by_the_model():
    model = tiny(np.float32)
    x, y = _data(model)
    for name in ("attention", "attention_backward"):
        with pytest.raises(TypeError, match=f"Argumen '{name}' harus None.*'cepat' \\(str\\)"):
            model.loss_and_grads(x, y, **{name: "cepat"})
    with pytest.raises(TypeError, match="Argumen 'attention' harus None"):
        model.forward(model.check_ids(x), attention=5)
