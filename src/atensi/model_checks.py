"""Pemeriksaan masukan model kecil (:mod:`atensi.model`) dan pelatihannya.

Teks dan token (karakter atau kata yang dikenal model, indeks token 0…vocab − 1,
*batch* (B, T) yang muat di konteks), konfigurasi dan parameter model, *prompt*
generasi, info berkas bobot, potongan teks latihan, serta argumen Adam
(``betas``, gradien satu per parameter, hingga). Dipakai ``model``, ``train``
dan ``training_loop``; pemeriksaan umum (bilangan, bool, jenis array) ada di
:mod:`atensi.validation`, jadi argumen yang sama tetap mendapat pesan yang sama.
"""

from __future__ import annotations

import numpy as np

from atensi.validation import all_finite, check_number, kind, xp_of


# ---------------------------------------------------------------------------
# Tokens: text in, token ids out
# ---------------------------------------------------------------------------


def check_text(text, vocabulary, name: str = "text", *, words: bool = False) -> list:
    """Text as its tokens (words split at spaces, or characters), each in ``vocabulary``."""
    if not isinstance(text, str):
        raise TypeError(f"Argumen '{name}' harus str, bukan {type(text).__name__}.")
    tokens = text.split() if words else list(text)
    unknown = sorted({t for t in tokens if t not in vocabulary})
    if unknown and words:
        raise ValueError(
            f"Argumen '{name}' berisi kata yang tidak dikenal model: {', '.join(unknown)}. "
            "Model kata hanya mengenal kosakatanya (lihat model.chars); pisahkan tanda baca "
            "dengan spasi, atau ganti kata itu."
        )
    if unknown:
        raise ValueError(
            f"Argumen '{name}' berisi karakter yang tidak dikenal model: {''.join(unknown)!r}. "
            "Model hanya mengenal karakter korpusnya (lihat model.chars); ganti atau hapus "
            "karakter itu."
        )
    return tokens


def _host_array(x) -> np.ndarray:
    return np.asarray(x.get() if hasattr(x, "get") else x)


def check_token_ids(ids, vocab: int, name: str = "ids") -> np.ndarray:
    """Token ids to decode: whole numbers 0…vocab − 1, any shape."""
    ids = _host_array(ids)
    if ids.size and ids.dtype.kind not in "iu":
        raise TypeError(
            f"Argumen '{name}' harus bilangan bulat (indeks token), tetapi yang diterima "
            f"tipe {ids.dtype}. Bulatkan dulu, misalnya {name}.astype(int).")
    if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= vocab):
        raise ValueError(
            f"Token di '{name}' harus 0..{vocab - 1}, tetapi ada {int(ids.min())}.."
            f"{int(ids.max())}.")
    return ids


def check_token_batch(idx, T: int, vocab: int, name: str = "idx", *,
                      min_rows: int = 0) -> np.ndarray:
    """A (B, T') batch of token ids, 1 <= T' <= T, each 0…vocab − 1 (on the host);
    ``min_rows``: B at least this (an average over no rows is no number)."""
    idx = _host_array(idx)
    if idx.ndim != 2 or idx.dtype.kind not in "iu" or len(idx) < min_rows:
        raise ValueError(
            f"Argumen '{name}' harus array bilangan bulat berbentuk (B, T)"
            + (f" dengan B >= {min_rows}" if min_rows else "")
            + f", tetapi yang diterima bentuk {idx.shape} dtype {idx.dtype}. Buat potongannya "
            "dengan atensi.train.windows(ids, T) atau atensi.train.batch(...)."
        )
    if idx.shape[1] > T or idx.shape[1] < 1:
        raise ValueError(
            f"Panjang urutan '{name}' harus 1..{T} (config.T), tetapi "
            f"{idx.shape[1]}. Potong teksnya."
        )
    if idx.size and (idx.min() < 0 or idx.max() >= vocab):
        raise ValueError(
            f"Token di '{name}' harus 0..{vocab - 1}, tetapi ada "
            f"{int(idx.min())}..{int(idx.max())}."
        )
    return idx


def check_target_tokens(targets, shape, vocab: int) -> None:
    """Targets: integers 0..vocab-1 shaped like the logits without their last axis
    (a negative index would silently pick a token from the end)."""
    dtype = getattr(targets, "dtype", None)
    if dtype is None or dtype.kind not in "iu":
        raise TypeError(
            f"Argumen 'targets' harus array bilangan bulat (indeks token), tetapi yang "
            f"diterima {type(targets).__name__} bertipe {dtype}."
        )
    if tuple(targets.shape) != tuple(shape):
        raise ValueError(
            f"Argumen 'targets' harus berbentuk {tuple(shape)} (bentuk logit tanpa sumbu "
            f"terakhir), tetapi yang diterima {tuple(targets.shape)}."
        )
    if targets.size and (int(targets.min()) < 0 or int(targets.max()) >= vocab):
        raise ValueError(
            f"Token di 'targets' harus 0..{vocab - 1}, tetapi ada {int(targets.min())}.."
            f"{int(targets.max())}. Indeks negatif tidak boleh (tidak dihitung dari belakang)."
        )


# ---------------------------------------------------------------------------
# The model: configuration, parameters, generation, saved files
# ---------------------------------------------------------------------------


def check_model_params(params, expected: dict) -> dict:
    """A model's parameter dict: every name of ``expected`` (name → shape), that
    shape, real finite floats."""
    if not isinstance(params, dict):
        raise TypeError(f"Argumen 'params' harus dict nama -> array, bukan {type(params).__name__}.")
    missing = sorted(set(expected) - set(params))
    extra = sorted(set(params) - set(expected))
    if missing or extra:
        raise ValueError(
            "Argumen 'params' tidak cocok dengan config: "
            + "; ".join(x for x in (f"tidak ada {', '.join(missing[:4])}" if missing else "",
                                   f"berlebih {', '.join(map(str, extra[:4]))}" if extra else "")
                        if x)
            + ". Buat dengan atensi.model.init_params(config).")
    for name, shape in expected.items():
        value = params[name]
        dtype = getattr(value, "dtype", None)
        if dtype is None or dtype.kind != "f":
            raise TypeError(
                f"Parameter '{name}' harus array float (NumPy/CuPy), tetapi yang diterima "
                f"{type(value).__name__} bertipe {dtype}.")
        if tuple(value.shape) != shape:
            raise ValueError(
                f"Parameter '{name}' harus berbentuk {shape}, tetapi yang diterima "
                f"{tuple(value.shape)}.")
        if not bool(xp_of(value).isfinite(value).all()):
            raise ValueError(f"Parameter '{name}' berisi NaN atau inf. Latih ulang atau muat "
                             "bobot lain.")
    return params


def check_heads(d_model: int, n_head: int) -> None:
    """Every head gets d_k = d_model / n_head columns: no remainder."""
    if d_model % n_head:
        raise ValueError(
            f"'d_model' ({d_model}) harus habis dibagi 'n_head' ({n_head}): setiap head "
            "mendapat d_k = d_model / n_head kolom. Pilih d_model kelipatan n_head."
        )


def check_vocabulary(chars, vocab: int, name: str = "chars") -> bool:
    """A model's tokens: text (one character each) or a tuple of words without spaces,
    ``vocab`` distinct ones. Returns whether they are words."""
    words = isinstance(chars, tuple)
    if not words and not isinstance(chars, str):
        raise TypeError(
            f"Argumen '{name}' harus str (satu karakter per token, misalnya corpus.chars) "
            f"atau tuple kata (model kata), bukan {type(chars).__name__}.")
    if words and not all(isinstance(w, str) and w and not any(c.isspace() for c in w)
                         for w in chars):
        raise ValueError(
            f"Argumen '{name}' berupa daftar kata harus berisi teks tanpa spasi dan tidak "
            f"kosong, tetapi yang diterima {list(chars)[:6]!r}..."
        )
    unit = "kata" if words else "karakter"
    if len(chars) != vocab or len(set(chars)) != len(chars):
        raise ValueError(
            f"Argumen '{name}' harus berisi {vocab} {unit} berbeda (config.vocab), "
            f"tetapi panjangnya {len(chars)} dengan {len(set(chars))} {unit} berbeda."
        )
    return words


def check_columns(columns, T: int, name: str = "positions") -> list:
    """Graded columns of a (B, T) batch: a non-empty list of whole numbers -T…T-1."""
    ok = isinstance(columns, (list, tuple)) and columns and all(
        isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) and -T <= i < T
        for i in columns)
    if not ok:
        raise ValueError(
            f"Argumen '{name}' harus list kolom bilangan bulat -{T}..{T - 1} yang "
            f"tidak kosong (atau None: semua posisi), tetapi yang diterima {columns!r}."
        )
    return list(columns)


def check_prompt(prompt, name: str = "prompt") -> str:
    """Text to continue: a str with at least one character."""
    if not isinstance(prompt, str) or not prompt:
        raise ValueError(f"Argumen '{name}' harus teks yang tidak kosong, bukan {prompt!r}.")
    return prompt


def check_context(n_prompt: int, n: int, T: int) -> None:
    """A prompt of ``n_prompt`` tokens and ``n`` new ones fit the context T."""
    if n_prompt + n > T:
        raise ValueError(
            f"Argumen 'prompt' ({n_prompt} token) + 'n' ({n}) melebihi konteks model "
            f"T = {T}. Perpendek prompt atau kurangi n."
        )


def check_json_object(value, name: str, *, optional: bool = True) -> dict:
    """A dict that JSON can write (``info`` of a weights file), or None."""
    import json

    if value is None and optional:
        return {}
    if not isinstance(value, dict):
        raise TypeError(f"Argumen '{name}' harus dict (objek JSON){' atau None' if optional else ''}, "
                        f"tetapi yang diterima {type(value).__name__}. Tulis misalnya "
                        f"{name}={{'catatan': 'teks'}}.")
    try:
        json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError) as err:
        import re

        found = re.search(r"type (\w+)", str(err))
        what = f"ada nilai bertipe {found.group(1)}" if found else "ada nilai yang bukan JSON"
        raise TypeError(
            f"Argumen '{name}' harus bisa ditulis sebagai JSON (teks, angka, bool, None, list, "
            f"dict dengan kunci teks), tetapi {what}. Ubah dulu nilainya, misalnya set menjadi "
            "list(...) dan array menjadi .tolist().") from None
    return value


# ---------------------------------------------------------------------------
# Training and the Adam optimizer
# ---------------------------------------------------------------------------


def check_window_text(length: int, T: int, name: str) -> None:
    """A token stream long enough for one training window: T inputs, their targets,
    and one start to draw (T + 2 tokens)."""
    if length < T + 2:
        raise ValueError(
            f"Teks '{name}' hanya {length} karakter, padahal satu potongan butuh T + 2 = "
            f"{T + 2} karakter (T = {T}). Pakai teks yang lebih panjang, atau model dengan "
            "T lebih kecil.")


def check_printer(log, name: str = "log"):
    """Where progress lines go: a print function (``print``, ``list.append``) or None."""
    if log is not None and not callable(log):
        raise TypeError(f"Argumen '{name}' harus fungsi cetak (misalnya print) atau None, tetapi "
                        f"yang diterima {log!r} ({type(log).__name__}).")
    return log


_ATTENTION_SIGNATURES = {
    "attention": ("reference.attention(Q, K, V, *, causal, scale)",
                  "reference.attention atau kernels.attention"),
    "attention_backward": ("reference.attention_backward(Q, K, V, dO, *, causal, scale)",
                           "reference.attention_backward atau kernels.attention_backward"),
}


def check_attention_function(value, name: str = "attention"):
    """A replacement for the model's attention: None (the NumPy reference) or a function
    called like ``reference.attention`` / ``reference.attention_backward``."""
    if value is None or callable(value):
        return value
    signature, examples = _ATTENTION_SIGNATURES[name]
    raise TypeError(
        f"Argumen '{name}' harus None (atensi NumPy dari atensi.reference) atau fungsi yang "
        f"dipanggil seperti {signature}, misalnya {examples}; yang diterima {value!r:.60} "
        f"({type(value).__name__}). Tulis {name}=None untuk memakai bawaannya."
    )


def check_param_dict(params, name: str = "params") -> dict:
    """Parameters to optimise: a non-empty dict name → array."""
    if not isinstance(params, dict) or not params:
        raise TypeError(f"Argumen '{name}' harus dict nama -> array yang tidak kosong, "
                        f"bukan {params!r:.60}.")
    return params


def check_betas(betas, name: str = "betas") -> tuple:
    """Adam's decay rates: a pair (beta1, beta2), each 0 ≤ beta < 1."""
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise TypeError(f"Argumen '{name}' harus pasangan (beta1, beta2), bukan {betas!r}.")
    betas = tuple(check_number(b, f"{name}[{n}]", low=0.0) for n, b in enumerate(betas))
    if max(betas) >= 1:
        raise ValueError(f"Argumen '{name}' harus di antara 0 dan 1 (kurang dari 1), tetapi "
                         f"yang diterima {betas}.")
    return betas


def check_same_keys(value, like: dict, name: str, like_name: str, made_by: str) -> dict:
    """A dict with exactly the keys of ``like`` (gradients of every parameter)."""
    if not isinstance(value, dict) or set(value) != set(like):
        raise ValueError(f"Argumen '{name}' harus dict dengan kunci yang sama dengan "
                         f"{like_name} ({made_by}).")
    return value


def check_gradients(grads, params: dict, name: str = "grads") -> dict:
    """Gradients to apply: one finite float array per parameter, shaped like it
    (all checked before any parameter changes)."""
    check_same_keys(grads, params, name, "params", "hasil model.loss_and_grads")
    for key, p in params.items():
        g = grads[key]
        if getattr(g, "dtype", None) is None or g.dtype.kind != "f" or kind(g) != kind(p):
            raise TypeError(
                f"Argumen '{name}[{key!r}]' harus array float {'CuPy' if kind(p) == 'cupy' else 'NumPy'} "
                f"seperti parameternya, tetapi yang diterima {type(g).__name__}"
                f"{f' bertipe {g.dtype}' if hasattr(g, 'dtype') else ''}. Pakai gradien dari "
                "model.loss_and_grads.")
        if tuple(g.shape) != tuple(p.shape):
            raise ValueError(
                f"Argumen '{name}[{key!r}]' harus berbentuk sama dengan parameternya "
                f"{tuple(p.shape)}, tetapi yang diterima {tuple(g.shape)}.")
        if not all_finite(g, False):
            raise ValueError(
                f"Argumen '{name}[{key!r}]' berisi NaN atau inf: langkah Adam akan merusak "
                "semua bobot. Parameter tidak diubah. Kecilkan laju belajar, pakai clipping "
                "gradien, atau periksa loss sebelum langkah ini.")
    return grads
