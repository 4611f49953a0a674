"""Tugas rujukan *dia* untuk model kata: kalimat sintetis, kosakata, pembagian uji.

Setiap contoh adalah kalimat berjalan buku ini, lalu pertanyaan yang harus
dijawab dengan nama yang dirujuk *dia*::

    Ani memanggil Budi , dia menoleh siapa ? Budi
    Ani dipanggil Budi , dia menoleh siapa ? Ani

Yang menoleh adalah yang dipanggil (disapa, ditegur, ...). Dengan kata kerja
aktif (``me-``) itu nama kedua; dengan kata kerja pasif (``di-``) nama pertama.
Jawabannya bergantung pada *bentuk kata kerja* dan *urutan kata*, tidak pada
posisi tetap atau nama tetap.

Pembagian latih/uji memakai **pasangan (nama, peran)**: di data latih Budi
dan Ani tidak pernah menjadi yang *dipanggil*, hanya yang memanggil; Siti dan
Joko tidak pernah yang *disapa*; Rina dan Dewi tidak pernah yang *ditegur*;
Agus dan Tono tidak pernah yang *dicolek* (``HELD_OUT``). Mereka tetap menjadi
yang dirujuk dengan kata kerja lain, di kedua tempat. Setiap kalimat uji
menanyakan satu pasangan itu, dalam bentuk aktif maupun pasif, jadi tidak ada
kalimat uji yang pernah dilihat model; kalimat berjalan "Ani memanggil Budi ,
dia menoleh" dan kembaran pasifnya "Ani dipanggil Budi , dia menoleh" termasuk
kalimat uji.

Semuanya dibuat oleh kode ini dari ``seed``; tidak ada yang diunduh.

    VOCAB                       tuple kata (satu kata per token)
    make_split(seed=0)          -> Split(train, test): array token (N, LENGTH)
    sentence(tokens)            satu baris token -> teks
    load()                      model terlatih yang dikirim buku
    resolve(model, kalimat)     nama yang dirujuk *dia* menurut model
    head_attention(model, kalimat)  baris atensi head pemilih nama
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import files, recall, reference
from .model import TinyGPT
from .training_loop import RESULTS
from .validation import check_int

NAMES = recall.NAMES
VERB_PAIRS = (("memanggil", "dipanggil"), ("menyapa", "disapa"), ("menegur", "ditegur"),
              ("mencolek", "dicolek"))
COMPLETIONS = ("menoleh", "tersenyum", "menjawab", "berhenti")
WORDS = (",", "dia", "siapa", "?")
WEIGHTS = RESULTS / "model_rujukan.npz"  # written by python -m atensi.train --task rujukan
ACTIVE = tuple(a for a, _ in VERB_PAIRS)
PASSIVE = tuple(p for _, p in VERB_PAIRS)
VOCAB = NAMES + ACTIVE + PASSIVE + COMPLETIONS + WORDS

# Columns of one row: "A kerja B , dia pelengkap siapa ? jawaban".
FIRST, VERB, SECOND, COMMA, PRONOUN, COMPLETION, WHO, ASK, ANSWER = range(9)
LENGTH = ANSWER + 1
SENTENCE = COMPLETION + 1  # tokens of the plain sentence, without the question
# Held out: active verb -> the names that are never the one acted on with that
# verb pair in training (there they only ever act); every test sentence asks one.
HELD_OUT = {"memanggil": ("Budi", "Ani"), "menyapa": ("Siti", "Joko"),
            "menegur": ("Rina", "Dewi"), "mencolek": ("Agus", "Tono")}

_ID = {w: n for n, w in enumerate(VOCAB)}
_COMMA, _DIA, _WHO, _ASK = (_ID[w] for w in WORDS)


def held_out(name: str, verb: str) -> bool:
    """Apakah nama ``name`` sebagai yang dikenai kata kerja ``verb`` (aktif atau
    pasif: yang dipanggil, disapa, ...) disimpan untuk uji."""
    active = {p: a for a, p in VERB_PAIRS}.get(verb, verb)
    return name in HELD_OUT.get(active, ())


@dataclass(frozen=True)
class Split:
    """Kalimat latih dan uji sebagai token ``(N, LENGTH)``; kolom terakhir jawabannya."""

    train: np.ndarray
    test: np.ndarray
    seed: int


def _all_rows():
    """Every sentence of the task once, with its answer, and whether it is held out."""
    rows, test = [], []
    for a, first in enumerate(NAMES):
        for b, second in enumerate(NAMES):
            if a == b:
                continue
            for pair in VERB_PAIRS:
                for passive, verb in enumerate(pair):
                    column = FIRST if passive else SECOND
                    referent = (a, b)[column == SECOND]
                    for completion in COMPLETIONS:
                        rows.append([a, _ID[verb], b, _COMMA, _DIA, _ID[completion], _WHO, _ASK,
                                     referent])
                        test.append(held_out(NAMES[referent], verb))
    return np.array(rows, dtype=np.int64), np.array(test)


def make_split(seed=0) -> Split:
    """Semua kalimat tugas ini, dibagi latih/uji menurut pasangan (nama, peran)
    yang disimpan, urutannya diacak dari ``seed``."""
    seed = check_int(seed, "seed", low=0)
    rows, test = _all_rows()
    rng = np.random.default_rng([seed, 2])
    train_rows, test_rows = rows[~test], rows[test]
    return Split(train_rows[rng.permutation(len(train_rows))],
                 test_rows[rng.permutation(len(test_rows))], seed)


def sentence(tokens) -> str:
    """Satu baris token -> teks, kata dipisah spasi."""
    return " ".join(VOCAB[int(t)] for t in np.asarray(tokens).ravel())


def inputs_targets(rows):
    """Masukan model (semua token kecuali yang terakhir) dan targetnya (digeser satu)."""
    rows = np.asarray(rows)
    return rows[:, :-1], rows[:, 1:]


def referent_column(rows) -> np.ndarray:
    """Kolom nama yang dirujuk *dia*: 2 untuk kata kerja aktif, 0 untuk pasif."""
    rows = np.asarray(rows)
    return np.where(np.isin(rows[:, VERB], [_ID[v] for v in PASSIVE]), FIRST, SECOND)


def is_passive(rows) -> np.ndarray:
    """Apakah kata kerja setiap baris berbentuk pasif (``di-``)."""
    return referent_column(rows) == FIRST


# ------------------------------------------------------------ plain sentences


def _words(sentences):
    """The plain sentences checked, as token rows ``(N, SENTENCE)``."""
    if isinstance(sentences, str):
        sentences = [sentences]
    if not isinstance(sentences, (list, tuple)):
        raise TypeError("Argumen 'sentences' harus list kalimat (str), tetapi yang diterima "
                        f"{type(sentences).__name__}.")
    if not sentences:
        raise ValueError("Argumen 'sentences' kosong: berikan setidaknya satu kalimat, "
                         "misalnya [\"Ani memanggil Budi , dia menoleh\"].")
    shape = ("'Nama kata-kerja Nama , dia pelengkap', misalnya "
             "\"Ani memanggil Budi , dia menoleh\"")
    rows = []
    for n, text in enumerate(sentences):
        if not isinstance(text, str):
            raise TypeError(f"Kalimat ke-{n + 1} harus str, tetapi yang diterima "
                            f"{type(text).__name__}.")
        words = text.replace(",", " , ").split()
        for word in words:
            if word not in _ID:
                raise ValueError(
                    f"Kalimat ke-{n + 1} (\"{text}\") berisi kata yang tidak dikenal model: "
                    f"'{word}'. Kosakatanya: nama {', '.join(NAMES)}; kata kerja "
                    f"{', '.join(ACTIVE + PASSIVE)}; pelengkap {', '.join(COMPLETIONS)}.")
        ok = (len(words) == SENTENCE and words[FIRST] in NAMES and words[SECOND] in NAMES
              and words[VERB] in ACTIVE + PASSIVE and words[COMMA] == ","
              and words[PRONOUN] == "dia" and words[COMPLETION] in COMPLETIONS)
        if not ok:
            raise ValueError(f"Kalimat ke-{n + 1} (\"{text}\") tidak berbentuk {shape}.")
        if words[FIRST] == words[SECOND]:
            raise ValueError(f"Kalimat ke-{n + 1} (\"{text}\") memakai nama '{words[FIRST]}' "
                             "dua kali; *dia* hanya bisa dipilih di antara dua nama berbeda.")
        rows.append([_ID[w] for w in words])
    return np.array(rows, dtype=np.int64)


def question_rows(sentences) -> np.ndarray:
    """Kalimat biasa -> masukan model ``(N, ANSWER)``: kalimatnya ditambah "siapa ?"."""
    rows = _words(sentences)
    return np.concatenate([rows, np.tile([_WHO, _ASK], (len(rows), 1))], axis=1)


def load(path=None):
    """Model rujukan yang dikirim buku (``results/model_rujukan.npz``), lewat
    ``TinyGPT.load``; ``model.info["head"]``: [layer, head] head pemilih nama."""
    return TinyGPT.load(files.as_path(path) if path is not None else WEIGHTS)


def resolve(model, sentences) -> list:
    """Nama yang dirujuk *dia* menurut ``model`` untuk setiap kalimat biasa,
    misalnya ``resolve(model, ["Ani memanggil Budi , dia menoleh"])`` -> ``["Budi"]``.
    Pertanyaan "siapa ?" ditambahkan oleh fungsi ini."""
    x = question_rows(sentences)
    return [VOCAB[int(t)] for t in answer_guess(model, x, inputs=True)]


def head_attention(model, sentences, head=None) -> np.ndarray:
    """Baris atensi head pemilih nama (``model.info["head"]``, atau ``head`` =
    (layer, head)) dari posisi yang memutuskan ("?") ke setiap token kalimat itu
    sendiri, berurutan: array ``(N, 6)``."""
    x = question_rows(sentences)
    layer, h = model.info["head"] if head is None else head
    return attention_rows(model, x, inputs=True)[:, layer, h, :SENTENCE]


# ------------------------------------------------------------ measurements


def _numpy(a):
    return np.asarray(a.get() if hasattr(a, "get") else a)


def answer_guess(model, rows, *, attention=None, inputs=False, chunk=1000) -> np.ndarray:
    """Token paling mungkin di tempat jawaban, per kalimat. ``rows``: baris
    lengkap ``(N, LENGTH)``, atau masukan ``(N, ANSWER)`` bila ``inputs``."""
    x = np.asarray(rows) if inputs else inputs_targets(rows)[0]
    out = [_numpy(model.logits(x[a:a + chunk], attention=attention))[:, ASK].argmax(-1)
           for a in range(0, len(x), chunk)]
    return np.concatenate(out)


def accuracy(model, rows, *, attention=None) -> float:
    """Bagian kalimat yang rujukannya ditebak tepat (0..1)."""
    return float((answer_guess(model, rows, attention=attention) == rows[:, ANSWER]).mean())


def attention_rows(model, rows, *, inputs=False, chunk=1000) -> np.ndarray:
    """Baris atensi dari posisi "?" setiap layer dan head: ``(N, n_layer, n_head, ANSWER)``."""
    x = np.asarray(rows) if inputs else inputs_targets(rows)[0]
    out = []
    for a in range(0, len(x), chunk):
        _, cache = model.forward(model.check_ids(x[a:a + chunk]), maps=True)
        out.append(np.stack([_numpy(A)[:, :, ASK] for A in cache["maps"]], axis=1))
    return np.concatenate(out)


def attention_share(model, rows) -> np.ndarray:
    """Bobot atensi rata-rata dari "?" ke nama yang dirujuk: ``(n_layer, n_head)``."""
    A = attention_rows(model, rows)
    cols = referent_column(rows)
    return A[np.arange(len(rows)), :, :, cols].mean(axis=0)


def verb_share(model, rows, *, chunk=1000) -> np.ndarray:
    """Bobot atensi rata-rata dari setiap posisi sesudah kata kerja ke kata kerja,
    per layer dan head ``(n_layer, n_head)``: head yang membaca bentuk kata kerja."""
    x, _ = inputs_targets(rows)
    total = np.zeros((model.config.n_layer, model.config.n_head))
    for a in range(0, len(x), chunk):
        _, cache = model.forward(model.check_ids(x[a:a + chunk]), maps=True)
        for layer, A in enumerate(cache["maps"]):
            total[layer] += _numpy(A)[:, :, VERB + 1:, VERB].mean(axis=2).sum(axis=0)
    return total / len(x)


HeadAblation = recall.HeadAblation


class _Recorder:
    """Attention that records each layer's output (for the mean of one head)."""

    def __init__(self):
        self.outputs = []

    def __call__(self, Q, K, V, *, causal, scale):
        O = reference.attention(Q, K, V, causal=causal, scale=scale)
        self.outputs.append(_numpy(O))
        return O


def head_means(model, rows, chunk=1000) -> list:
    """Keluaran rata-rata setiap head per posisi pada ``rows``: satu array
    ``(n_head, T, d_k)`` per layer."""
    x, _ = inputs_targets(rows)
    sums, n = None, 0
    for a in range(0, len(x), chunk):
        rec = _Recorder()
        model.logits(x[a:a + chunk], attention=rec)
        part = [O.sum(axis=0) for O in rec.outputs]
        sums = part if sums is None else [s + p for s, p in zip(sums, part)]
        n += len(x[a:a + chunk])
    return [s / n for s in sums]


class MeanAblation:
    """Pengganti ``reference.attention`` yang mengganti keluaran satu head di satu
    layer dengan keluaran rata-ratanya (``head_means``): head itu tetap menulis,
    tetapi hal yang sama untuk setiap kalimat."""

    def __init__(self, n_layer, layer, head, means):
        self.n_layer, self.layer, self.head, self.calls = n_layer, layer, head, 0
        self.mean = means[layer][head]

    def __call__(self, Q, K, V, *, causal, scale):
        O = reference.attention(Q, K, V, causal=causal, scale=scale)
        if self.calls % self.n_layer == self.layer:
            O[:, self.head] = self.mean[:O.shape[-2]].astype(O.dtype)
        self.calls += 1
        return O


uniform_attention = recall.uniform_attention
uniform_attention_backward = recall.uniform_attention_backward


def first_name_accuracy(rows) -> float:
    """Pembanding "selalu nama pertama"."""
    return float((rows[:, FIRST] == rows[:, ANSWER]).mean())


def second_name_accuracy(rows) -> float:
    """Pembanding "selalu nama kedua"."""
    return float((rows[:, SECOND] == rows[:, ANSWER]).mean())


def bigram_accuracy(train_rows, test_rows) -> float:
    """Pembanding bigram: jawaban = kata yang paling sering mengikuti kata
    sebelumnya ("?") di data latih, jadi satu nama yang sama untuk setiap kalimat."""
    counts = np.zeros((len(VOCAB), len(VOCAB)))
    np.add.at(counts, (train_rows[:, :-1].ravel(), train_rows[:, 1:].ravel()), 1)
    guess = counts.argmax(axis=1)[test_rows[:, ASK]]
    return float((guess == test_rows[:, ANSWER]).mean())
