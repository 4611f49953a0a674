"""Contoh berjalan buku ini: empat token, d_k = 2, dihitung dari bab ke bab.

Kalimatnya "Budi bilang dia lapar". Kata ganti *dia* seharusnya "melihat"
*Budi*: query-nya mencari nama orang, dan key *Budi* berkata "saya nama
orang". Angka-angkanya bulat atau satu desimal supaya bisa dihitung dengan
tangan; bab-bab mengambilnya dari sini dan tidak pernah menulisnya ulang.

Kedua sumbu punya arti (hanya untuk contoh ini; di model sungguhan sumbu tidak
bernama):

    sumbu 0  "orang"  seberapa kuat token ini menyangkut seseorang
    sumbu 1  "aksi"   seberapa kuat token ini menyangkut perbuatan

Q dan K di sini dianggap sudah keluar dari proyeksi W_Q dan W_K; bab-bab tidak
melatih apa pun dengan contoh ini.
"""

import numpy as np

TOKENS = ("Budi", "bilang", "dia", "lapar")
AXES = ("orang", "aksi")

# Query: apa yang dicari setiap token.
#   Budi   mencari aksi (tanpa mask, ia akan mengintip "bilang")
#   bilang mencari pelakunya (orang)
#   dia    mencari orang yang dirujuknya, kuat sekali
#   lapar  mencari siapa yang lapar (orang), sedikit aksi
Q = np.array([[0, 1], [2, 0], [3, 0], [2, 1]], dtype=np.float32)

# Key: apa yang ditawarkan setiap token.
K = np.array([[2, 0], [0, 2], [1, 0], [0, 1]], dtype=np.float32)

# Value: informasi yang diberikan bila token itu dilihat.
V = np.array([[1, 0], [0, 1], [0.5, 0.5], [0, 0.5]], dtype=np.float32)

# Embedding sederhana untuk pandangan "rata-rata masa lalu" (bab Pendahuluan):
# satu vektor per token, sama dengan V supaya gambarnya bisa dibandingkan.
X = V.copy()

T, d_k = Q.shape
PRONOUN = TOKENS.index("dia")
REFERENT = TOKENS.index("Budi")


def qkv():
    """Salinan segar (Q, K, V) supaya bab yang mengubah array tidak merusak contoh."""
    return Q.copy(), K.copy(), V.copy()
