"""Tugas *associative recall* untuk model kata: korpus sintetis, kosakata, pembagian.

Setiap contoh adalah satu "cerita" pendek berisi beberapa fakta dan satu
pertanyaan, lalu jawabannya::

    Budi membawa apel . Ani membawa buku . Siti membawa pena . Siapa membawa buku ? Ani

Jawabannya hanya bisa ditemukan dengan *mencari* di konteks: nama yang sama
bisa membawa benda apa saja di cerita lain, jadi tidak ada yang bisa dihafal.
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

from .validation import check_int

NAMES = ("Budi", "Ani", "Siti", "Joko", "Rina", "Dewi", "Agus", "Tono", "Wati", "Eko")
OBJECTS = ("apel", "buku", "pena", "tas", "payung", "topi", "bola", "jeruk", "kunci", "gelas")
WORDS = ("membawa", ".", "Siapa", "?")
VOCAB = NAMES + OBJECTS + WORDS
FACTS = 3  # fakta per cerita: peluang menebak acak di antara nama di konteks = 1/3
HELD_OUT_EVERY = 5  # pasangan (nama n, benda b) dengan (b - n) mod 5 == 0 hanya di uji
N_TRAIN = 8000
N_TEST = 1000

_ID = {w: n for n, w in enumerate(VOCAB)}
VERB, STOP, WHO, QUESTION = (_ID[w] for w in WORDS)
LENGTH = 4 * FACTS + 5  # fakta "nama membawa benda ." dan "Siapa membawa benda ? nama"
ANSWER = LENGTH - 1  # kolom jawaban; ditebak dari posisi "?" (kolom ANSWER - 1)


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


def _story(names, objects, query):
    row = []
    for n, o in zip(names, objects):
        row += [_ID[NAMES[n]], VERB, _ID[OBJECTS[o]], STOP]
    row += [WHO, VERB, _ID[OBJECTS[objects[query]]], QUESTION, _ID[NAMES[names[query]]]]
    return row


def _stories(rng, count, *, test):
    rows, queries = [], []
    while len(rows) < count:
        names = rng.choice(len(NAMES), FACTS, replace=False)
        objects = rng.choice(len(OBJECTS), FACTS, replace=False)
        query = int(rng.integers(FACTS))
        unseen = [held_out(n, o) for n, o in zip(names, objects)]
        # Latih: tidak satu pun pasangan uji. Uji: yang ditanyakan pasangan uji,
        # fakta lainnya pasangan latih.
        if test:
            ok = unseen[query] and sum(unseen) == 1
        else:
            ok = not any(unseen)
        if ok:
            rows.append(_story(names, objects, query))
            queries.append(query)
    return np.array(rows, dtype=np.int64), np.array(queries, dtype=np.int64)


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
    return " ".join(VOCAB[int(t)] for t in np.asarray(tokens).ravel())


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
    kata sebelumnya ("?") di data latih. Bigram tidak bisa melihat konteks, jadi
    selalu menjawab nama yang sama."""
    counts = np.zeros((len(VOCAB), len(VOCAB)))
    np.add.at(counts, (train_rows[:, :-1].ravel(), train_rows[:, 1:].ravel()), 1)
    guess = counts.argmax(axis=1)[test_rows[:, ANSWER - 1]]
    return float((guess == test_rows[:, ANSWER]).mean())
