"""Attention kausal yang cepat di CPU: matematika yang sama, disusun untuk mesin.

``attention_cpu_fast(Q, K, V)`` menghitung ``softmax(mask(Q Kᵀ / √d_k)) V``
seperti :func:`atensi.reference.attention`, tanpa pernah membuat array
``(T, T)``. Bentuk yang diajarkan buku (``attention_blocked``, ubin demi ubin
dengan *online softmax*) tetap di :mod:`atensi.reference`; fungsi ini adalah
jalur terpisah yang dibandingkan oleh ``python -m atensi.bench``.

Yang ditambahkannya, dibandingkan ``attention_blocked``:

1. **Satu jalur per blok query.** Untuk ``block`` baris *query*, skor terhadap
   semua *key* yang boleh dilihat (sampai diagonal) dihitung dengan satu
   perkalian matriks ke buffer milik *thread* itu, lalu di-*softmax* sekaligus:
   tidak ada *online softmax*, tidak ada penskalaan ulang. Ubin masa depan
   tidak pernah dihitung; hanya kotak diagonal yang diberi mask.
2. **Tanpa pengurangan maksimum bila terbukti aman.** Softmax tidak berubah
   oleh geseran: ``exp(s) / Σ exp(s)``. Maksimum baris dikurangkan hanya agar
   ``exp`` tidak melimpah. Dari ketaksamaan Cauchy–Schwarz,
   ``|s_ij| ≤ ‖q_i‖·‖k_j‖``; bila batas itu kecil (``_SAFE_EXP2``), ``exp``
   tidak mungkin melimpah atau menjadi nol semua, dan dua lintasan (maksimum,
   pengurangan) dilewati. Bila tidak, jalur biasa dengan maksimum dipakai.
3. **exp2 alih-alih exp.** Faktor ``log2(e)`` dilebur ke faktor skala Q
   (yang dikalikan sekali), dan ``2^x`` di NumPy lebih murah daripada ``e^x``.
4. **Skor disimpan terbalik**, ``Sᵀ = K Qᵀ`` (*key* × *query*): untuk d_k = 64
   BLAS lebih cepat ke arah ini (diukur), dan ``O = (Sᵀ)ᵀ V`` langsung ditulis
   ke keluaran. Jumlah tiap baris lewat BLAS (``1ᵀ Sᵀ``, gemv), bukan ``sum``.
5. **Thread.** Blok-blok dibagi ke beberapa *thread* (NumPy melepas GIL di
   ``matmul`` dan ``exp2``); BLAS di setiap *thread* dibatasi ke satu
   *thread* agar tidak berebut inti.
6. **Mask sesudah exp2.** Di jalur aman, kotak diagonal dikalikan 0/1 sesudah
   ``exp2``, bukan diberi ``-inf`` sebelumnya: ``exp2`` NumPy yang tervektor
   jatuh ke jalur lambat untuk setiap vektor yang memuat ``-inf`` (diukur:
   seluruh jalur skor dua kali lebih lama).
7. **Tanpa salinan**: K dan V dibaca sebagai *view*; keluaran ditulis
   langsung ke array hasil; semua operasi di tempat (float32 tetap float32).
"""

from __future__ import annotations

import atexit
import concurrent.futures
import itertools
import math
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from atensi import blas, memory
from atensi import validation as _val

__all__ = ["attention_cpu_fast", "default_threads", "auto_block"]

# |s · log2(e)| below this bound: 2^s neither overflows float32 (a sum of up to
# 2^26 terms of at most 2^60 stays far below 3,4·10^38) nor underflows to 0
# (2^-60 ≈ 8,7·10^-19 is a normal float32), so the row maximum is not needed.
_SAFE_EXP2 = 60.0
_LOG2E = 1.4426950408889634
# Most bytes of one thread's score strip (keys × block). Measured here (2 MiB
# L2 per core): block 128 beat 64 and 32 up to T = 8192, where a strip is 4 MiB.
_STRIP_BYTES = 8 << 20
_MAX_THREADS = 256


_lock = threading.Lock()
_pools: dict[int, ThreadPoolExecutor] = {}


def _pool(workers):
    with _lock:
        pool = _pools.get(workers)
        if pool is None:
            pool = _pools[workers] = ThreadPoolExecutor(
                max_workers=workers, thread_name_prefix="atensi-cpu-fast")
        return pool


@atexit.register
def _shutdown():
    for pool in list(_pools.values()):
        pool.shutdown(wait=False)


def default_threads():
    """Banyak *thread* bawaan: inti CPU yang boleh dipakai proses ini."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def auto_block(T_k, itemsize=4):
    """Baris *query* per blok: 128, kecuali bila jalur skor ``T_k × block``
    melebihi 8 MiB (T di atas 16.384); kelipatan 16, paling kecil 16. Blok yang
    lebih besar membuang hitungan di kotak diagonal; yang lebih kecil membuat
    perkalian matriks kurang efisien (diukur di sini: 128 terbaik pada
    T = 1024, 4096 dan 8192)."""
    T_k = _val.check_int(T_k, "T_k", low=1)
    itemsize = _val.check_int(itemsize, "itemsize", low=1, high=16)
    rows = _STRIP_BYTES // max(1, T_k * itemsize)
    return int(min(128, max(16, rows // 16 * 16)))


# ---------------------------------------------------------------------------
# The work
# ---------------------------------------------------------------------------


def _softmax_columns(St, safe, ones, l, keep_T=None, q0=0):
    """In place on a transposed strip St (keys × queries): St ← 2^(St − shift)
    per column (one column = one query row), l ← column sums via BLAS.

    ``safe``: every |St| is known to be small, so no shift is needed. Otherwise
    the column maximum is subtracted; a column that is entirely -inf (nothing
    may be seen) gets shift 0, so it becomes zeros with sum 0 (never NaN).

    ``keep_T`` (safe path only): the causal mask of the diagonal square as
    0/1, applied after the exponential. NumPy's vectorised ``exp2`` falls back
    to a slow path for every vector that holds an -inf (measured: the whole
    strip took twice as long), and on the safe path the future scores are
    finite, so 2^s · 0 = 0 exactly."""
    if not safe:
        m = St.max(axis=0, keepdims=True)
        bad = ~np.isfinite(m)
        if bad.any():
            m[bad] = 0
        St -= m
    np.exp2(St, out=St)
    if keep_T is not None:
        St[q0:] *= keep_T
    np.matmul(ones, St, out=l)
    return l


def _finish_rows(o, l, safe):
    """o ← o / lᵀ (l is one row of sums). Queries with l = 0 (every key masked)
    get zeros. On the safe path l > 0 is certain (each query sees at least
    key 0, and every 2^s ≥ 2^-60), so the check is skipped."""
    if safe or (l > 0).all():
        o *= 1 / l.T  # one division per query, then a multiply per element
    else:
        good = l[0] > 0
        o[good] /= l.T[good]
        o[~good] = 0


def attention_cpu_fast(Q, K, V, *, causal=True, scale=True, block=None, threads=None):
    """``softmax(mask(Q Kᵀ / √d_k)) V``, cepat di CPU, tanpa array ``(T, T)``.

    Hasilnya sama dengan :func:`atensi.reference.attention` (sampai pembulatan
    float32). Bentuk ``(..., T, d_k)`` dengan sumbu depan apa pun (batch, head;
    boleh di-*broadcast* seperti di ``reference``). Hanya NumPy (CPU).

    ``block``: baris *query* per blok (bawaan :func:`auto_block`);
    ``threads``: banyak *thread* (bawaan :func:`default_threads`).
    Memori tambahan: satu jalur ``block × T`` per *thread* dan salinan Q yang
    sudah diskalakan, bukan ``T²``.
    """
    Q, K, V = _val.reference_qkv(Q, K, V)
    for name, x in (("Q", Q), ("K", K), ("V", V)):
        if _val.kind(x) != "numpy":
            raise TypeError(
                f"Argumen '{name}' harus array NumPy: attention_cpu_fast hanya berjalan "
                f"di CPU. Pindahkan dulu dengan {name}.get(), atau pakai "
                "atensi.kernels.attention untuk GPU."
            )
    causal = _val.check_flag(causal, "causal")
    scale = _val.check_flag(scale, "scale")
    T_q, T_k, d_k = Q.shape[-2], K.shape[-2], Q.shape[-1]
    dtype = np.result_type(Q.dtype, K.dtype, V.dtype, np.float32)
    block = auto_block(T_k, dtype.itemsize) if block is None else _val.check_block(block)
    threads = default_threads() if threads is None else _val.check_int(
        threads, "threads", low=1, high=_MAX_THREADS)

    lead = np.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])
    # P V sums up to T_k terms p·v before the division by l. Without the
    # maximum, p can be up to 2^bound: keep 2^bound · T_k · max|v| finite too.
    # Values so large that even p <= 1 could overflow are normalised first.
    v_abs = max(float(np.max(V)), -float(np.min(V)))
    limit = float(np.finfo(dtype).max) / 4
    safe_exp2 = _SAFE_EXP2
    if v_abs * T_k > 0:
        safe_exp2 = min(_SAFE_EXP2, math.log2(limit / (v_abs * T_k)))
    normalize_first = v_abs * T_k > limit
    d_v = V.shape[-1]
    workers = min(threads, len(range(0, T_q, block)) * max(1, math.prod(lead)))
    memory.check_output_bytes(
        _work_bytes(Q, K, V, lead, dtype, block, workers),
        f"attention_cpu_fast untuk sumbu depan {lead} dan T = {T_q} (keluaran, salinan Q "
        "yang diskalakan, salinan K dan V, jalur skor per thread)",
        "Kecilkan T atau jumlah head/batch, atau hitung sebagian head sekali jalan.")
    out = np.empty(lead + (T_q, d_v), dtype=dtype)
    # Q · (scale · log2 e): one pass over Q instead of one over every score.
    factor = (1.0 / math.sqrt(d_k) if scale else 1.0) * _LOG2E
    Qs = np.empty(lead + (T_q, d_k), dtype=dtype)
    np.multiply(Q, dtype.type(factor), out=Qs)
    # Keys and values as views (a copy only if a matrix is not C-contiguous).
    K = np.broadcast_to(np.ascontiguousarray(K, dtype=dtype), lead + (T_k, d_k))
    V = np.broadcast_to(np.ascontiguousarray(V, dtype=dtype), lead + (T_k, d_v))
    heads = list(np.ndindex(lead)) if lead else [()]

    # Which strips need no maximum: max‖q‖ over the block · max‖k‖ over its keys.
    q_norm = np.sqrt(np.einsum("...td,...td->...t", Qs, Qs))
    k_norm = np.sqrt(np.einsum("...td,...td->...t", K, K))
    k_prefix = np.maximum.accumulate(k_norm, axis=-1)  # max over keys 0..j
    starts = list(range(0, T_q, block))
    q_block = np.maximum.reduceat(q_norm, starts, axis=-1)  # (..., blocks)

    tasks = []
    for b, q0 in enumerate(starts):
        q1 = min(q0 + block, T_q)
        k_end = min(q1, T_k) if causal else T_k
        for h in heads:
            bound = float(q_block[h + (b,)]) * float(k_prefix[h + (k_end - 1,)])
            tasks.append((k_end, h, q0, q1, bound <= safe_exp2))
    tasks.sort(key=lambda t: -t[0])  # longest strips first: even finish
    # future_T[c, r] = -inf where key q0 + c comes after query q0 + r.
    future_T = (np.tril(np.full((block, block), -np.inf, dtype=dtype), -1)
                if causal else None)
    # keep_T: 1 where the key may be seen, 0 in the future (the safe path).
    keep_T = np.triu(np.ones((block, block), dtype=dtype)) if causal else None
    ones = np.ones((1, T_k), dtype=dtype)
    counter = itertools.count()
    longest = tasks[0][0]

    stop = threading.Event()  # set on Ctrl-C: the workers take no further strip

    def work():
        old = blas.set_threads_here(1)
        try:
            buf = np.empty(longest * block, dtype=dtype)
            l_buf = np.empty((1, block), dtype=dtype)
            while not stop.is_set() and (i := next(counter)) < len(tasks):
                k_end, h, q0, q1, safe = tasks[i]
                n = q1 - q0
                o = out[h][q0:q1]  # written in place, no copy
                # Scores transposed, St = K Qᵀ (keys × queries): BLAS is
                # faster this way round for d_k = 64 (measured).
                St = buf[: k_end * n].reshape(k_end, n)
                np.matmul(K[h][:k_end], Qs[h][q0:q1].T, out=St)
                diagonal = causal and k_end > q0 + 1
                if diagonal and not safe:
                    # The diagonal square: hide key j > query i before the maximum.
                    St[q0:] += future_T[: k_end - q0, :n]
                l = _softmax_columns(St, safe, ones[:, :k_end], l_buf[:, :n],
                                     keep_T[: k_end - q0, :n] if diagonal and safe else None,
                                     q0)
                if normalize_first:  # |V| near the float limit: P V with P <= 1
                    np.divide(St, np.where(l > 0, l, 1), out=St)
                    l = np.where(l > 0, 1, 0).astype(dtype)
                np.matmul(St.T, V[h][:k_end], out=o)  # O = P V, P = Stᵀ
                _finish_rows(o, l, safe)
        finally:
            blas.set_threads_here(old)

    if workers == 1:
        work()
    else:
        _run_workers(work, workers, stop)
    return out


def _work_bytes(Q, K, V, lead, dtype, block, workers) -> float:
    """Bytes attention_cpu_fast allocates: out and the scaled Q for every head of
    the broadcast lead, K and V when they must be copied, one strip per worker."""
    heads = float(math.prod(lead))
    T_q, T_k, d_k, d_v = Q.shape[-2], K.shape[-2], Q.shape[-1], V.shape[-1]
    n = heads * T_q * (d_v + d_k + 2) + heads * T_k * 2 + workers * block * (T_k + 1)
    for x in (K, V):
        if x.dtype != dtype or not x.flags.c_contiguous:
            n += x.size
    return n * dtype.itemsize


def _run_workers(work, workers, stop) -> None:
    """Run ``work`` on ``workers`` pool threads; on Ctrl-C stop them before raising.

    The strips are written into the caller's output, so the workers must have
    returned before KeyboardInterrupt leaves this function.
    """
    futures = [_pool(workers).submit(work) for _ in range(workers)]
    try:
        for f in futures:
            f.result()
    except KeyboardInterrupt:
        stop.set()
        while True:
            try:
                concurrent.futures.wait(futures)
                break
            except KeyboardInterrupt:
                continue
        raise KeyboardInterrupt(
            "attention_cpu_fast dihentikan (Ctrl-C): semua thread sudah berhenti, "
            "keluarannya tidak dikembalikan."
        ) from None
