"""Tugas *associative recall* untuk model kata: korpus sintetis, kosakata, pembagian.

Setiap contoh adalah satu "cerita" pendek berisi tiga fakta, lalu kalimat
rumpang yang harus dilengkapi dengan pemilik benda::

    Budi punya apel . Ani punya buku . Siti punya pena . Ini buku Ani

Kata terakhir hanya bisa ditemukan dengan *mencari* di konteks: nama yang sama
bisa punya benda apa saja di cerita lain, jadi tidak ada yang bisa dihafal.
Ini kamus lunak dari bab-bab awal yang dibuat harfiah: benda yang ditanyakan
adalah *query*, benda di setiap fakta adalah *key*, nama pembawanya *value*.

Pembagian latih/uji memakai **pasangan nama-benda**: seperlima pasangan
(``(benda - nama) mod 5 == 0``; setiap nama kehilangan dua benda, setiap
benda dua nama) tidak pernah muncul di data latih. Setiap cerita uji
menanyakan satu pasangan itu, jadi model harus menjawab kombinasi yang belum
pernah dilihatnya.

Semuanya dibuat oleh kode ini dari ``seed``; tidak ada yang diunduh.

    VOCAB                       tuple kata (satu kata per token)
    make_split(seed=0)          -> Split(train, test): array token (N, L)
    story(tokens)               satu baris token -> teks
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import TinyGPT
from .model_checks import check_token_ids
from .validation import check_int

NAMES = ("Budi", "Ani", "Siti", "Joko", "Rina", "Dewi", "Agus", "Tono", "Wati", "Eko")
OBJECTS = ("apel", "buku", "pena", "tas", "payung", "topi", "bola", "jeruk", "kunci", "gelas")
WORDS = ("punya", ".", "Ini")
VOCAB = NAMES + OBJECTS + WORDS
FACTS = 3  # fakta per cerita: peluang menebak acak di antara nama di konteks = 1/3
HELD_OUT_EVERY = 5  # pasangan (nama n, benda b) dengan (b - n) mod 5 == 0 hanya di uji
N_TRAIN = 20000
N_TEST = 1000

_ID = {w: n for n, w in enumerate(VOCAB)}
VERB, STOP, THIS = (_ID[w] for w in WORDS)
LENGTH = 4 * FACTS + 3  # fakta "nama punya benda ." lalu "Ini benda nama"
ANSWER = LENGTH - 1  # kolom jawaban; ditebak di posisi benda yang ditanyakan (ANSWER - 1)


def held_out(name: int, obj: int) -> bool:
    """Apakah pasangan (nama ke-``name``, benda ke-``obj``) disimpan untuk uji."""
    return (obj - name) % HELD_OUT_EVERY == 0


@dataclass(frozen=True)
class Split:
    """Cerita latih dan uji sebagai token ``(N, LENGTH)``; ``query``: fakta yang ditanyakan."""

    train: np.ndarray
    test: np.ndarray
    train_query: np.ndarray
    test_query: np.ndarray
    seed: int


def _stories(rng, count, *, test):
    """``count`` cerita dari ``rng``: kandidat diambil sekaligus (NumPy), yang
    melanggar aturan pembagian dibuang, sampai cukup."""
    rows, queries, have = [], [], 0
    while have < count:
        m = max(1024, 8 * count)
        # Three distinct names and three distinct objects per candidate.
        names = np.argsort(rng.random((m, len(NAMES))), axis=1)[:, :FACTS]
        objects = np.argsort(rng.random((m, len(OBJECTS))), axis=1)[:, :FACTS]
        query = rng.integers(0, FACTS, m)
        r = np.arange(m)
        # Latih: tidak ada pasangan uji, bahkan sebagai nama dan benda yang hanya
        # kebetulan berada di cerita yang sama; jadi statistik pasangan di data latih
        # tidak bisa membantu menebak. Uji: fakta yang ditanyakan pasangan uji.
        if test:
            ok = held_out(names[r, query], objects[r, query])
        else:
            ok = ~held_out(names[:, :, None], objects[:, None, :]).any(axis=(1, 2))
        names, objects, query = names[ok], objects[ok], query[ok]
        n_id = names  # names are the first entries of VOCAB
        o_id = objects + len(NAMES)
        fill = lambda v: np.full(len(query), v)  # noqa: E731
        columns = []
        for f in range(FACTS):
            columns += [n_id[:, f], fill(VERB), o_id[:, f], fill(STOP)]
        r = np.arange(len(query))
        columns += [fill(THIS), o_id[r, query], n_id[r, query]]
        rows.append(np.stack(columns, axis=1))
        queries.append(query)
        have += len(query)
    return (np.concatenate(rows)[:count].astype(np.int64),
            np.concatenate(queries)[:count].astype(np.int64))


def make_split(seed=0, n_train=N_TRAIN, n_test=N_TEST) -> Split:
    """Korpus latih dan uji, deterministik dari ``seed`` (dua generator terpisah,
    jadi mengubah ``n_train`` tidak mengubah cerita uji)."""
    check_int(seed, "seed", low=0)
    check_int(n_train, "n_train")
    check_int(n_test, "n_test")
    train, train_query = _stories(np.random.default_rng([seed, 0]), n_train, test=False)
    test, test_query = _stories(np.random.default_rng([seed, 1]), n_test, test=True)
    return Split(train, test, train_query, test_query, seed)


def story(tokens) -> str:
    """Satu baris token -> teks, kata dipisah spasi."""
    ids = check_token_ids(tokens, len(VOCAB), "tokens")
    return " ".join(VOCAB[int(t)] for t in ids.ravel())


def inputs_targets(rows):
    """Masukan model (semua token kecuali yang terakhir) dan targetnya (digeser satu)."""
    rows = np.asarray(rows)
    return rows[:, :-1], rows[:, 1:]


def query_object_column(query):
    """Kolom benda fakta yang ditanyakan: tempat head pencari seharusnya melihat."""
    return 4 * np.asarray(query) + 2


def pairs_in(rows) -> set:
    """Semua pasangan (nama, benda) yang muncul sebagai fakta di ``rows``."""
    names = {_ID[w]: n for n, w in enumerate(NAMES)}
    objects = {_ID[w]: n for n, w in enumerate(OBJECTS)}
    out = set()
    for row in np.asarray(rows):
        for f in range(FACTS):
            out.add((names[int(row[4 * f])], objects[int(row[4 * f + 2])]))
    return out


def bigram_accuracy(train_rows, test_rows) -> float:
    """Akurasi jawaban pembanding bigram: jawaban = kata yang paling sering mengikuti
    kata sebelumnya (benda yang ditanyakan) di data latih. Bigram tidak bisa melihat
    konteks, jadi untuk benda yang sama selalu menjawab nama yang sama."""
    counts = np.zeros((len(VOCAB), len(VOCAB)))
    np.add.at(counts, (train_rows[:, :-1].ravel(), train_rows[:, 1:].ravel()), 1)
    guess = counts.argmax(axis=1)[test_rows[:, ANSWER - 1]]
    return float((guess == test_rows[:, ANSWER]).mean())


# ------------------------------------------------------------ measurements


def _numpy(a):
    return np.asarray(a.get() if hasattr(a, "get") else a)


def check_model(model, name: str = "model") -> TinyGPT:
    """``model``, bila model kata tugas ini (kosakatanya, panjang ceritanya); selain
    itu ditolak dengan nama argumennya sebelum pekerjaan apa pun."""
    hint = 'muat dengan tasks.load_weights("ingat")'
    if not isinstance(model, TinyGPT):
        raise TypeError(f"Argumen '{name}' harus model kata tugas ingat; {hint}. Yang diterima "
                        f"{type(model).__name__}.")
    if tuple(model.chars) != tuple(VOCAB):
        raise ValueError(f"Argumen '{name}' bukan model tugas ingat: kosakatanya {len(model.chars)} "
                         f"token, bukan {len(VOCAB)} kata cerita tugas ini. Model itu dilatih untuk "
                         f"tugas lain; {hint}.")
    if model.config.T < ANSWER:
        raise ValueError(f"Argumen '{name}' hanya membaca {model.config.T} token (config.T), padahal "
                         f"satu cerita sampai benda yang ditanyakan berisi {ANSWER} token; {hint}.")
    return model


def answer_guess(model, rows, *, attention=None, chunk=500) -> np.ndarray:
    """Jawaban model (token paling mungkin setelah benda yang ditanyakan) per cerita."""
    check_model(model)
    x, _ = inputs_targets(rows)
    out = [_numpy(model.logits(x[a:a + chunk], attention=attention))[:, ANSWER - 1].argmax(-1)
           for a in range(0, len(x), chunk)]
    return np.concatenate(out)


def accuracy(model, rows, *, attention=None) -> float:
    """Bagian cerita yang jawabannya ditebak tepat (0..1)."""
    return float((answer_guess(model, rows, attention=attention) == rows[:, ANSWER]).mean())


def attention_share(model, rows, query, *, chunk=500) -> np.ndarray:
    """Bobot atensi rata-rata dari benda yang ditanyakan ke benda yang sama di faktanya:
    array ``(n_layer, n_head)``, satu angka 0..1 per head."""
    x, _ = inputs_targets(rows)
    cols = query_object_column(query)
    total = np.zeros((model.config.n_layer, model.config.n_head))
    for a in range(0, len(x), chunk):
        _, cache = model.forward(model.check_ids(x[a:a + chunk]), maps=True)
        b = np.arange(len(x[a:a + chunk]))
        for layer, A in enumerate(cache["maps"]):
            A = _numpy(A)
            total[layer] += A[b, :, ANSWER - 1, cols[a:a + chunk]].sum(axis=0)
    return total / len(x)
