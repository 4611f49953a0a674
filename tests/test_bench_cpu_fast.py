"""atensi.bench.cpu_fast.attention_cpu_fast: sama dengan attention (float64) di setiap bentuk, cepat di CPU."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _oracles import qkv, reference64, rel_err
from atensi.bench import cpu_fast as F
from atensi import blas
from atensi import reference as R


@pytest.mark.slow
@pytest.mark.parametrize("T", [1, 7, 33, 129, 1025])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("scale", [True, False])
def test_matches_float64_reference(T, causal, scale):
    Q, K, V = qkv((2, 3, T, 16), seed=T)
    want = reference64(Q, K, V, causal=causal, scale=scale)
    # Blocks that divide T, do not divide it, exceed it; the automatic one.
    for block in (None, 1 if T <= 33 else 7, 16, 50, T + 3):
        for threads in (1, 3):
            got = F.attention_cpu_fast(Q, K, V, causal=causal, scale=scale,
                                       block=block, threads=threads)
            assert got.shape == want.shape and got.dtype == np.float32
            assert rel_err(got, want) <= 1e-5, (T, block, threads)


def test_andrea_shape_matches_attention_and_blocked():
    Q, K, V = qkv((2, 12, 256, 64), seed=1)
    got = F.attention_cpu_fast(Q, K, V)
    assert rel_err(got, reference64(Q, K, V)) <= 1e-5
    assert rel_err(got, R.attention_blocked(Q, K, V)) <= 1e-5


@settings(max_examples=30, deadline=None)
@given(
    T=st.integers(1, 70),
    d_k=st.integers(1, 20),
    block=st.integers(1, 80),
    causal=st.booleans(),
    scale=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_any_shape_and_block(T, d_k, block, causal, scale, seed):
    Q, K, V = qkv((T, d_k), seed=seed)
    got = F.attention_cpu_fast(Q, K, V, causal=causal, scale=scale, block=block, threads=2)
    assert rel_err(got, reference64(Q, K, V, causal=causal, scale=scale)) <= 1e-5


def test_large_scores_take_the_path_with_the_row_maximum():
    # ‖q‖·‖k‖ far above the exp2 bound: the max must be subtracted, else inf/NaN.
    Q, K, V = qkv((3, 100, 32), seed=5, scale=30.0)
    got = F.attention_cpu_fast(Q, K, V, block=32)
    assert np.isfinite(got).all()
    # Scores of size ~10⁴ in float32: rounding of the scores themselves limits accuracy.
    assert rel_err(got, reference64(Q, K, V)) <= 1e-2
    assert rel_err(got, R.attention_blocked(Q, K, V, block=32)) <= 1e-3


def test_mixed_safe_and_unsafe_blocks():
    Q, K, V = qkv((1, 96, 16), seed=6)
    Q[0, 70] *= 200.0  # one loud query: only its block needs the maximum
    want = reference64(Q, K, V)
    for block in (16, 32, 96):
        assert rel_err(F.attention_cpu_fast(Q, K, V, block=block), want) <= 1e-5


def test_huge_values_do_not_overflow_where_the_reference_does_not():
    Q, K, V = qkv((2, 50, 8), seed=15)
    for v_scale in (1e20, 1e30, 1e36):
        V2 = (V * np.float32(v_scale)).astype(np.float32)
        got = F.attention_cpu_fast(Q, K, V2, block=16)
        assert np.isfinite(got).all(), v_scale
        assert rel_err(got, reference64(Q, K, V2)) <= 1e-5, v_scale


def test_leading_axes_and_broadcasting():
    Q, _, _ = qkv((2, 3, 20, 8), seed=2)
    _, K, V = qkv((1, 3, 20, 8), seed=3)  # shared over the batch axis
    got = F.attention_cpu_fast(Q, K, V, block=6)
    assert got.shape == (2, 3, 20, 8)
    assert rel_err(got, reference64(Q, K, V)) <= 1e-5
    Q2, K2, V2 = qkv((20, 8), seed=4)  # a single head, no leading axis
    assert rel_err(F.attention_cpu_fast(Q2, K2, V2), reference64(Q2, K2, V2)) <= 1e-5


def test_different_query_and_key_lengths():
    rng = np.random.default_rng(8)
    for T_q, T_k in ((5, 12), (12, 5)):
        Q = rng.standard_normal((2, T_q, 4)).astype(np.float32)
        K, V = (rng.standard_normal((2, T_k, 4)).astype(np.float32) for _ in range(2))
        for causal in (True, False):
            got = F.attention_cpu_fast(Q, K, V, causal=causal, block=3)
            assert rel_err(got, reference64(Q, K, V, causal=causal)) <= 1e-5


def test_dtypes_and_non_contiguous_input():
    Q, K, V = qkv((2, 40, 8), seed=9, dtype=np.float64)
    got = F.attention_cpu_fast(Q, K, V, block=16)
    assert got.dtype == np.float64 and rel_err(got, reference64(Q, K, V)) <= 1e-12
    half = F.attention_cpu_fast(*(x.astype(np.float16) for x in (Q, K, V)))
    assert half.dtype == np.float32
    Qt, Kt, Vt = (np.swapaxes(x.astype(np.float32), 0, 1) for x in (Q, K, V))  # (40, 2, 8) views
    got = F.attention_cpu_fast(Qt, Kt, Vt)
    assert rel_err(got, reference64(Qt, Kt, Vt)) <= 1e-5


def test_inputs_are_not_modified():
    Q, K, V = qkv((2, 33, 8), seed=10)
    copies = [x.copy() for x in (Q, K, V)]
    F.attention_cpu_fast(Q, K, V, block=8)
    assert all(np.array_equal(a, b) for a, b in zip((Q, K, V), copies))


def test_fully_masked_rows_become_zeros_not_nan():
    # Every query sees key 0 for valid input, so this guards the softmax helper itself.
    St = np.array([[-np.inf, 1.0], [-np.inf, 2.0]], dtype=np.float32)  # keys × queries
    l = np.empty((1, 2), np.float32)
    F._softmax_columns(St, False, np.ones((1, 2), np.float32), l)
    assert np.array_equal(St[:, 0], [0.0, 0.0]) and l[0, 0] == 0.0
    assert np.isclose(St[:, 1].sum() / l[0, 1], 1.0)
    o = np.ones((2, 3), np.float32)
    F._finish_rows(o, l, False)
    assert np.array_equal(o[0], [0.0, 0.0, 0.0]) and np.isfinite(o).all()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_and_inf_are_refused(bad):
    Q, K, V = qkv((2, 10, 4), seed=11)
    for name, x in (("Q", Q), ("K", K), ("V", V)):
        y = x.copy()
        y[1, 3, 2] = bad
        args = {"Q": Q, "K": K, "V": V, name: y}
        with pytest.raises(ValueError, match=f"'{name}'.*NaN atau inf"):
            F.attention_cpu_fast(args["Q"], args["K"], args["V"])


def test_bad_arguments_get_indonesian_errors():
    Q, K, V = qkv((2, 10, 4), seed=12)
    cases = [
        (dict(block=0), ValueError, "'block'"),
        (dict(block=2.5), TypeError, "'block'"),
        (dict(threads=0), ValueError, "'threads'"),
        (dict(threads="dua"), TypeError, "'threads'"),
        (dict(causal=1), TypeError, "'causal'"),
        (dict(scale="ya"), TypeError, "'scale'"),
    ]
    for kwargs, error, text in cases:
        with pytest.raises(error, match=text):
            F.attention_cpu_fast(Q, K, V, **kwargs)
    with pytest.raises(ValueError, match="d_k"):
        F.attention_cpu_fast(Q, K[..., :3], V)
    with pytest.raises(TypeError, match="'V'"):
        F.attention_cpu_fast(Q, K, V.astype(np.int32))
    with pytest.raises(ValueError, match="'Q'"):
        F.attention_cpu_fast(Q[0, 0], K, V)


def test_huge_scores_are_refused_before_work():
    Q, K, V = qkv((1, 4, 4), seed=13)
    with pytest.raises(ValueError, match="terlalu besar"):
        F.attention_cpu_fast(Q * np.float32(1e19), K * np.float32(1e19), V)


def test_auto_block_and_threads():
    assert F.auto_block(1024) == 128 and F.auto_block(8192) == 128
    assert F.auto_block(16384) == 128 and F.auto_block(65536) == 32
    assert F.auto_block(10**7) == 16 and F.auto_block(1) == 128
    assert F.default_threads() >= 1


def test_blas_threads_are_restored():
    before = blas.set_threads_here(3)
    if before is None:
        pytest.skip("BLAS ini tidak punya openblas_set_num_threads_local")
    try:
        Q, K, V = qkv((4, 64, 8), seed=14)
        F.attention_cpu_fast(Q, K, V, threads=1)
        assert blas.set_threads_here(3) == 3  # the caller's setting came back
    finally:
        blas.set_threads_here(before)


def test_broadcast_input_beyond_memory_is_refused_before_work(monkeypatch):
    """A Q broadcast against many heads of K makes as many scaled copies of Q."""
    from atensi import memory

    monkeypatch.setattr(memory, "available_memory", lambda kind="numpy": 64e6)
    Q = np.zeros((1, 1024, 64), np.float32)
    K = np.broadcast_to(np.zeros((1, 1024, 64), np.float32), (4096, 1024, 64))
    monkeypatch.setattr(F, "_run_workers", lambda *a: pytest.fail("thread sudah dijalankan"))
    with pytest.raises(MemoryError, match=r"attention_cpu_fast.*butuh sekitar.*Kecilkan T"):
        F.attention_cpu_fast(Q, K, K, threads=2)


CTRL_C = """
import os, signal, threading, time
import numpy as np
from atensi.bench.cpu_fast import attention_cpu_fast
# Ctrl-C raises KeyboardInterrupt, even when a shell or test worker started us ignoring SIGINT.
signal.signal(signal.SIGINT, signal.default_int_handler)
Q = np.random.default_rng(3).standard_normal((8, 8192, 64)).astype(np.float32)
attention_cpu_fast(Q[:, :256], Q[:, :256], Q[:, :256], threads=2)  # pool started
timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
start = time.perf_counter()
timer.start()
try:
    attention_cpu_fast(Q, Q, Q, threads=2)
    print("SELESAI")
except KeyboardInterrupt as err:
    stopped = time.perf_counter() - start
    cpu = time.process_time()
    time.sleep(0.5)
    print("DIHENTIKAN", stopped, time.process_time() - cpu, str(err))
"""


@pytest.mark.slow
def test_ctrl_c_stops_every_thread():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", CTRL_C], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    words = proc.stdout.split()
    assert words[0] == "DIHENTIKAN", "ubah ukuran: perhitungan harus lama tanpa Ctrl-C"
    stopped, cpu_after = float(words[1]), float(words[2])
    print(f"berhenti sesudah {stopped:.2f} s, CPU sesudahnya {cpu_after:.3f} s")
    assert stopped < 2.0
    # Two threads still computing would burn about 1 s of CPU in the 0,5 s
    # sleep; a stopped pool only finishes its last chunk (0,1 s when another
    # test worker shares the cores).
    assert cpu_after < 0.25, "thread pool masih menghitung sesudah Ctrl-C"
    assert "dihentikan" in proc.stdout
