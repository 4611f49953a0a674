"""Tugas rujukan *dia* untuk model kata: kalimat sintetis, kosakata, pembagian uji.

Setiap contoh adalah kalimat berjalan buku ini, atau kalimat sejenisnya, lalu
pertanyaan yang harus dijawab dengan nama yang dirujuk *dia*::

    Ani memanggil Budi , dia menoleh siapa ? Budi
    Ani dipanggil Budi , dia menoleh siapa ? Ani
    Ani memanggil Budi karena dia bosan siapa ? Ani

Jawabannya ditentukan tiga hal sekaligus:

* **pelengkap** sesudah *dia*: ada yang wajar dilakukan atau dialami yang
  dikenai (*menoleh*, *menjawab*, *melamun*: peran ``"sasaran"``), ada yang
  wajar menjadi alasan yang berbuat (*bosan*, *penasaran*: peran
  ``"pelaku"``), lihat ``COMPLETION_ROLE``. Pelengkap sasaran yang berupa
  akibat disambung dengan koma, yang berupa alasan dengan *karena*
  (``LINK``); *karena* dipakai oleh kedua peran, jadi kata sambung saja tidak
  menentukan jawabannya;
* **bentuk kata kerja**: aktif (``me-``) atau pasif (``di-``);
* **urutan kata**: pada kata kerja aktif pelaku di depan, pada pasif sasaran
  di depan.

Pilihan peran itu konvensi tugas ini, mengikuti bacaan yang wajar bagi
penutur bahasa Indonesia; kalimat nyata bisa saja dibaca lain.

Pembagian latih/uji memakai dua hal yang tidak pernah dilihat model:

* **pasangan (nama, peran)**: di data latih Budi dan Ani tidak pernah menjadi
  yang *dipanggil*, hanya yang memanggil; Siti dan Joko tidak pernah yang
  *disapa*; Rina dan Dewi tidak pernah yang *ditegur*; Agus dan Tono tidak
  pernah yang *dicolek* (``HELD_OUT``). Setiap kalimat dengan pasangan itu,
  dengan pelengkap apa pun, adalah kalimat uji;
* **pasangan (kata kerja, pelengkap)**: *memanggil* tidak pernah bertemu
  *bosan* di data latih, *menyapa* tidak pernah bertemu *menjawab*, dan
  seterusnya (``HELD_OUT_COMPLETION``), jadi model tidak bisa menghafal
  tabel kata kerja-pelengkap.

Kalimat berjalan "Ani memanggil Budi , dia menoleh", kembaran pasifnya, dan
"Ani memanggil Budi karena dia bosan" termasuk kalimat uji.

Semuanya dibuat oleh kode ini dari ``seed``; tidak ada yang diunduh.

    VOCAB                       tuple kata (satu kata per token)
    COMPLETION_ROLE             pelengkap -> "sasaran" atau "pelaku"
    make_split(seed=0)          -> Split(train, test): array token (N, LENGTH)
    sentence(tokens)            satu baris token -> teks
    resolve(model, kalimat)     nama yang dirujuk *dia* menurut model
    head_attention(model, kalimat)  baris atensi head pemilih nama
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass

import numpy as np

from .model import TinyGPT
from .validation import check_int

# The same ten names as the recall task, so both word models speak of the same people.
NAMES = ("Budi", "Ani", "Siti", "Joko", "Rina", "Dewi", "Agus", "Tono", "Wati", "Eko")
VERB_PAIRS = (("memanggil", "dipanggil"), ("menyapa", "disapa"), ("menegur", "ditegur"),
              ("mencolek", "dicolek"))
# The one acted upon turns, answers, or was daydreaming (the reason it was
# called, greeted, ...); the one who acts was bored or curious.
COMPLETION_ROLE = {"menoleh": "sasaran", "menjawab": "sasaran", "melamun": "sasaran",
                   "bosan": "pelaku", "penasaran": "pelaku"}
COMPLETIONS = tuple(COMPLETION_ROLE)
# What joins the completion to the clause: a consequence follows a comma, a
# reason follows "karena". "karena" occurs with both roles.
LINK = {"menoleh": ",", "menjawab": ",", "melamun": "karena", "bosan": "karena",
        "penasaran": "karena"}
LINKS = (",", "karena")
WORDS = ("dia", "siapa", "?")
ACTIVE = tuple(a for a, _ in VERB_PAIRS)
PASSIVE = tuple(p for _, p in VERB_PAIRS)
VOCAB = NAMES + ACTIVE + PASSIVE + COMPLETIONS + LINKS + WORDS

# Columns of one row: "A kerja B sambung dia pelengkap siapa ? jawaban".
FIRST, VERB, SECOND, COMMA, PRONOUN, COMPLETION, WHO, ASK, ANSWER = range(9)
LINK_COLUMN = COMMA  # the comma or "karena"
LENGTH = ANSWER + 1
SENTENCE = COMPLETION + 1  # tokens of the plain sentence, without the question
# Held out: active verb -> the names that are never the one acted on with that
# verb pair in training (there they only ever act); every sentence where one of
# them is acted on is a test sentence, whatever its completion.
HELD_OUT = {"memanggil": ("Budi", "Ani"), "menyapa": ("Siti", "Joko"),
            "menegur": ("Rina", "Dewi"), "mencolek": ("Agus", "Tono")}
# Held out: active verb -> the completion it never meets in training (either form).
HELD_OUT_COMPLETION = {"memanggil": "bosan", "menyapa": "menjawab", "menegur": "melamun",
                       "mencolek": "penasaran"}

_ID = {w: n for n, w in enumerate(VOCAB)}
_DIA, _WHO, _ASK = (_ID[w] for w in WORDS)
_ACTIVE_OF = {p: a for a, p in VERB_PAIRS}
# Words as a phone keyboard may type them: names in any case.
_FOLDED = {w.casefold(): w for w in NAMES}


def _active(verb: str) -> str:
    return _ACTIVE_OF.get(verb, verb)


def held_out(name: str, verb: str) -> bool:
    """Apakah nama ``name`` sebagai yang dikenai kata kerja ``verb`` (aktif atau
    pasif: yang dipanggil, disapa, ...) disimpan untuk uji."""
    return name in HELD_OUT.get(_active(verb), ())


def held_out_completion(verb: str, completion: str) -> bool:
    """Apakah kata kerja ``verb`` (aktif atau pasif) bersama pelengkap
    ``completion`` disimpan untuk uji."""
    return HELD_OUT_COMPLETION.get(_active(verb)) == completion


def referent_role(verb: str, completion: str) -> tuple:
    """(kolom nama yang dirujuk, perannya): misalnya ``("memanggil", "menoleh")``
    -> ``(SECOND, "sasaran")``."""
    role = COMPLETION_ROLE[completion]
    passive = verb in PASSIVE
    # Active: the actor comes first; passive: the one acted upon comes first.
    first = (role == "pelaku") != passive
    return (FIRST if first else SECOND), role


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
                    acted_on = first if passive else second
                    for completion in COMPLETIONS:
                        column, _ = referent_role(verb, completion)
                        referent = (a, b)[column == SECOND]
                        rows.append([a, _ID[verb], b, _ID[LINK[completion]], _DIA,
                                     _ID[completion], _WHO, _ASK, referent])
                        test.append(held_out(acted_on, verb)
                                    or held_out_completion(verb, completion))
    return np.array(rows, dtype=np.int64), np.array(test)


def make_split(seed=0) -> Split:
    """Semua kalimat tugas ini, dibagi latih/uji menurut pasangan (nama, peran) dan
    (kata kerja, pelengkap) yang disimpan, urutannya diacak dari ``seed``."""
    seed = check_int(seed, "seed", low=0)
    rows, test = _all_rows()
    rng = np.random.default_rng([seed, 2])
    train_rows, test_rows = rows[~test], rows[test]
    return Split(train_rows[rng.permutation(len(train_rows))],
                 test_rows[rng.permutation(len(test_rows))], seed)


def _token_rows(tokens, name: str) -> np.ndarray:
    """Token ids as integers 0..len(VOCAB)-1, refused by name before any work."""
    if tokens is None or isinstance(tokens, (str, bytes, dict, set)):
        raise TypeError(f"Argumen '{name}' harus deretan indeks token (bilangan bulat "
                        f"0..{len(VOCAB) - 1}), tetapi yang diterima {type(tokens).__name__}. "
                        "Ambil satu baris dari rujukan.make_split().test.")
    try:
        array = np.asarray(tokens.get() if hasattr(tokens, "get") else tokens)
    except (ValueError, TypeError):
        array = np.asarray(tokens, dtype=object)
    if array.dtype.kind == "b" or array.dtype.kind not in "iufO" or array.size == 0:
        raise TypeError(f"Argumen '{name}' harus deretan indeks token (bilangan bulat "
                        f"0..{len(VOCAB) - 1}) yang tidak kosong, tetapi yang diterima "
                        f"{_quote(tokens)}. Ambil satu baris dari rujukan.make_split().test.")
    flat = array.ravel()
    for t in flat:
        whole = isinstance(t, (int, np.integer)) and not isinstance(t, (bool, np.bool_))
        if not whole and isinstance(t, (float, np.floating)):
            whole = math.isfinite(t) and float(t).is_integer() and array.dtype.kind == "i"
        if not whole:
            raise TypeError(f"Argumen '{name}' harus berisi bilangan bulat (indeks token), "
                            f"tetapi ada {_quote(t)}. Ambil satu baris dari "
                            "rujukan.make_split().test.")
        if not 0 <= int(t) < len(VOCAB):
            raise ValueError(f"Token di '{name}' harus 0..{len(VOCAB) - 1} (indeks di "
                             f"rujukan.VOCAB), tetapi ada {int(t)}.")
    return flat.astype(np.int64)


def sentence(tokens) -> str:
    """Satu baris token -> teks, kata dipisah spasi."""
    return " ".join(VOCAB[int(t)] for t in _token_rows(tokens, "tokens"))


def inputs_targets(rows):
    """Masukan model (semua token kecuali yang terakhir) dan targetnya (digeser satu)."""
    rows = np.asarray(rows)
    return rows[:, :-1], rows[:, 1:]


def _is_pelaku(rows) -> np.ndarray:
    rows = np.asarray(rows)
    return np.isin(rows[:, COMPLETION], [_ID[c] for c, r in COMPLETION_ROLE.items()
                                         if r == "pelaku"])


def is_passive(rows) -> np.ndarray:
    """Apakah kata kerja setiap baris berbentuk pasif (``di-``)."""
    return np.isin(np.asarray(rows)[:, VERB], [_ID[v] for v in PASSIVE])


def is_pelaku(rows) -> np.ndarray:
    """Apakah pelengkap setiap baris merujuk yang berbuat (peran ``"pelaku"``)."""
    return _is_pelaku(rows)


def referent_column(rows) -> np.ndarray:
    """Kolom nama yang dirujuk *dia* (0 atau 2): nama kedua bila kata kerjanya aktif
    dan pelengkapnya sasaran, atau pasif dan pelengkapnya pelaku; selain itu nama
    pertama."""
    first = is_pelaku(rows) != is_passive(rows)
    return np.where(first, FIRST, SECOND)


def is_held_out(rows) -> np.ndarray:
    """Apakah setiap baris kalimat uji (pasangan nama-peran atau kata kerja-pelengkap
    yang tidak pernah dilatih)."""
    rows = np.asarray(rows)
    out = []
    for row in rows:
        verb, completion = VOCAB[int(row[VERB])], VOCAB[int(row[COMPLETION])]
        acted_on = VOCAB[int(row[FIRST if verb in PASSIVE else SECOND])]
        out.append(held_out(acted_on, verb) or held_out_completion(verb, completion))
    return np.array(out, dtype=bool)


# ------------------------------------------------------------ plain sentences

_SCRIPTS = {"CYRILLIC": "Kiril", "GREEK": "Yunani", "ARMENIAN": "Armenia",
            "FULLWIDTH": "lebar penuh", "MATHEMATICAL": "matematika"}
# Letters of other scripts drawn like Latin ones.
_LOOKALIKE = dict(zip("АВЕКМНОРСТХаеорсухіјѕԁԛԝІЈЅΑΒΕΖΗΙΚΜΝΟΡΤΥΧαοικνρτυ",
                      "ABEKMHOPCTXaeopcyxijsdqwIJSABEZHIKMNOPTYXaoikvptu"))
_INVISIBLE = {"\u200b": "spasi lebar nol", "\u200c": "pemisah lebar nol",
              "\u200d": "penyambung lebar nol", "\u2060": "penyambung kata",
              "\ufeff": "tanda BOM / spasi lebar nol", "\u00ad": "tanda hubung lunak",
              "\u202e": "pembalik arah kanan-ke-kiri", "\u202d": "pemaksa arah kiri-ke-kanan",
              "\u200e": "penanda kiri-ke-kanan", "\u200f": "penanda kanan-ke-kiri",
              "\u202a": "penanam kiri-ke-kanan", "\u202b": "penanam kanan-ke-kiri",
              "\u202c": "penutup arah", "\u2066": "isolasi kiri-ke-kanan",
              "\u2067": "isolasi kanan-ke-kiri", "\u2068": "isolasi arah",
              "\u2069": "penutup isolasi arah"}


def _quote(value, limit: int = 80) -> str:
    """At most ``limit`` characters of what the reader passed (a message never
    echoes megabytes back)."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) > limit:
        text = text[:limit - 1] + "…"
    # Invisible characters are shown by their code, so that a right-to-left
    # override cannot turn the message around.
    return "".join(f"<U+{ord(c):04X}>" if unicodedata.category(c) in ("Cf", "Cc") else c
                   for c in text)


def describe_character(char: str) -> str:
    """Satu karakter yang tidak tampak sebagai dirinya, dinamai: kode, tulisan, dan
    huruf Latin yang mirip, misalnya "huruf U+0410 (Kiril) yang mirip 'A'"."""
    code = f"U+{ord(char):04X}"
    if char in _INVISIBLE:
        return f"karakter tak terlihat {code} ({_INVISIBLE[char]})"
    name = unicodedata.name(char, "")
    script = next((v for k, v in _SCRIPTS.items() if name.startswith(k)), None)
    plain = _LOOKALIKE.get(char) or unicodedata.normalize("NFKD", char)[:1]
    if not plain.isascii():
        plain = ""
    if unicodedata.category(char) in ("Cf", "Cc", "Zs", "Zl", "Zp", "Mn"):
        return f"karakter tak terlihat {code} ({name.lower() or 'tanpa nama'})"
    if script or plain and plain != char:
        like = f" yang mirip '{plain}'" if plain and plain != char else ""
        return f"huruf {code} ({script or 'bukan Latin'}){like}"
    return f"karakter {code} ({name.lower() or 'tanpa nama'})"


def _strange(word: str) -> str:
    """The first character of ``word`` outside plain ASCII, named; '' if none."""
    for char in word:
        if not char.isascii() or not char.isprintable():
            return describe_character(char)
    return ""


def _sentence_words(text: str) -> list:
    # "Budi, dia" and "Budi , dia" are the same sentence; invisible characters
    # are kept inside their word so that the message can name them.
    return text.replace(",", " , ").split()


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
    shape = ("'Nama kata-kerja Nama , dia pelengkap' atau 'Nama kata-kerja Nama karena dia "
             "pelengkap', misalnya \"Ani memanggil Budi , dia menoleh\" atau \"Ani memanggil "
             "Budi karena dia bosan\"")
    rows = []
    for n, text in enumerate(sentences):
        if not isinstance(text, str):
            raise TypeError(f"Kalimat ke-{n + 1} harus str, tetapi yang diterima "
                            f"{type(text).__name__}.")
        shown = _quote(text)
        words = [_FOLDED.get(w.casefold(), w) for w in _sentence_words(text)]
        for word in words:
            if word not in _ID:
                strange = _strange(word)
                hint = (f" Kata itu memuat {strange}; ketik ulang kata itu dengan huruf biasa."
                        if strange else "")
                raise ValueError(
                    f"Kalimat ke-{n + 1} (\"{shown}\") berisi kata yang tidak dikenal model: "
                    f"'{_quote(word, 30)}'.{hint} Kosakatanya: nama {', '.join(NAMES)}; kata "
                    f"kerja {', '.join(ACTIVE + PASSIVE)}; pelengkap {', '.join(COMPLETIONS)}; "
                    "kata sambung ',' dan 'karena'.")
        ok = (len(words) == SENTENCE and words[FIRST] in NAMES and words[SECOND] in NAMES
              and words[VERB] in ACTIVE + PASSIVE and words[COMMA] in LINKS
              and words[PRONOUN] == "dia" and words[COMPLETION] in COMPLETIONS)
        if not ok:
            raise ValueError(f"Kalimat ke-{n + 1} (\"{shown}\") tidak berbentuk {shape}.")
        if words[COMMA] != LINK[words[COMPLETION]]:
            want = LINK[words[COMPLETION]]
            raise ValueError(
                f"Kalimat ke-{n + 1} (\"{shown}\"): pelengkap '{words[COMPLETION]}' disambung "
                f"dengan '{want}', bukan '{words[COMMA]}', misalnya \"{words[FIRST]} "
                f"{words[VERB]} {words[SECOND]}{' ,' if want == ',' else ' karena'} dia "
                f"{words[COMPLETION]}\".")
        if words[FIRST] == words[SECOND]:
            raise ValueError(f"Kalimat ke-{n + 1} (\"{shown}\") memakai nama '{words[FIRST]}' "
                             "dua kali; *dia* hanya bisa dipilih di antara dua nama berbeda.")
        rows.append([_ID[w] for w in words])
    return np.array(rows, dtype=np.int64)


def question_rows(sentences) -> np.ndarray:
    """Kalimat biasa -> masukan model ``(N, ANSWER)``: kalimatnya ditambah "siapa ?"."""
    rows = _words(sentences)
    return np.concatenate([rows, np.tile([_WHO, _ASK], (len(rows), 1))], axis=1)


def seen_in_training(sentences) -> list:
    """Untuk setiap kalimat biasa: apakah kalimat itu ada di data latih (``False``
    untuk kalimat uji, yang tidak pernah dilihat model)."""
    rows = _words(sentences)
    return [not bool(t) for t in is_held_out(rows)]


def check_model(model, name: str = "model") -> TinyGPT:
    """``model``, bila model kata tugas ini (kosakata, panjang kalimat, head yang
    tersimpan); selain itu ditolak dengan nama argumennya sebelum pekerjaan apa pun."""
    hint = "muat dengan tasks.load_weights(\"rujukan\")"
    if not isinstance(model, TinyGPT):
        raise TypeError(f"'{name}' harus model rujukan; {hint}. Yang diterima "
                        f"{_quote(type(model).__name__, 40)}.")
    if tuple(model.chars) != VOCAB:
        raise ValueError(f"'{name}' bukan model rujukan: kosakatanya bukan kosakata tugas "
                         f"*dia* ({len(model.chars)} token, misalnya "
                         f"{_quote(list(model.chars)[:4], 60)}). Model itu dilatih untuk tugas "
                         f"lain; {hint}.")
    if model.config.T < ANSWER:
        raise ValueError(f"'{name}' hanya membaca {model.config.T} token (config.T), padahal "
                         f"satu kalimat dengan pertanyaan \"siapa ?\" berisi {ANSWER} token. "
                         f"Model itu bukan model rujukan buku ini; {hint}.")
    head = model.info.get("head") if isinstance(model.info, dict) else None
    if head is not None:
        _check_head(model, head, f"{name}.info['head']")
    return model


def _check_head(model, head, name: str = "head") -> tuple:
    """(layer, head) of ``model``: two whole numbers in range."""
    c = model.config
    shape = f"(layer, head) dengan layer 0..{c.n_layer - 1} dan head 0..{c.n_head - 1}"
    if isinstance(head, (str, bytes)) or not hasattr(head, "__len__") or len(head) != 2:
        raise TypeError(f"Argumen '{name}' harus pasangan {shape}, misalnya (1, 0), tetapi "
                        f"yang diterima {_quote(head, 40)}.")
    out = []
    for part, limit, what in zip(head, (c.n_layer, c.n_head), ("layer", "head")):
        if isinstance(part, (bool, np.bool_)) or not isinstance(part, (int, np.integer)):
            raise TypeError(f"Argumen '{name}' harus pasangan bilangan bulat {shape}, tetapi "
                            f"{what}-nya {_quote(part, 30)}.")
        if not 0 <= int(part) < limit:
            raise ValueError(f"Argumen '{name}': {what} {int(part)} tidak ada; model ini punya "
                             f"{limit} {what} (0..{limit - 1}). Berikan {shape}.")
        out.append(int(part))
    return tuple(out)


def _computed(model, work):
    """Run ``work()``; weights that overflow are named as the model's, not as an
    attention argument the reader never passed."""
    with np.errstate(all="ignore"):
        try:
            out = work()
        except (ValueError, FloatingPointError, OverflowError):
            out = None
    if out is None or not np.all(np.isfinite(out)):
        raise ValueError("Bobot 'model' menghasilkan angka yang meluap atau NaN (bobotnya "
                         "terlalu besar atau rusak), jadi tidak ada jawaban yang bisa "
                         "dipercaya. Muat ulang model buku dengan "
                         "tasks.load_weights(\"rujukan\").")
    return out


def resolve(model, sentences) -> list:
    """Nama yang dirujuk *dia* menurut ``model`` untuk setiap kalimat biasa,
    misalnya ``resolve(model, ["Ani memanggil Budi , dia menoleh"])`` -> ``["Budi"]``.
    Pertanyaan "siapa ?" ditambahkan oleh fungsi ini."""
    model = check_model(model)
    x = question_rows(sentences)
    guess = _computed(model, lambda: _numpy(model.logits(x))[:, ASK])
    return [VOCAB[int(t)] for t in guess.argmax(-1)]


def head_attention(model, sentences, head=None) -> np.ndarray:
    """Baris atensi head pemilih nama (``model.info["head"]``, atau ``head`` =
    (layer, head)) dari posisi yang memutuskan ("?") ke setiap token kalimat itu
    sendiri, berurutan: array ``(N, 6)``."""
    model = check_model(model)
    if head is None:
        if not isinstance(model.info, dict) or "head" not in model.info:
            raise ValueError("'model' tidak menyimpan head pemilih namanya (model.info['head']); "
                             "sebutkan head=(layer, head), atau muat dengan "
                             "tasks.load_weights(\"rujukan\").")
        head = model.info["head"]
    layer, h = _check_head(model, head)
    x = question_rows(sentences)
    rows = _computed(model, lambda: attention_rows(model, x, inputs=True))
    return rows[:, layer, h, :SENTENCE]


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


def completion_share(model, rows, *, chunk=1000) -> np.ndarray:
    """Bobot atensi rata-rata dari posisi pertanyaan ("siapa", "?") ke pelengkap,
    per layer dan head ``(n_layer, n_head)``: head yang membaca pelengkap."""
    x, _ = inputs_targets(rows)
    total = np.zeros((model.config.n_layer, model.config.n_head))
    for a in range(0, len(x), chunk):
        _, cache = model.forward(model.check_ids(x[a:a + chunk]), maps=True)
        for layer, A in enumerate(cache["maps"]):
            total[layer] += _numpy(A)[:, :, WHO:, COMPLETION].mean(axis=2).sum(axis=0)
    return total / len(x)


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
