"""Pemeriksaan argumen yang dipakai bersama, dan gaya pesannya.

Setiap argumen yang salah ditolak *sebelum* pekerjaan apa pun dimulai, dengan
pesan berbahasa Indonesia yang menyebut nama argumennya, apa yang salah, dan
apa yang harus dilakukan ("Argumen 'T' harus ..., tetapi yang diterima ...").
Pemeriksaan yang dipakai lebih dari satu modul ada di sini, jadi argumen yang
sama mendapat pesan yang sama, jalur mana pun yang dipakai pembaca
(``reference``, ``loops``, ``kernels``, penjelajah, model, gambar):

- jenis array: NumPy atau CuPy, semuanya sejenis (``kind``,
  ``check_same_kind``); *masked array* (``np.ma``) ditolak, karena masknya
  akan diabaikan (``refuse_masked``);
- tipe float dan bentuk: ``reference`` menerima float16, float32, float64 dan
  list angka (``as_float_array``); kernel hanya float32 C-contiguous
  (``check_array``); rank minimal, tidak kosong;
- nilai hingga: NaN dan inf ditolak, kecuali -inf di skor (artinya: ditutup
  mask) (``check_finite``);
- skor yang akan melampaui batas float (misalnya Q = K = 1e19): ditolak
  dengan batas murah dari norma terbesar, ``max‖q‖ · max‖k‖``; begitu juga
  gradien dA = dO Vᵀ di langkah mundur (``max‖dO‖ · max‖v‖``) dan bobot yang
  dihitung ulang dari ``lse``;
- V yang begitu besar sehingga T · max|v| melampaui float (jumlah berjalan
  *online softmax*) dibagi dulu dengan pangkat dua, lalu hasilnya dikali
  kembali (``online_softmax_v_scale``);
- bilangan dan pilihan: ``scale``, ``causal``, ``fused`` harus bool
  sungguhan; bilangan bulat dan bilangan hingga di dalam batasnya; salah satu
  pilihan yang dikenal (``version``, ``positions``); ``block`` 1…65536; sumbu;
  jenis objek (``check_instance``);
- bentuk bersama: d_k dan T dari Q, K dan V, sumbu depan, dua array yang
  harus sama bentuknya; ``reference_qkv`` memeriksa Q, K, V sekaligus.

Aturan yang hanya dimiliki satu bagian ada di samping kode yang dijaganya:
batas kernel dan beban emulasi CPU (:mod:`atensi.kernels.limits`), memori
(:mod:`atensi.memory`), mask (:mod:`atensi.masks`), posisi RoPE dan
sinusoidal (:mod:`atensi.position_checks`), langkah ``reference`` sendiri
(:mod:`atensi.reference_checks`), loop (:mod:`atensi.loops`), baris peluang
(:mod:`atensi.measures`), token, model dan Adam (:mod:`atensi.model_checks`),
gambar (:mod:`atensi.figure_checks`), berkas hasil dan kurva latihan
(:mod:`atensi.result_checks`).
"""

from __future__ import annotations

import math

import numpy as np

from atensi.formatting import id_int, id_sci

REFERENCE_DTYPES = (np.float16, np.float32, np.float64)
KERNEL_DTYPES = (np.float32,)
MAX_BLOCK = 65536


def _dtype_names(dtypes) -> str:
    return ", ".join(np.dtype(d).name for d in dtypes)


# ---------------------------------------------------------------------------
# Kinds of arrays
# ---------------------------------------------------------------------------


def kind(x) -> str:
    """'numpy', 'cupy' or '' for anything else."""
    if isinstance(x, np.ndarray):
        return "numpy"
    if type(x).__module__.split(".")[0] == "cupy" and hasattr(x, "__cuda_array_interface__"):
        return "cupy"
    return ""


def xp_name(x) -> str:
    return "cupy" if kind(x) == "cupy" else "np"


def xp_of(x):
    if kind(x) == "cupy":
        import cupy

        return cupy
    return np


def leading(shape) -> int:
    return math.prod(shape[:-2])


def refuse_masked(x, name: str) -> None:
    if isinstance(x, np.ma.MaskedArray):
        fill = "-np.inf" if name in ("S", "A") else "0.0"
        raise TypeError(
            f"Argumen '{name}' harus array biasa, bukan masked array (np.ma): masknya akan "
            f"diabaikan dan nilai di bawah mask ikut dihitung. Isi dulu bagian yang ditutup, misalnya "
            f"{name}.filled({fill}) (untuk skor: S.filled(-np.inf), artinya 'ditutup mask')."
        )


def _type_error(x, name: str, dtypes) -> TypeError:
    dt = np.dtype(dtypes[0]).name
    return TypeError(
        f"Argumen '{name}' harus array NumPy atau CuPy bertipe float, tetapi yang "
        f"diterima {type(x).__name__}. Ubah dulu dengan np.asarray({name}, dtype=np.{dt})."
    )


def _check_dtype(x, name: str, dtypes) -> None:
    if not any(x.dtype == d for d in dtypes):
        xp = xp_name(x)
        allowed = _dtype_names(dtypes)
        target = "float32" if len(dtypes) == 1 else "float64"
        what = "bertipe float32" if len(dtypes) == 1 else f"bertipe float ({allowed})"
        raise TypeError(
            f"Argumen '{name}' harus {what}, tetapi yang diterima {x.dtype}. "
            f"Ubah dulu dengan {name}.astype({xp}.{target})."
        )


def _check_shape(x, name: str, min_ndim: int, layout: str) -> None:
    if x.ndim < min_ndim:
        hint = f"{name}[None, :]" if x.ndim == 1 else f"{name}.reshape(1, -1)"
        raise ValueError(
            f"Argumen '{name}' harus berdimensi minimal {min_ndim} dengan bentuk {layout}, "
            f"tetapi yang diterima berdimensi {x.ndim} dengan bentuk {tuple(x.shape)}. "
            f"Untuk satu baris, tambahkan sumbu: {hint}."
        )
    if x.size == 0:
        raise ValueError(
            f"Argumen '{name}' kosong (bentuk {tuple(x.shape)}): setiap sumbu harus "
            "berukuran minimal 1."
        )


def as_float_array(x, name: str, *, min_ndim: int = 2, layout: str = "(..., T, d_k)",
                   dtypes=REFERENCE_DTYPES):
    """For :mod:`atensi.reference`: NumPy/CuPy array (a list of numbers is converted)."""
    refuse_masked(x, name)
    if not kind(x):
        if isinstance(x, (list, tuple)):
            try:
                x = np.asarray(x)
            except (ValueError, TypeError):
                raise TypeError(
                    f"Argumen '{name}' berupa {type(x).__name__} yang tidak bisa diubah menjadi "
                    f"array persegi panjang (panjang barisnya berbeda-beda?). Berikan array "
                    f"NumPy, misalnya np.asarray({name}, dtype=np.float64)."
                ) from None
            if x.dtype.kind in "iub":
                x = x.astype(np.float64)  # a list of whole numbers still means numbers
        else:
            raise _type_error(x, name, dtypes)
    elif kind(x) == "numpy" and type(x) is not np.ndarray:
        x = np.asarray(x)  # np.matrix and friends: plain array semantics
    _check_dtype(x, name, dtypes)
    _check_shape(x, name, min_ndim, layout)
    return x


def check_array(x, name: str, *, min_ndim: int = 2, layout: str = "(..., T, d_k)"):
    """For kernels: NumPy/CuPy float32, C-contiguous, rank >= min_ndim, not empty."""
    refuse_masked(x, name)
    if not kind(x):
        raise TypeError(
            f"Argumen '{name}' harus array NumPy atau CuPy, tetapi yang diterima "
            f"{type(x).__name__}. Ubah dulu dengan np.asarray({name}, dtype=np.float32)."
        )
    _check_dtype(x, name, KERNEL_DTYPES)
    _check_shape(x, name, min_ndim, layout)
    if not x.flags.c_contiguous:
        xp = xp_name(x)
        raise ValueError(
            f"Argumen '{name}' harus C-contiguous (tersimpan baris demi baris), tetapi "
            f"yang diterima sebuah view dengan strides {tuple(x.strides)}, misalnya hasil "
            f"transpose atau slicing. Kernel membaca memori mentah dan akan mendapat angka "
            f"yang salah. Buat salinan dengan {xp}.ascontiguousarray({name})."
        )
    return x


def check_same_kind(**arrays) -> str:
    """All NumPy or all CuPy; returns that kind."""
    kinds = {name: kind(a) for name, a in arrays.items()}
    if len(set(kinds.values())) > 1:
        detail = ", ".join(
            f"'{n}' array {'CuPy' if k == 'cupy' else 'NumPy'}" for n, k in kinds.items()
        )
        raise TypeError(
            f"Semua masukan harus array NumPy atau semuanya array CuPy, tetapi yang "
            f"diterima: {detail}. Samakan dulu dengan cupy.asarray(...) atau .get()."
        )
    return next(iter(kinds.values()))


# ---------------------------------------------------------------------------
# Values
# ---------------------------------------------------------------------------


def _blocks(x, limit: int = 1 << 16):
    """Views of ``x`` of at most ~``limit`` elements (so checks need little memory)."""
    if x.ndim == 0 or x.size <= limit:
        yield x
        return
    row = x.size // x.shape[0]
    if row > limit:
        for i in range(x.shape[0]):
            yield from _blocks(x[i], limit)
        return
    step = max(1, limit // row)
    for i in range(0, x.shape[0], step):
        yield x[i:i + step]


def all_finite(x, allow_neg_inf: bool) -> bool:
    xp = xp_of(x)
    if xp is not np:
        return bool(xp.all(~xp.isnan(x) & (x != np.inf)) if allow_neg_inf else xp.isfinite(x).all())
    for part in _blocks(x):
        if allow_neg_inf:
            if np.isnan(part).any() or (part == np.inf).any():
                return False
        elif not np.isfinite(part).all():
            return False
    return True


def check_finite(x, name: str, *, allow_neg_inf: bool = False):
    """Tolak NaN dan inf (``allow_neg_inf``: -inf boleh, artinya 'ditutup mask')."""
    if all_finite(x, allow_neg_inf):
        return x
    xp = xp_of(x)
    bad = xp.isnan(x) | (x == np.inf) if allow_neg_inf else ~xp.isfinite(x)
    count = int(bad.sum())
    if count:
        first = tuple(int(i) for i in xp.argwhere(bad)[0].tolist())
        value = float(x[first])
        what = "NaN atau +inf" if allow_neg_inf else "NaN atau inf"
        raise ValueError(
            f"Argumen '{name}' berisi {count} nilai {what} (yang pertama {value} di "
            f"indeks {first}). Hasilnya akan menjadi NaN; periksa dulu "
            f"data masukan, misalnya dengan np.isfinite({name}).all()."
        )
    return x


def max_abs(x) -> float:
    return max(float(x.max()), -float(x.min()))  # no temporary array


def _max_row_norm(x) -> float:
    """max over rows of ‖x[..., i, :]‖, in float64 (cheap: one pass over x)."""
    biggest = max_abs(x)
    if biggest == 0.0 or not math.isfinite(biggest):
        return biggest
    best = 0.0
    whole_rows = xp_of(x) is np and x.shape[-1] <= (1 << 16)  # never split a row
    for part in (_blocks(x) if whole_rows else [x]):
        y = part.astype(np.float64) / biggest  # no overflow while squaring
        best = max(best, float((y * y).sum(axis=-1).max()))
    return math.sqrt(best) * biggest


LOG2E = 1.4426950408889634  # fused v2 multiplies Q by scale * log2(e)
# The smallest float32 that cvt.rna.tf32.f32 (10 mantissa bits, ties away from
# zero) rounds to inf: everything from here to FLT_MAX becomes inf on a tensor core.
TF32_OVERFLOW = (2.0 - 2.0**-11) * 2.0**127


def check_score_overflow(Q, K, dtype=np.float32, names=("Q", "K"), *, tf32=False) -> None:
    """Refuse Q, K whose dot products could overflow ``dtype`` (they give inf, then NaN).

    By Cauchy–Schwarz every partial sum of ``q · k`` is at most ‖q‖·‖k‖, so
    ``max‖q‖ · max‖k‖ <= max(dtype) / 2`` means no score (scaled or not)
    overflows. A first, cheaper bound uses the largest entries. Fused v2
    multiplies Q by scale · log₂e (at most log₂e) before the dot products, so
    that factor is counted: in the bound, and for the entries of Q themselves.

    ``tf32``: the operands are also rounded to TF32 (fused v3), and every
    entry within 2⁻¹¹ of FLT_MAX rounds up to inf: K, and Q · log₂e, must stay
    below :data:`TF32_OVERFLOW`.
    """
    top = float(np.finfo(dtype).max)
    limit = top / 2 / LOG2E
    biggest_q = max_abs(Q)
    if biggest_q > top / LOG2E:
        raise ValueError(
            f"Argumen '{names[0]}' berisi nilai sebesar {id_sci(biggest_q)}: dikali log₂e ≈ 1,44 (fused v2 "
            f"menghitung dengan exp2) hasilnya melampaui batas {np.dtype(dtype).name} ({id_sci(top)}) dan "
            f"menjadi inf, lalu NaN. Perkecil {names[0]}, misalnya {names[0]} / 1e3, atau normalisasi "
            "barisnya lebih dulu."
        )
    if tf32:
        for name, biggest in ((names[0], biggest_q * LOG2E), (names[1], max_abs(K))):
            if biggest >= TF32_OVERFLOW:
                raise ValueError(
                    f"Argumen '{name}' berisi nilai sebesar {id_sci(biggest)}"
                    + (" (sesudah dikali log₂e ≈ 1,44)" if name == names[0] else "")
                    + ": dibulatkan ke TF32 (tensor core, impl='fused-v3', 10 bit mantissa) nilai "
                    "itu menjadi inf, karena setiap nilai dalam 2⁻¹¹ dari batas float32 dibulatkan "
                    "ke atas, melewati batas itu. "
                    f"Perkecil {name}, misalnya {name} / 2 (kalikan argumen yang lain dengan 2 agar "
                    "skornya tetap), atau pakai impl='fused-v2'."
                )
    _check_row_products(Q, K, dtype, limit, names, "skor", biggest_q)


def check_recomputed_weights(largest: float, where: str, hint: str) -> None:
    """Weights recomputed from a caller's ``lse`` as exp(S − lse): at most 1 when
    ``lse`` belongs to these S (NaN or inf when it does not at all)."""
    if not largest <= 1.0 + 1e-3:  # also NaN
        raise ValueError(
            f"Argumen 'lse' tidak cocok dengan Q dan K: bobot yang dihitung ulang "
            f"exp(S − lse) mencapai {largest:.3g} (seharusnya paling besar 1){where}. "
            f"Berikan lse dari attention_blocked(Q, K, V, ..., return_lse=True) dengan "
            f"causal dan scale yang sama, atau {hint}."
        )


def check_gradient_overflow(dO, V, dtype=np.float32) -> None:
    """Refuse dO, V whose products dA = dO Vᵀ could overflow ``dtype`` in the backward pass.

    The same Cauchy–Schwarz bound as :func:`check_score_overflow`. The softmax
    backward then forms dA − rowsum(dA ⊙ A), up to twice the largest |dA|,
    hence the limit max(dtype) / 2.
    """
    limit = float(np.finfo(dtype).max) / 2
    _check_row_products(dO, V, dtype, limit, ("dO", "V"), "gradien dA", max_abs(dO))


def _check_row_products(A, B, dtype, limit: float, names, what: str, biggest_a: float) -> None:
    """Refuse when max‖a‖ · max‖b‖ (a, b rows of A, B) may exceed ``limit``."""
    top = float(np.finfo(dtype).max)
    if biggest_a * max_abs(B) * A.shape[-1] <= limit:
        return  # the cheap bound from the largest entries already holds
    bound = _max_row_norm(A) * _max_row_norm(B)
    if bound <= limit:
        return
    a, b = names
    factor = 10 ** math.ceil(math.log10(math.sqrt(bound / limit)) + 1) if math.isfinite(bound) else None
    how = (f"Perkecil keduanya, misalnya {a} / {factor:.0e} dan {b} / {factor:.0e}"
           if factor else f"Perkecil nilai {a} dan {b}")
    raise ValueError(
        f"Argumen '{a}' dan '{b}' terlalu besar: {what} {a}·{b}ᵀ akan melampaui batas "
        f"{np.dtype(dtype).name} ({id_sci(top)}), karena ‖{a}[i]‖ terbesar × ‖{b}[j]‖ "
        f"terbesar ≈ {id_sci(bound)}. Nilai itu menjadi inf lalu NaN. {how}, atau "
        f"normalisasi barisnya lebih dulu."
    )


def online_softmax_v_scale(V, T_k: int, dtype=np.float32):
    """The power of two to divide V by before an online softmax, or None.

    The running sum o = Σ p_j v_j (p_j <= 1, not yet divided by ℓ) grows to
    T_k · max|v|, although the output, a mean of V rows, stays below max|v|.
    When T_k · max|v| could overflow ``dtype``, V is divided by a power of two
    near max|v| (exact: only the exponent changes) and the output multiplied
    back. Used by ``reference.attention_blocked`` and every fused kernel.
    """
    top = float(np.finfo(dtype).max)
    v_max = max_abs(V)
    if not math.isfinite(v_max) or v_max * T_k <= top / 4:  # NaN/inf: refused elsewhere
        return None
    return 2.0 ** math.floor(math.log2(v_max))  # <= max|v|, so it fits dtype


# ---------------------------------------------------------------------------
# Scalars
# ---------------------------------------------------------------------------


def check_flag(value, name: str) -> bool:
    """``scale``, ``causal``, ``fused``: True or False, nothing else."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(
            f"Argumen '{name}' harus bool (True atau False), tetapi yang diterima "
            f"{value!r} ({type(value).__name__}). Tulis {name}=True atau {name}=False."
        )
    return bool(value)


def check_int(value, name: str, *, low: int = 1, high: int | None = None) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"Argumen '{name}' harus bilangan bulat (int), tetapi yang diterima {value!r} "
            f"({type(value).__name__}). Tulis misalnya {name}=64."
        )
    value = int(value)
    if value < low or (high is not None and value > high):
        rng = f"{low} sampai {id_int(high)}" if high is not None else f">= {low}"
        raise ValueError(
            f"Argumen '{name}' harus bilangan bulat {rng}, tetapi yang diterima {value}."
        )
    return value


def check_number(value, name: str, *, low=None, high=None, low_open=False) -> float:
    """A real, finite number (int or float, not bool) within [low, high]."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(
            f"Argumen '{name}' harus bilangan (int atau float), tetapi yang diterima "
            f"{value!r} ({type(value).__name__})."
        )
    value = float(value)
    bad = (not math.isfinite(value)
           or (low is not None and (value <= low if low_open else value < low))
           or (high is not None and value > high))
    if bad:
        lo = "" if low is None else (f"> {low}" if low_open else f">= {low}")
        hi = "" if high is None else f"<= {high}"
        rng = " dan ".join(x for x in (lo, hi) if x) or "hingga (bukan NaN/inf)"
        raise ValueError(
            f"Argumen '{name}' harus bilangan hingga {rng}, tetapi yang diterima {value!r}."
        )
    return value


def check_positive(value, name: str) -> float:
    return check_number(value, name, low=0.0, low_open=True)



def check_choice(value, choices, name: str):
    """``value`` is one of ``choices``: a real int for int choices (not a bool, not 2.0)."""
    plain = isinstance(value, (str, int, float, np.integer, np.floating))
    if (not plain or isinstance(value, (bool, np.bool_))
            or (isinstance(value, (float, np.floating)) and all(isinstance(c, int) for c in choices))
            or value not in choices):
        shown = ", ".join(f"{c:g}".replace(".", ",") if isinstance(c, float) else
                          (repr(c) if isinstance(c, str) else str(c)) for c in choices)
        raise ValueError(
            f"Argumen '{name}' harus salah satu dari {shown}, tetapi yang diterima {value!r}."
        )
    return value


def check_instance(value, cls, name: str, expected: str, hint: str = ""):
    """``value`` is a ``cls``; ``expected`` is how the reader writes that type."""
    if not isinstance(value, cls):
        raise TypeError(f"Argumen '{name}' harus {expected}, tetapi yang diterima "
                        f"{type(value).__name__}. {hint}".rstrip())
    return value


def check_block(block) -> int:
    return check_int(block, "block", low=1, high=MAX_BLOCK)


def check_version(version, versions: dict, name: str = "version") -> str:
    """Name of the kernel for a known version string."""
    if not isinstance(version, str) or version not in versions:
        allowed = ", ".join(repr(v) for v in versions)
        raise ValueError(
            f"Argumen '{name}' harus salah satu dari {allowed}, tetapi yang diterima "
            f"{version!r}."
        )
    return versions[version]


def check_axis(axis, ndim: int, name: str = "axis") -> int:
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(
            f"Argumen '{name}' harus bilangan bulat, tetapi yang diterima {axis!r}. "
            f"Pakai misalnya {name}=-1 (sumbu terakhir)."
        )
    if not -ndim <= axis < ndim:
        raise ValueError(
            f"Argumen '{name}' = {axis} di luar sumbu array berdimensi {ndim}: yang sah "
            f"{-ndim} sampai {ndim - 1}. Pakai {name}=-1 untuk sumbu terakhir."
        )
    return int(axis)


# ---------------------------------------------------------------------------
# Shapes together
# ---------------------------------------------------------------------------


def _shape_error(message: str) -> ValueError:
    return ValueError(message)


def check_qk_shapes(Q, K, *, square: bool) -> None:
    """Same d_k; same leading axes; same T when ``square`` (the kernels)."""
    if Q.shape[-1] != K.shape[-1]:
        raise _shape_error(
            f"Dimensi terakhir (d_k) 'Q' dan 'K' harus sama, tetapi yang diterima "
            f"Q.shape = {tuple(Q.shape)} dan K.shape = {tuple(K.shape)}. Dot product "
            "Q[i]·K[j] butuh vektor yang sama panjang."
        )
    if square and Q.shape[-2] != K.shape[-2]:
        raise _shape_error(
            f"'Q' dan 'K' harus punya T (sumbu kedua dari belakang) yang sama, tetapi yang "
            f"diterima Q.shape = {tuple(Q.shape)} dan K.shape = {tuple(K.shape)}. Kernel "
            "ini menghitung matriks skor persegi (T, T)."
        )


def check_leading(names: dict, *, broadcast: bool) -> None:
    """Leading (head/batch) axes equal to Q's (or, in reference, broadcastable)."""
    first_name, first = next(iter(names.items()))
    if broadcast:
        try:
            np.broadcast_shapes(*(x.shape[:-2] for x in names.values()))
            return
        except ValueError:
            pass
    for name, x in names.items():
        if x.shape[:-2] != first.shape[:-2]:
            raise _shape_error(
                f"Sumbu depan (head/batch) '{name}' harus sama dengan milik '{first_name}', "
                f"tetapi yang diterima {name}.shape = {tuple(x.shape)} dan "
                f"{first_name}.shape = {tuple(first.shape)}. "
                + ("Kernel tidak melakukan broadcasting; samakan bentuknya lebih dulu."
                   if not broadcast else
                   "Keduanya tidak bisa di-broadcast; samakan bentuknya lebih dulu.")
            )


def check_v(V, K, Q=None) -> None:
    """V: one value row per key, and (for attention) d_v = d_k."""
    if V.shape[-2] != K.shape[-2]:
        raise _shape_error(
            f"'V' harus punya T yang sama dengan 'K' (satu baris value per key), tetapi "
            f"yang diterima V.shape = {tuple(V.shape)} dan K.shape = {tuple(K.shape)}."
        )
    if Q is not None and V.shape[-1] != Q.shape[-1]:
        raise _shape_error(
            f"Dimensi terakhir 'V' (d_v = {V.shape[-1]}) harus sama dengan d_k 'Q' dan 'K' "
            f"(= {Q.shape[-1]}), seperti di ANDREA; yang diterima V.shape = {tuple(V.shape)} "
            f"dan Q.shape = {tuple(Q.shape)}. Untuk d_v lain, hitung langkah demi langkah: "
            "weighted_sum(softmax(causal_mask(scores(Q, K))), V)."
        )


def check_same_shape(value: np.ndarray, name: str, like: np.ndarray, like_name: str) -> None:
    """Two arrays that belong together (a row and its scores, targets and their ids): one shape."""
    if value.shape != like.shape:
        raise ValueError(
            f"Argumen '{name}' harus berbentuk sama dengan '{like_name}' {like.shape}, tetapi "
            f"yang diterima {value.shape}."
        )


_NO_V = object()


def reference_qkv(Q, K, V=_NO_V):
    """Reference: Q, K (and V) as float arrays with matching d_k, T_k and leading axes.

    Leave V out for scores; ``V=None`` is refused like any other bad V.
    """
    Q = as_float_array(Q, "Q")
    K = as_float_array(K, "K")
    names = {"Q": Q, "K": K}
    if V is _NO_V:
        V = None
    else:
        V = as_float_array(V, "V", layout="(..., T, d_k)")
        names["V"] = V
    check_same_kind(**names)
    check_qk_shapes(Q, K, square=False)
    check_leading(names, broadcast=True)
    if V is not None:
        check_v(V, K, Q)
    for name, x in names.items():
        check_finite(x, name)
    dtype = np.result_type(Q.dtype, K.dtype)
    check_score_overflow(Q, K, dtype)
    return Q, K, V
