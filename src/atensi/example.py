"""Contoh berjalan buku ini: lima token, d_k = 2, dihitung dari bab ke bab.

Kalimatnya "Ani memanggil Budi, dia menoleh". Ada dua nama, jadi kata ganti
*dia* harus **memilih**: pembaca langsung tahu bahwa yang menoleh adalah yang
dipanggil, yaitu *Budi*. Kata *dia* dalam bahasa Indonesia tidak membawa jenis
kelamin, jadi petunjuknya harus ada di vektor: *key* *Budi* berkata "saya
sasaran panggilan", dan *query* *dia* mencari sasaran itu. Di model sungguhan
petunjuk seperti ini dipelajari dari data (bab "Model kata"); di sini kita
menaruhnya dengan tangan supaya mekanismenya kelihatan. Angka-angkanya bulat
atau satu desimal supaya bisa dihitung dengan tangan; bab-bab mengambilnya dari
sini dan tidak pernah menulisnya ulang.

Kedua sumbu punya arti (hanya untuk contoh ini; di model sungguhan sumbu tidak
bernama):

    sumbu 0  "pelaku"   seberapa kuat token ini menyangkut yang berbuat
    sumbu 1  "sasaran"  seberapa kuat token ini menyangkut yang dikenai perbuatan

Q, K dan V keluar dari proyeksi: setiap *token* punya vektor ciri ``X_FEATURES``
(satu baris, lima ciri bernama ``FEATURES``), dan Q = X·W_Q, K = X·W_K,
V = X·W_V dengan tiga matriks kecil ``W_Q``, ``W_K``, ``W_V`` (5 × 2). Angkanya
dipilih supaya hasil kalinya tepat sama dengan Q, K, V di bawah; bab-bab tidak
melatih apa pun dengan contoh ini.
"""

import numpy as np

from . import reference

TOKENS = ("Ani", "memanggil", "Budi", "dia", "menoleh")
AXES = ("pelaku", "sasaran")

# Query: apa yang dicari setiap token.
#   Ani        mencari sasaran perbuatannya (tanpa mask, ia mengintip "Budi")
#   memanggil  mencari pelakunya
#   Budi       mencari siapa yang memanggilnya (pelaku)
#   dia        mencari sasaran panggilan, sedikit juga pelaku
#   menoleh    mencari siapa yang menoleh: sasaran panggilan
Q = np.array([[0, 2], [1, 0], [1, 0], [1, 2], [0, 2]], dtype=np.float32)

# Key: apa yang ditawarkan setiap token. Kata kerja tidak menawarkan apa-apa
# pada kedua sumbu ini; *dia* sendiri menawarkan sedikit "sasaran".
K = np.array([[2, 0], [0, 0], [0, 2], [0, 0.5], [0, 0]], dtype=np.float32)

# Value: informasi yang diberikan bila token itu dilihat. Di kalimat ini
# sumbu "pelaku" membawa "Ani" dan sumbu "sasaran" membawa "Budi".
V = np.array([[1, 0], [0, 0], [0, 1], [0.5, 0.5], [0, 0]], dtype=np.float32)

# Embedding sederhana untuk pandangan "rata-rata masa lalu" (bab Pendahuluan):
# satu vektor per token, sama dengan V supaya gambarnya bisa dibandingkan.
X = V.copy()

# Ciri setiap token (d_model = 5). "nama" dimiliki kedua nama; "subjek" hanya
# nama yang disebut sebelum kata kerja aktif. Tiga ciri lain menandai jenis kata.
FEATURES = ("nama", "subjek", "kata kerja", "kata ganti", "tanggapan")
X_FEATURES = np.array([[1, 1, 0, 0, 0],   # Ani: nama, subjek
                       [0, 0, 1, 0, 0],   # memanggil
                       [1, 0, 0, 0, 0],   # Budi: nama (yang dipanggil)
                       [0, 0, 0, 1, 0],   # dia
                       [0, 0, 0, 0, 1]],  # menoleh
                      dtype=np.float32)

# Proyeksi: satu baris per ciri, satu kolom per sumbu (pelaku, sasaran).
# Sebuah nama menawarkan "sasaran" (key 0; 2); ciri "subjek" memindahkannya ke
# "pelaku" (2; −2 ditambahkan). Semua angka bulat atau setengah, jadi
# hasil kalinya tepat, tanpa pembulatan float32.
W_Q = np.array([[1, 0], [-1, 2], [1, 0], [1, 2], [0, 2]], dtype=np.float32)
W_K = np.array([[0, 2], [2, -2], [0, 0], [0, 0.5], [0, 0]], dtype=np.float32)
W_V = np.array([[0, 1], [1, -1], [0, 0], [0.5, 0.5], [0, 0]], dtype=np.float32)

T, d_k = Q.shape
PRONOUN = TOKENS.index("dia")
REFERENT = TOKENS.index("Budi")
OTHER_NAME = TOKENS.index("Ani")


def qkv():
    """Salinan segar (Q, K, V) supaya bab yang mengubah array tidak merusak contoh."""
    return Q.copy(), K.copy(), V.copy()


def pipeline_rows(row=None):
    """Angka satu baris (bawaan: *dia*) di setiap langkah satu lapisan atensi.

    Mengembalikan daftar ``(kunci, label, angka)``: ciri x, lalu q = x·W_Q,
    skor mentah q·kⱼ, skor dibagi √d_k, mask kausal (−∞ untuk masa depan),
    bobot softmax, keluaran o = Σ aⱼ vⱼ, penggabungan head, dan W_O. Dua
    langkah terakhir tidak punya angka di contoh ini (``None``): contohnya
    satu head, dan W_O tidak diisi dengan tangan.
    """
    i = PRONOUN if row is None else row
    if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or not 0 <= i < T:
        raise ValueError(f"Argumen 'row' harus nomor token 0..{T - 1}, tetapi yang diterima "
                         f"{row!r}. Pakai misalnya example.PRONOUN.")
    Q_, K_, V_ = qkv()
    raw = reference.scores(Q_, K_, scale=False)[i]
    scaled = reference.scores(Q_, K_)[i]
    masked = reference.causal_mask(reference.scores(Q_, K_))[i]
    weights = reference.softmax(reference.causal_mask(reference.scores(Q_, K_)))[i]
    out = weights @ V_
    return [
        ("x", f"x {TOKENS[i]} (ciri)", X_FEATURES[i]),
        ("proyeksi", "q = x · W_Q", Q_[i]),
        ("skor", "skor mentah q · kⱼ", raw),
        ("skala", "÷ √d_k", scaled),
        ("mask", "mask kausal", masked),
        ("softmax", "softmax: bobot aⱼ", weights),
        ("jumlah", "o = Σ aⱼ vⱼ", out),
        ("gabung", "gabung head", None),
        ("keluaran", "· W_O", None),
    ]
