"""GPT kecil tingkat karakter atau kata, dirakit dari langkah-langkah buku ini.

Satu tugas: modelnya. Korpus ada di ``atensi.corpus``, perulangan pelatihan
di ``atensi.training_loop`` (dipakai setiap tugas latih di ``atensi.tasks``),
format berkas bobot di ``atensi.weight_file``.

Susunannya (pre-layer-norm, seperti GPT-2)::

    x = wte[token] + wpe[posisi]                      (B, T, d_model)
        (Config.positions = "rope": tanpa wpe, Q dan K diputar reference.rope;
         "none": tanpa informasi posisi sama sekali)
    untuk setiap layer:
        h = LN1(x)
        Q, K, V = h W_Q, h W_K, h W_V  -> dipecah ke n_head head (B, H, T, d_k)
        O = reference.attention(Q, K, V, causal=True, scale=config.scale)
        x = x + gabung(O) W_O + b_O                   (gabung: (B, T, H·d_k))
        x = x + GELU(LN2(x) W_1 + b_1) W_2 + b_2      (MLP)
    logits = LNf(x) W_out + b_out                     (B, T, vocab)

Gradien attention dihitung oleh ``reference.attention_backward``; sisanya
(layer norm, MLP, embedding) diturunkan tangan di modul ini dan diperiksa
dengan beda hingga (``tests/test_model.py``). Semua operasi memakai modul
array milik bobotnya (``array_module``), jadi model yang dipindah ke CuPy
(``model.to("cupy")``) berjalan di GPU dengan kode yang sama.

    model = TinyGPT(Config(vocab=len(chars)), chars)   # chars: teks atau tuple kata
    loss, grads = model.loss_and_grads(x, y)
    Adam(model.params, lr=3e-3).step(grads)
    model.generate("Atensi ", 60, kv_cache=True, seed=0)
    model.save("bobot.npz", curve={...});  TinyGPT.load("bobot.npz")
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from . import memory, model_checks, reference, weight_file
from . import validation as _v
from .reference import array_module

POSITIONS = ("learned", "rope", "none")  # Config.positions
_GELU_C = math.sqrt(2.0 / math.pi)


@dataclass(frozen=True)
class Config:
    """Ukuran model. ``d_k = d_model / n_head``; ``scale``: bagi skor dengan √d_k;
    ``positions``: ``"learned"`` (embedding posisi ``wpe``), ``"rope"`` (Q dan K
    diputar ``reference.rope``) atau ``"none"`` (tanpa informasi posisi)."""

    vocab: int
    T: int = 128  # panjang konteks terpanjang
    d_model: int = 64
    n_head: int = 4
    n_layer: int = 2
    d_mlp: int = 256
    scale: bool = True
    seed: int = 0
    positions: str = "learned"  # "learned" (wpe), "rope" (Q and K rotated), "none"

    def __post_init__(self):
        # Stored as plain int and bool (NumPy numbers would not survive json.dumps in save).
        checked = {name: _v.check_int(getattr(self, name), name, low=1)
                   for name in ("vocab", "T", "d_model", "n_head", "n_layer", "d_mlp")}
        model_checks.check_heads(checked["d_model"], checked["n_head"])
        checked["seed"] = _v.check_int(self.seed, "seed", low=0)
        checked["scale"] = _v.check_flag(self.scale, "scale")
        checked["positions"] = _v.check_choice(self.positions, POSITIONS, "positions")
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def d_k(self) -> int:
        return self.d_model // self.n_head


def param_shapes(config: Config) -> dict:
    """Nama -> bentuk setiap parameter, dalam urutan tetap."""
    D, F = config.d_model, config.d_mlp
    shapes = {"wte": (config.vocab, D)}
    if config.positions == "learned":
        shapes["wpe"] = (config.T, D)
    for n in range(config.n_layer):
        shapes.update({
            f"l{n}.ln1.g": (D,), f"l{n}.ln1.b": (D,),
            f"l{n}.Wq": (D, D), f"l{n}.Wk": (D, D), f"l{n}.Wv": (D, D),
            f"l{n}.Wo": (D, D), f"l{n}.bo": (D,),
            f"l{n}.ln2.g": (D,), f"l{n}.ln2.b": (D,),
            f"l{n}.W1": (D, F), f"l{n}.b1": (F,), f"l{n}.W2": (F, D), f"l{n}.b2": (D,),
        })
    shapes.update({"lnf.g": (D,), "lnf.b": (D,), "Wout": (D, config.vocab),
                   "bout": (config.vocab,)})
    return shapes


def init_params(config: Config, dtype=np.float32) -> dict:
    """Bobot awal dari ``config.seed``.

    Matriks: N(0, 1/fan_in), sehingga bila masukan sebuah proyeksi punya
    komponen bervariansi 1 (keluaran layer norm), keluarannya juga. Maka
    komponen Q dan K bervariansi sekitar 1 dan skor mentah QKᵀ menyebar
    dengan simpangan baku sekitar √d_k: keadaan yang dibahas bab √d_k.
    Proyeksi yang menulis ke aliran residual (W_O, W_2) dikecilkan
    1/√(2·n_layer), readout 0,1×. Bias 0, gain layer norm 1.
    """
    rng = np.random.default_rng(config.seed)
    residual = 1.0 / math.sqrt(2 * config.n_layer)
    params = {}
    for name, shape in param_shapes(config).items():
        leaf = name.split(".")[-1]
        if leaf == "g":
            value = np.ones(shape)
        elif len(shape) == 1:
            value = np.zeros(shape)
        elif name in ("wte", "wpe"):
            value = rng.standard_normal(shape)
        else:
            value = rng.standard_normal(shape) / math.sqrt(shape[0])
            if leaf in ("Wo", "W2"):
                value *= residual
            elif leaf == "Wout":
                value *= 0.1
        params[name] = value.astype(dtype)
    return params


# ----------------------------------------------------------------- pieces


def layer_norm(x, g, b, eps=1e-5):
    """Layer norm di sumbu terakhir, lalu ``· g + b``. Mengembalikan (y, cache untuk backward)."""
    mu = x.mean(axis=-1, keepdims=True)
    xc = x - mu
    rstd = 1.0 / (x.dtype.type(eps) + (xc * xc).mean(axis=-1, keepdims=True)) ** 0.5
    xhat = xc * rstd
    return xhat * g + b, (xhat, rstd)


def _layer_norm_backward(dy, g, cache):
    xhat, rstd = cache
    axes = tuple(range(dy.ndim - 1))
    dg = (dy * xhat).sum(axis=axes)
    db = dy.sum(axis=axes)
    dxhat = dy * g
    dx = rstd * (dxhat - dxhat.mean(axis=-1, keepdims=True)
                 - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
    return dx, dg, db


def gelu(x):
    """GELU versi tanh. Mengembalikan (y, tanh yang dipakai backward)."""
    t = array_module(x).tanh(x.dtype.type(_GELU_C) * (x + x.dtype.type(0.044715) * (x * x * x)))
    return x.dtype.type(0.5) * x * (1 + t), t


def _gelu_backward(dy, x, t):
    f = x.dtype.type
    du = f(_GELU_C) * (1 + f(3 * 0.044715) * x * x)
    return dy * (f(0.5) * (1 + t) + f(0.5) * x * (1 - t * t) * du)


def split_heads(x, n_head):
    """(B, T, d_model) -> (B, H, T, d_k): lebar dipotong menjadi ``n_head`` head."""
    B, T, D = x.shape
    return x.reshape(B, T, n_head, D // n_head).transpose(0, 2, 1, 3)


def merge_heads(x):
    """(B, H, T, d_k) -> (B, T, H·d_k): kebalikan :func:`split_heads`."""
    B, H, T, d = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * d)


def _reference_attention(Q, K, V, *, causal, scale):
    return reference.attention(Q, K, V, causal=causal, scale=scale)


def _reference_attention_backward(Q, K, V, dO, *, causal, scale):
    return reference.attention_backward(Q, K, V, dO, causal=causal, scale=scale)


def _unrope(dY, offset=0):
    """Gradient through ``reference.rope``: the rotation's transpose, by -θ."""
    xp = array_module(dY)
    angle = reference.rope_angles_formula(xp, dY.shape[-2], dY.shape[-1], offset, 10000.0)
    cos, sin = xp.cos(angle).astype(dY.dtype), xp.sin(angle).astype(dY.dtype)
    y0, y1 = dY[..., 0::2], dY[..., 1::2]
    dX = xp.empty_like(dY)
    dX[..., 0::2] = y0 * cos + y1 * sin
    dX[..., 1::2] = y1 * cos - y0 * sin
    return dX


def cross_entropy(logits, targets):
    """Rata-rata -log p(target) dalam nat, dan gradiennya terhadap ``logits``.

    ``logits`` array float ``(..., vocab)`` tanpa NaN/inf; ``targets`` indeks
    token berbentuk ``logits.shape[:-1]``.
    """
    logits = _v.check_finite(
        _v.as_float_array(logits, "logits", min_ndim=1, layout="(..., vocab)"), "logits")
    xp = array_module(logits)
    V = logits.shape[-1]
    model_checks.check_target_tokens(targets, logits.shape[:-1], V)
    flat = logits.reshape(-1, V)
    t = targets.reshape(-1)
    shifted = flat - flat.max(axis=-1, keepdims=True)
    E = xp.exp(shifted)
    total = E.sum(axis=-1, keepdims=True)
    rows = xp.arange(flat.shape[0])
    loss = float((xp.log(total[:, 0]) - shifted[rows, t]).mean())
    d = E / total
    d[rows, t] -= 1
    d *= d.dtype.type(1.0 / flat.shape[0])
    return loss, d.reshape(logits.shape)


def _params_bytes(config: Config, itemsize: int = 4) -> float:
    return float(sum(math.prod(shape) for shape in param_shapes(config).values())) * itemsize


# ----------------------------------------------------------------- model


class TinyGPT:
    """GPT kecil. ``chars``: kosakata, satu token per unsur: teks (model karakter,
    satu karakter per token) atau tuple kata (model kata: teks dipecah di spasi)."""

    def __init__(self, config: Config, chars: str | tuple, params: dict | None = None):
        _v.check_instance(config, Config, "config", "atensi.model.Config",
                          "Buat dengan Config(vocab=len(chars)).")
        words = model_checks.check_vocabulary(chars, config.vocab)
        self.config, self.words = config, words
        self.chars = tuple(chars) if words else str(chars)
        self._index = {c: n for n, c in enumerate(self.chars)}
        if params is None:
            memory.check_output_bytes(_params_bytes(config), f"Parameter model ({config})",
                                      "Kecilkan d_model, d_mlp, n_layer, T atau vocab.")
            params = init_params(config)
        self.params = model_checks.check_model_params(params, param_shapes(config))

    # -- bookkeeping ------------------------------------------------------
    @property
    def n_params(self) -> int:
        return int(sum(int(np.prod(p.shape)) for p in self.params.values()))

    def to(self, module="numpy"):
        """Pindahkan bobot ke ``"numpy"`` (CPU) atau ``"cupy"`` (GPU). Mengembalikan model."""
        _v.check_choice(module, ("numpy", "cupy"), "module")
        if module == "cupy":
            from .kernels.loading import gpu_status  # the reason kernels give for backend="cupy"

            ready, why = gpu_status()
            if not ready:
                raise RuntimeError(
                    f"Argumen 'module' = 'cupy' butuh GPU NVIDIA yang terlihat oleh CuPy, tetapi: "
                    f"{why}. Bobot tetap di CPU; pakai model.to('numpy') (semua hitungan "
                    "model berjalan di NumPy).")
            import cupy

            self.params = {k: cupy.asarray(v) for k, v in self.params.items()}
        else:
            self.params = {k: (v.get() if hasattr(v, "get") else np.asarray(v))
                           for k, v in self.params.items()}
        return self

    @property
    def xp(self):
        return array_module(self.params["wte"])

    def encode(self, text: str, name: str = "text") -> np.ndarray:
        tokens = model_checks.check_text(text, self._index, name, words=self.words)
        return np.array([self._index[t] for t in tokens], dtype=np.int64)

    def decode(self, ids) -> str:
        ids = model_checks.check_token_ids(ids, len(self.chars))
        return ("" if not self.words else " ").join(self.chars[int(i)] for i in ids.ravel())

    def check_ids(self, idx, name="idx"):
        """Batch token ``idx`` (B, T') yang sudah diperiksa (0…vocab − 1, T' <= T), di modul array model."""
        idx = model_checks.check_token_batch(idx, self.config.T, self.config.vocab, name)
        return self.xp.asarray(idx)

    # -- forward ----------------------------------------------------------
    def block(self, x, n, attention):
        """Satu blok (lapisan ke-``n``): atensi lalu MLP, masing-masing dengan layer
        norm di depannya dan sambungan residual. ``x``: (B, T, d_model).
        Mengembalikan ``x`` baru dan nilai antara yang dipakai backward."""
        p, c, xp = self.params, self.config, self.xp
        # Atensi: Q, K, V dari x yang dinormalkan, dipecah per head -> (B, H, T, d_k)
        h, ln1 = layer_norm(x, p[f"l{n}.ln1.g"], p[f"l{n}.ln1.b"])
        Q = xp.ascontiguousarray(split_heads(h @ p[f"l{n}.Wq"], c.n_head))
        K = xp.ascontiguousarray(split_heads(h @ p[f"l{n}.Wk"], c.n_head))
        V = xp.ascontiguousarray(split_heads(h @ p[f"l{n}.Wv"], c.n_head))
        if c.positions == "rope":  # posisi masuk lewat putaran Q dan K saja
            Q, K = reference.rope_formula(Q, 0, 10000.0), reference.rope_formula(K, 0, 10000.0)
        # O = softmax(mask(Q Kᵀ / √d_k)) V untuk setiap head sekaligus
        O = attention(Q, K, V, causal=True, scale=c.scale)
        # Head digabung kembali -> (B, T, H·d_k), dicampur W_O, ditambahkan ke x
        Om = merge_heads(O)
        x = x + Om @ p[f"l{n}.Wo"] + p[f"l{n}.bo"]
        # MLP per posisi: lebarkan, GELU, sempitkan, tambahkan ke x
        h2, ln2 = layer_norm(x, p[f"l{n}.ln2.g"], p[f"l{n}.ln2.b"])
        u = h2 @ p[f"l{n}.W1"] + p[f"l{n}.b1"]
        a, t = gelu(u)
        x = x + a @ p[f"l{n}.W2"] + p[f"l{n}.b2"]
        return x, (h, ln1, Q, K, V, Om, h2, ln2, u, a, t)

    def forward(self, idx, *, attention=None, keep=False, maps=False):
        """Forward penuh dengan mask kausal untuk ``idx`` dari :meth:`check_ids`. Mengembalikan (logits, cache)."""
        p, c = self.params, self.config
        attention = model_checks.check_attention_function(attention) or _reference_attention
        B, T = idx.shape
        x = p["wte"][idx] + p["wpe"][:T] if c.positions == "learned" else p["wte"][idx]
        cache = {"idx": idx, "layers": [], "maps": []}
        for n in range(c.n_layer):
            x, saved = self.block(x, n, attention)
            if keep:
                cache["layers"].append(saved)
            if maps:
                Q, K = saved[2], saved[3]
                S = reference.causal_mask(reference.scores(Q, K, scale=c.scale))
                cache["maps"].append(reference.softmax(S))
        hf, lnf = layer_norm(x, p["lnf.g"], p["lnf.b"])
        logits = hf @ p["Wout"] + p["bout"]
        if keep:
            cache["final"] = (hf, lnf)
        return logits, cache

    def logits(self, idx, *, attention=None):
        """Logit ``(B, T, vocab)`` untuk token ``idx`` ``(B, T)``."""
        return self.forward(self.check_ids(idx), attention=attention)[0]

    def loss(self, idx, targets) -> float:
        """Cross-entropy rata-rata (nat) untuk menebak ``targets`` dari ``idx``."""
        idx = self.check_ids(idx)
        targets = self.check_ids(targets, "targets")
        _v.check_same_shape(targets, "targets", idx, "idx")
        return cross_entropy(self.forward(idx)[0], targets)[0]

    def attention_maps(self, text_or_ids):
        """Bobot atensi A setiap layer dan head: ``(n_layer, n_head, T, T)`` untuk satu teks."""
        ids = self.encode(text_or_ids) if isinstance(text_or_ids, str) else text_or_ids
        idx = self.check_ids(np.asarray(ids).reshape(1, -1), "text_or_ids")
        _, cache = self.forward(idx, maps=True)
        return self.xp.stack([A[0] for A in cache["maps"]])

    def attention_entropy(self, idx):
        """Entropi rata-rata baris atensi (nat) per layer, untuk batch ``idx``."""
        _, cache = self.forward(self.check_ids(idx), maps=True)
        xp = self.xp
        out = []
        for A in cache["maps"]:
            safe = xp.where(A > 0, A, 1)
            out.append(float(-(A * xp.log(safe)).sum(axis=-1).mean()))
        return out

    # -- backward ---------------------------------------------------------
    def loss_and_grads(self, idx, targets, *, attention=None, attention_backward=None,
                       positions=None):
        """Loss dan gradien setiap parameter (dict dengan kunci yang sama dengan ``params``).

        ``positions``: kolom yang dinilai (misalnya ``[-1]``: hanya tebakan terakhir);
        bawaan ``None``: semua posisi.

        ``attention`` / ``attention_backward``: fungsi pengganti dengan tanda tangan
        ``reference.attention(Q, K, V, *, causal, scale)`` dan
        ``reference.attention_backward(Q, K, V, dO, *, causal, scale)``, misalnya
        versi ``atensi.kernels``.
        """
        model_checks.check_attention_function(attention, "attention")
        model_checks.check_attention_function(attention_backward, "attention_backward")
        p, c, xp = self.params, self.config, self.xp
        idx = self.check_ids(idx)
        targets = self.check_ids(targets, "targets")
        _v.check_same_shape(targets, "targets", idx, "idx")
        if positions is not None:
            positions = model_checks.check_columns(positions, idx.shape[1])
        backward = attention_backward or _reference_attention_backward
        logits, cache = self.forward(idx, attention=attention, keep=True)
        if positions is None:
            loss, dlogits = cross_entropy(logits, targets)
        else:
            loss, graded = cross_entropy(logits[:, positions], targets[:, positions])
            dlogits = xp.zeros_like(logits)
            dlogits[:, positions] = graded
        g = {}
        B, T = idx.shape
        D = c.d_model
        hf, lnf = cache["final"]
        g["Wout"] = hf.reshape(-1, D).T @ dlogits.reshape(-1, c.vocab)
        g["bout"] = dlogits.sum(axis=(0, 1))
        dx, g["lnf.g"], g["lnf.b"] = _layer_norm_backward(dlogits @ p["Wout"].T, p["lnf.g"], lnf)
        for n in reversed(range(c.n_layer)):
            h, ln1, Q, K, V, Om, h2, ln2, u, a, t = cache["layers"][n]
            # MLP
            g[f"l{n}.W2"] = a.reshape(-1, c.d_mlp).T @ dx.reshape(-1, D)
            g[f"l{n}.b2"] = dx.sum(axis=(0, 1))
            du = _gelu_backward(dx @ p[f"l{n}.W2"].T, u, t)
            g[f"l{n}.W1"] = h2.reshape(-1, D).T @ du.reshape(-1, c.d_mlp)
            g[f"l{n}.b1"] = du.sum(axis=(0, 1))
            dh2, g[f"l{n}.ln2.g"], g[f"l{n}.ln2.b"] = _layer_norm_backward(
                du @ p[f"l{n}.W1"].T, p[f"l{n}.ln2.g"], ln2)
            dx = dx + dh2
            # attention: W_O, then the heads, then W_Q, W_K, W_V
            g[f"l{n}.Wo"] = Om.reshape(-1, D).T @ dx.reshape(-1, D)
            g[f"l{n}.bo"] = dx.sum(axis=(0, 1))
            dO = xp.ascontiguousarray(split_heads(dx @ p[f"l{n}.Wo"].T, c.n_head))
            dQ, dK, dV = backward(Q, K, V, dO, causal=True, scale=c.scale)
            if c.positions == "rope":
                dQ, dK = _unrope(dQ), _unrope(dK)
            hflat = h.reshape(-1, D)
            dh = 0
            for w, dW in zip("qkv", (dQ, dK, dV)):
                dW = merge_heads(dW)
                g[f"l{n}.W{w}"] = hflat.T @ dW.reshape(-1, D)
                dh = dh + dW @ p[f"l{n}.W{w}"].T
            dh1, g[f"l{n}.ln1.g"], g[f"l{n}.ln1.b"] = _layer_norm_backward(
                dh, p[f"l{n}.ln1.g"], ln1)
            dx = dx + dh1
        if c.positions == "learned":
            g["wpe"] = xp.zeros_like(p["wpe"])
            g["wpe"][:T] = dx.sum(axis=0)
        onehot = xp.zeros((B * T, c.vocab), dtype=dx.dtype)
        onehot[xp.arange(B * T), idx.reshape(-1)] = 1
        g["wte"] = onehot.T @ dx.reshape(-1, D)
        return loss, {k: g[k] for k in p}

    # -- generation -------------------------------------------------------
    def _step_cached(self, token, pos, kv):
        """Satu token baru di posisi ``pos``; ``kv`` berisi K, V semua posisi sebelumnya.

        Query baru dibandingkan dengan *semua* key di cache tanpa mask: posisi
        masa depan belum dihitung, jadi tidak mungkin terlihat. Cache adalah
        mask kausal dilihat dari sisi inferensi.
        """
        p, c, xp = self.params, self.config, self.xp
        x = p["wte"][token] + p["wpe"][pos] if c.positions == "learned" else p["wte"][token]
        x = x[None, None, :]  # (1, 1, D)
        for n in range(c.n_layer):
            h, _ = layer_norm(x, p[f"l{n}.ln1.g"], p[f"l{n}.ln1.b"])
            q, k, v = (split_heads(h @ p[f"l{n}.W{w}"], c.n_head) for w in "qkv")
            if c.positions == "rope":
                q, k = reference.rope_formula(q, pos, 10000.0), reference.rope_formula(k, pos, 10000.0)
            K_all = xp.concatenate([kv[n][0], k], axis=2) if kv[n] else k
            V_all = xp.concatenate([kv[n][1], v], axis=2) if kv[n] else v
            kv[n] = (K_all, V_all)
            O = reference.attention(q, K_all, V_all, causal=False, scale=c.scale)
            x = x + merge_heads(O) @ p[f"l{n}.Wo"] + p[f"l{n}.bo"]
            h2, _ = layer_norm(x, p[f"l{n}.ln2.g"], p[f"l{n}.ln2.b"])
            a, _ = gelu(h2 @ p[f"l{n}.W1"] + p[f"l{n}.b1"])
            x = x + a @ p[f"l{n}.W2"] + p[f"l{n}.b2"]
        hf, _ = layer_norm(x, p["lnf.g"], p["lnf.b"])
        return (hf @ p["Wout"] + p["bout"])[0, 0]

    def generate(self, prompt: str, n: int, *, kv_cache=True, temperature=1.0, seed=0,
                 return_logits=False):
        """Lanjutkan ``prompt`` dengan ``n`` karakter baru.

        ``kv_cache=True``: K dan V setiap posisi disimpan dan setiap langkah
        hanya menghitung satu posisi baru. ``False``: setiap langkah menjalankan
        forward penuh (dengan mask) atas seluruh teks sejauh ini dan mengambil
        logit posisi terakhir. ``temperature=0``: selalu token paling mungkin.
        ``return_logits=True`` juga mengembalikan logit setiap langkah ``(n, vocab)``.
        """
        model_checks.check_prompt(prompt)
        n = _v.check_int(n, "n", low=0)
        kv_cache = _v.check_flag(kv_cache, "kv_cache")
        temperature = _v.check_number(temperature, "temperature", low=0.0)
        return_logits = _v.check_flag(return_logits, "return_logits")
        seed = _v.check_int(seed, "seed", low=0)
        n_prompt = len(self.encode(prompt, "prompt"))
        model_checks.check_context(n_prompt, n, self.config.T)
        rng = np.random.default_rng(seed)
        xp = self.xp
        ids = list(self.encode(prompt, "prompt"))
        kv = [None] * self.config.n_layer
        if kv_cache:
            for pos, token in enumerate(ids):
                last = self._step_cached(token, pos, kv)
        steps = []
        for step in range(n):
            if kv_cache:
                logits = last
            else:
                idx = xp.asarray(np.array(ids, dtype=np.int64)[None, :])
                logits = self.forward(idx)[0][0, -1]
            logits = np.asarray(logits.get() if hasattr(logits, "get") else logits,
                                dtype=np.float64)
            steps.append(logits)
            if temperature == 0:
                token = int(np.argmax(logits))
            else:
                # The maximum first: logits / 1e-300 would overflow to inf, and inf - inf = NaN.
                prob = np.exp((logits - logits.max()) / temperature)
                cdf = np.cumsum(prob)
                token = int(min(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"),
                                len(cdf) - 1))
            ids.append(token)
            if kv_cache and step < n - 1:
                last = self._step_cached(token, len(ids) - 1, kv)
        text = self.decode(ids[n_prompt:])
        return (text, np.array(steps).reshape(n, self.config.vocab)) if return_logits else text

    def kv_cache_bytes(self, T=None, batch=1, bytes_per_value=4):
        """Ukuran cache K dan V untuk ``T`` posisi: 2 · n_layer · T · d_model · byte."""
        T = self.config.T if T is None else T
        return kv_cache_bytes(self.config.n_layer, T, self.config.d_model, batch, bytes_per_value)

    # -- files ------------------------------------------------------------
    def save(self, path, *, curve: dict | None = None, info: dict | None = None):
        """Tulis ``.npz`` (format di ``atensi.weight_file``): bobot (float32), config,
        kosakata, kurva latihan, info (JSON). ``~`` di path dibaca sebagai folder rumah.
        Mengembalikan path yang ditulis."""
        return weight_file.write(path, params=self.params, config=asdict(self.config),
                                 chars=self.chars, curve=curve, info=info)

    @classmethod
    def load(cls, path):
        """Baca berkas dari ``save``. Mengembalikan model; ``model.curve``, ``model.info``."""
        contents = weight_file.read(path, _config_and_shapes)
        config, chars = contents.config, contents.chars
        if len(chars) != config.vocab:
            raise ValueError(f"Bobot di berkas '{contents.path}' tidak cocok dengan config-nya: "
                             f"kosakata {len(chars)} token, config.vocab {config.vocab}. "
                             f"{weight_file.REMAKE}.")
        model = cls(config, chars, contents.params)
        model.curve, model.info, model.path = contents.curve, contents.info, contents.path
        return model


def _config_and_shapes(values: dict) -> tuple[Config, dict]:
    """The Config a weights file describes, and the parameter shapes it implies."""
    if not isinstance(values, dict):
        raise TypeError(f"config harus objek JSON, bukan {type(values).__name__}")
    config = Config(**values)
    return config, param_shapes(config)


def kv_cache_bytes(n_layer, T, d_model, batch=1, bytes_per_value=4):
    """Byte cache K dan V: ``2 · n_layer · batch · T · d_model · bytes_per_value``.

    (``d_model = n_head · d_k``: semua head setiap layer.)
    """
    for name, value in (("n_layer", n_layer), ("T", T), ("d_model", d_model), ("batch", batch),
                        ("bytes_per_value", bytes_per_value)):
        _v.check_int(value, name, low=1)
    return 2 * n_layer * batch * T * d_model * bytes_per_value


def count_params(config: Config) -> dict:
    """Jumlah parameter per bagian: embedding, attention, MLP, layer norm, readout."""
    _v.check_instance(config, Config, "config", "atensi.model.Config",
                      "Buat dengan Config(vocab=len(chars)).")
    parts = {"embedding": 0, "attention": 0, "mlp": 0, "layer_norm": 0, "readout": 0}
    for name, shape in param_shapes(config).items():
        size = int(np.prod(shape))
        leaf = name.split(".")
        if name in ("wte", "wpe"):
            parts["embedding"] += size
        elif name in ("Wout", "bout"):
            parts["readout"] += size
        elif "ln" in name:
            parts["layer_norm"] += size
        elif leaf[-1] in ("Wq", "Wk", "Wv", "Wo", "bo"):
            parts["attention"] += size
        else:
            parts["mlp"] += size
    parts["total"] = sum(parts.values())
    return parts


class Adam:
    """Adam (Kingma & Ba, 2015) untuk dict parameter; memperbarui array di tempat."""

    def __init__(self, params: dict, lr=3e-3, betas=(0.9, 0.99), eps=1e-8):
        model_checks.check_param_dict(params)
        lr = _v.check_positive(lr, "lr")
        betas = model_checks.check_betas(betas)
        eps = _v.check_positive(eps, "eps")
        self.params, self.lr, self.betas, self.eps = params, lr, betas, eps
        xp = array_module(*params.values())
        self.m = {k: xp.zeros_like(v) for k, v in params.items()}
        self.v = {k: xp.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def step(self, grads: dict, lr=None):
        lr = self.lr if lr is None else _v.check_positive(lr, "lr")
        model_checks.check_gradients(grads, self.params)
        b1, b2 = self.betas
        self.t += 1
        c1, c2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        for k, p in self.params.items():
            g = grads[k]
            m, v = self.m[k], self.v[k]
            m *= p.dtype.type(b1)
            m += p.dtype.type(1 - b1) * g
            v *= p.dtype.type(b2)
            v += p.dtype.type(1 - b2) * g * g
            p -= p.dtype.type(lr / c1) * m / ((v / p.dtype.type(c2)) ** 0.5 + p.dtype.type(self.eps))
