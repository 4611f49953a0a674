"""No crash, no hang, no lost error text.

Tests whose bug would kill the interpreter (heap overflow, fiber stack
overflow) run the call in a child process, so that before the fix they fail
instead of taking pytest down.
"""

import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import kernels, memory, reference
from atensi.cudacpu import BarrierDeadlockError, CudaCpuError, LaunchConfigError, RawModule
from atensi.kernels import limits

ROOT = Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(11)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.fixture
def no_launch(monkeypatch):
    kc.forbid_launches(monkeypatch)


def _child(code: str, timeout=300):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("d_v", [2, 12])
@pytest.mark.parametrize("impl", ["chain-v2", "fused-v1"])
def test_v_with_another_last_axis_is_refused_clearly(d_v, impl):
    """d_v < d_k overflowed the heap in weighted_sum.cu (segfault), d_v > d_k returned
    uninitialised memory, fused returned the wrong shape: now a clear refusal."""
    proc = _child(f"""
        import numpy as np
        from atensi import kernels
        Q = np.ones((2, 9, 8), np.float32)
        V = np.ones((2, 9, {d_v}), np.float32)
        try:
            kernels.attention(Q, Q, V, impl="{impl}", backend="cpu")
        except ValueError as err:
            print("DITOLAK", err)
        else:
            print("DITERIMA")
    """)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "DITOLAK" in proc.stdout and "'V'" in proc.stdout and "d_v" in proc.stdout


def test_reference_refuses_v_with_another_last_axis_too():
    from atensi import reference

    Q, V = rand(9, 8), rand(9, 3)
    for fn in (reference.attention, reference.attention_blocked):
        with pytest.raises(ValueError, match=r"'V' \(d_v = 3\)"):
            fn(Q, Q, V)


def test_missing_v_is_refused_before_any_launch(no_launch):
    Q = rand(5, 4)
    with pytest.raises(TypeError, match=r"Argumen 'V' harus array NumPy atau CuPy.*NoneType"):
        kernels.attention(Q, Q, None, backend="cpu")


# ---- Ctrl-C and work budgets -------------------------------------------------------------

SLOW = """
extern "C" __global__ void slow(float* out, int n) {
  float acc = 0.0f;
  for (int i = 0; i < n; ++i) acc = acc * 0.999f + 1.0f;
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}
"""


@pytest.mark.slow
def test_emulated_launch_stops_on_ctrl_c():
    kernel = RawModule(SLOW, path="slow.cu").get_function("slow")
    out = np.zeros(4000, np.float32)
    n = np.int32(200_000)
    start = time.perf_counter()
    kernel((4,), (32,), (out, n))  # 4 blocks, to time one block
    per_block = (time.perf_counter() - start) / 4
    assert per_block * 4000 > 8, "ubah ukuran: peluncuran harus lama tanpa Ctrl-C"
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    # Ctrl-C raises KeyboardInterrupt, even when a shell or test worker started us ignoring SIGINT.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt, match="dihentikan"):
            kernel((4000,), (32,), (out, n))
    finally:
        stopped = time.perf_counter() - start
        timer.join()
        signal.signal(signal.SIGINT, previous)
    assert stopped < 0.5 + 2.0 + 2 * per_block, stopped
    # The cancel flag is cleared: the next launch runs to the end.
    out[:] = 0
    kernel((3,), (32,), (out, np.int32(10)))
    assert (out[:3] > 0).all()


INTERRUPTED = """
    import json, os, signal, threading, time
    import numpy as np
    from atensi import kernels
    from atensi.cudacpu import RawModule

    # Ctrl-C raises KeyboardInterrupt, even when a shell or test worker started us ignoring SIGINT.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    rng = np.random.default_rng(5)
    def rand(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    slow = RawModule({slow!r}, path="slow.cu").get_function("slow")
    plain_out = np.zeros(4000, np.float32)
    q, Q = rand(64, 64), rand({T}, 64)
    calls = {{
        "plain": (lambda: slow((4000,), (32,), (plain_out, np.int32(200_000))),
                  lambda: slow((3,), (32,), (np.zeros(3, np.float32), np.int32(10)))),
        "chain": (lambda: kernels.attention(Q, Q, Q, backend="cpu"),
                  lambda: kernels.attention(q, q, q, backend="cpu")),
        "fused": (lambda: kernels.attention(Q, Q, Q, impl="fused-v1", backend="cpu"),
                  lambda: kernels.attention(q, q, q, impl="fused-v1", backend="cpu")),
        "split": (lambda: kernels.attention(Q, Q, Q, impl="fused-v2", splits=4,
                                            backend="cpu"),
                  lambda: kernels.attention(q, q, q, impl="fused-v2", splits=4,
                                            backend="cpu")),
        "backward": (lambda: kernels.attention_backward(Q, Q, Q, Q, backend="cpu"),
                     lambda: kernels.attention_backward(q, q, q, q, backend="cpu")),
    }}
    big, small = calls[{kind!r}]
    small()  # compile and load first
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        big()
        status = "selesai"
    except KeyboardInterrupt as err:
        status = "dihentikan" if "dihentikan" in str(err) else repr(err)
    stopped = time.perf_counter() - start
    running = [t.name for t in threading.enumerate() if t.name.startswith("cudacpu-")]
    timer.join()
    snapshot = plain_out.copy()
    start = time.perf_counter()
    small()
    follow_up = time.perf_counter() - start
    time.sleep(0.3)
    print(json.dumps({{
        "status": status, "stopped": stopped, "follow_up": follow_up,
        "running": running,
        "written_after": bool((plain_out != snapshot).any()),
    }}))
"""


@pytest.mark.parametrize("kind, T", [("plain", 0), ("chain", 3072), ("fused", 8192),
                                     ("split", 8192), ("backward", 2048)])
@pytest.mark.slow
def test_interrupted_launch_really_stops(kind, T):
    """Ctrl-C at 0.5 s: the launch stops (no helper thread left, nothing written after),
    and the next launch runs at once instead of racing the interrupted one."""
    import json

    proc = _child(INTERRUPTED.format(slow=SLOW, T=max(T, 64), kind=kind), timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    print(kind, seen)
    assert seen["status"] == "dihentikan", f"ubah ukuran: peluncuran harus lama tanpa Ctrl-C ({seen})"
    assert seen["running"] == [], seen
    assert not seen["written_after"], seen
    assert seen["follow_up"] < 1.0, seen
    assert seen["stopped"] < 0.5 + 2.0, seen


@pytest.mark.parametrize("call", [
    lambda: kernels.scores(np.zeros((20000, 64), np.float32), np.zeros((20000, 64), np.float32),
                           backend="cpu"),
    lambda: kernels.attention(*(np.zeros((200000, 64), np.float32),) * 3, impl="fused-v1",
                              backend="cpu"),
    lambda: kernels.attention(*(np.zeros((12, 4096, 64), np.float32),) * 3, backend="cpu"),
], ids=["scores-T20000", "fused-T200000", "chain-12x4096"])
def test_work_beyond_the_cpu_budget_is_refused(no_launch, call, monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda kind="numpy": float("inf"))
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert "emulasi CPU" in message and "backend='cupy'" in message and "kecilkan T" in message
    assert re.search(r"kira-kira [\d,]+ (detik|menit|jam) di sini", message), message
    assert "attention_blocked" in message


def test_budget_can_be_raised(no_launch, monkeypatch):
    monkeypatch.setenv("ATENSI_CPU_BUDGET", "1e13")
    monkeypatch.setattr(memory, "available_memory", lambda kind="numpy": float("inf"))
    Q = np.zeros((20000, 64), np.float32)
    with pytest.raises(AssertionError, match="diluncurkan"):  # reaches the (trapped) launch
        kernels.scores(Q, Q, backend="cpu")


def test_huge_grid_is_refused_before_it_runs():
    kernel = RawModule(SLOW, path="slow.cu").get_function("slow")
    out = np.zeros(1, np.float32)
    with pytest.raises(LaunchConfigError, match=r"terlalu banyak.*backend='cupy'"):
        kernel((2**31 - 1, 65535, 1), (1024,), (out, np.int32(1)))


# ---- fiber stacks, error text ---------------------------------------------------------------

BIG_STACK = """
extern "C" __global__ void big(float* out, int n) {
  float local[100000];  // 400 KB: more than a 256 KB fiber stack
  for (int i = 0; i < n; ++i) local[i] = out[i % 4] + i;
  out[threadIdx.x] = local[n - 1 - threadIdx.x];
}
"""


@pytest.mark.slow
def test_kernel_with_too_big_local_arrays_is_refused_not_crashing():
    proc = _child(f"""
        import numpy as np
        from atensi.cudacpu import RawModule, CudaCpuError
        code = {BIG_STACK!r}
        try:
            k = RawModule(code, path="big.cu").get_function("big")
            out = np.zeros(4, np.float32)
            k((1,), (4,), (out, np.int32(100000)))
        except CudaCpuError as err:
            print("DITOLAK", err)
        else:
            print("BERJALAN")
    """)
    assert proc.returncode == 0, f"proses anak mati (kode {proc.returncode}): {proc.stderr[-1500:]}"
    assert "DITOLAK" in proc.stdout and "stack" in proc.stdout and "KiB" in proc.stdout, proc.stdout


@pytest.mark.slow
def test_small_local_arrays_still_compile():
    code = BIG_STACK.replace("100000", "1000")
    k = RawModule(code, path="small.cu").get_function("big")
    out = np.zeros(4, np.float32)
    k((1,), (4,), (out, np.int32(1000)))


DEADLOCK = """
extern "C" __global__ void stuck(float* x) {
  if (threadIdx.x == 0) __syncthreads();
  x[threadIdx.x] = 1.0f;
}
"""


@pytest.mark.slow
def test_concurrent_failing_launches_keep_their_error_text():
    kernel = RawModule(DEADLOCK, path="stuck.cu").get_function("stuck")

    def launch(_):
        x = np.zeros(64, np.float32)
        try:
            kernel((1,), (64,), (x,))
        except BarrierDeadlockError as err:
            return str(err)
        return "tidak ada kesalahan"

    with ThreadPoolExecutor(8) as pool:
        messages = list(pool.map(launch, range(300)))
    empty = [m for m in messages if "stuck" not in m]
    assert not empty, f"{len(empty)} dari 300 pesan kosong/hilang"


def test_cancelled_flag_does_not_leak_into_other_modules():
    """A CudaCpuError from a failed launch is not mistaken for a cancel."""
    kernel = RawModule(DEADLOCK, path="stuck.cu").get_function("stuck")
    with pytest.raises(CudaCpuError, match="__syncthreads"):
        kernel((1,), (64,), (np.zeros(64, np.float32),))


def _record_allocations_and_launches(monkeypatch):
    """Events in order: ("alloc", shape) for every output buffer, ("launch", name)."""
    events = []
    real_empty = kernels.arrays.empty
    real_get = kernels.loading.get_function

    def empty(shape, backend):
        events.append(("alloc", tuple(shape)))
        return real_empty(shape, backend)

    def get_function(file, name, backend):
        kernel = real_get(file, name, backend)

        def run(grid, block, args, shared_mem=0):
            events.append(("launch", name))
            return kernel(grid, block, args, shared_mem=shared_mem)

        return run

    monkeypatch.setattr(kernels.arrays, "empty", empty)
    monkeypatch.setattr(kernels.loading, "get_function", get_function)
    return events


@pytest.mark.parametrize("call", [
    lambda Q, K, V, dO: kernels.attention(Q, K, V, impl="chain-v1", backend="cpu"),
    lambda Q, K, V, dO: kernels.attention(Q, K, V, impl="chain-v3", backend="cpu"),
    lambda Q, K, V, dO: kernels.attention(Q, K, V, impl="fused-v1", backend="cpu"),
    lambda Q, K, V, dO: kernels.attention(Q, K, V, impl="fused-v2", splits=3,
                                          backend="cpu"),
    lambda Q, K, V, dO: kernels.attention_backward(Q, K, V, dO, backend="cpu"),
    lambda Q, K, V, dO: kernels.attention_backward(
        Q, K, V, dO, backend="cpu",
        lse=reference.attention_blocked(Q, K, V, return_lse=True)[1].astype(np.float32)),
], ids=["chain-v1", "chain-v3", "fused-v1", "fused-v2-split", "backward", "backward-lse"])
def test_every_output_is_allocated_before_the_first_launch(call, monkeypatch):
    """A MemoryError must come before minutes of emulated work, never between launches."""
    Q, K, V, dO = (rand(2, 9, 5) for _ in range(4))
    events = _record_allocations_and_launches(monkeypatch)
    call(Q, K, V, dO)
    kinds = [kind for kind, _ in events]
    assert "launch" in kinds and "alloc" in kinds, events
    first_launch = kinds.index("launch")
    assert "alloc" not in kinds[first_launch:], events


def _column(n):
    """(n, 1) float32: d_k = 1, where work per (i, j) pair is most underestimated."""
    return RNG.standard_normal((n, 1)).astype(np.float32)


BUDGET_SWEEP = {
    "scores": lambda n: kernels.scores(_column(n), _column(n), backend="cpu"),
    "chain": lambda n: kernels.attention(_column(n), _column(n), _column(n), backend="cpu"),
    "fused-v1": lambda n: kernels.attention(_column(n), _column(n), _column(n), impl="fused-v1",
                                            causal=False, backend="cpu"),
    "fused-v2": lambda n: kernels.attention(_column(n), _column(n), _column(n), impl="fused-v2", splits=1, backend="cpu"),
    "fused-v3": lambda n: kernels.attention(_column(n), _column(n), _column(n), impl="fused-v3", backend="cpu"),
    "split-K": lambda n: kernels.attention(_column(1), _column(1), _column(1), impl="fused-v2", splits=n, backend="cpu"),
    "backward": lambda n: kernels.attention_backward(*(_column(n) for _ in range(4)),
                                                     backend="cpu"),
}


def _largest_accepted(call, monkeypatch) -> int:
    """The largest size n (T, or splits) that passes every check, found without launching."""
    def accepted(n):
        with monkeypatch.context() as m:
            kc.forbid_launches(m)
            try:
                call(n)
            except AssertionError:
                return True  # reached the trapped launch
            except ValueError as error:
                assert "emulasi CPU" in str(error), error
                return False
        raise AssertionError("tanpa peluncuran dan tanpa penolakan")

    low, high = 1, 2
    while accepted(high):
        low, high = high, high * 2
        assert high <= 65535, "anggaran tidak pernah menolak"
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if accepted(middle) else (low, middle)
    return low


@pytest.mark.parametrize("path", BUDGET_SWEEP)
def test_accepted_emulated_launches_finish_within_their_budget(path, monkeypatch):
    """The largest launch the budget accepts takes at most the budget's time (slack for a
    busy machine), at d_k = 1 where each (i, j) pair costs more than its multiply-add."""
    budget = 2e7
    monkeypatch.setenv("ATENSI_CPU_BUDGET", str(budget))
    seconds = budget / limits.CPU_OPS_PER_SECOND
    call = BUDGET_SWEEP[path]
    n = _largest_accepted(call, monkeypatch)
    call(2)  # compiles and loads the kernels: not part of the work
    start, cpu_start = time.perf_counter(), time.process_time()
    call(n)
    # Wall time grows when other programs (or another test worker) share the
    # cores, CPU time when the emulator runs threads side by side: the smaller
    # of the two is this launch's own cost.
    elapsed = min(time.perf_counter() - start, time.process_time() - cpu_start)
    assert elapsed <= 4 * seconds + 0.5, (n, elapsed)


def test_a_refusal_says_how_long_and_what_to_do(no_launch, monkeypatch):
    monkeypatch.setenv("ATENSI_CPU_BUDGET", "1e9")
    Q = np.zeros((1, 4), np.float32)
    with pytest.raises(ValueError) as info:
        kernels.attention(Q, Q, Q, impl="fused-v2", splits=65535, backend="cpu")
    message = str(info.value)
    assert re.search(r"kira-kira [\d,]+ (detik|menit|jam) di sini", message), message
    assert "backend='cupy'" in message and "attention_blocked" in message



@pytest.mark.parametrize("impl", ["fused-v2", "fused-v3"])
def test_a_refusal_caused_by_splits_names_splits(no_launch, impl, monkeypatch):
    """At T = 64 the pairs are cheap; 65535 split blocks per head are what costs."""
    Q = np.ones((2, 64, 16), np.float32)
    with pytest.raises(ValueError, match=r"splits=65535\) terlalu besar.*Kecilkan 'splits'"):
        kernels.attention(Q, Q, Q, impl=impl, splits=65535, backend="cpu")
    # Work from the heads themselves is not blamed on splits.
    monkeypatch.setenv("ATENSI_CPU_BUDGET", "1e5")
    with pytest.raises(ValueError) as info:
        kernels.attention(Q, Q, Q, impl=impl, splits=1, backend="cpu")
    assert "splits" not in str(info.value)


# --- the public launchers refuse what they cannot launch, before any launch ---------

CPU = "cpu"


def _split_v2_d32():
    return kernels.launch.fused_kernel("v2", 32, split=True)


def _qkv(T=40, d_k=32, lead=(2,)):
    return rand(*lead, T, d_k), rand(*lead, T, d_k), rand(*lead, T, d_k)


@pytest.mark.parametrize("change, match", [
    (lambda q, k, v: (rand(2, 40, 128), rand(2, 40, 128), rand(2, 40, 128)),
     r"d_k = 128 .*melebihi lebar kernel attention_fused_v2_split_d32 \(D = 32\).*"
     r"fused_kernel\('v2', 128, split=True\)"),
    (lambda q, k, v: (q, k[:, :30].copy(), v[:, :30].copy()), r"Argumen 'Kd' harus berbentuk .*\(2, 40, 32\).*"
     r"\(2, 30, 32\).*melewati ujungnya"),
    (lambda q, k, v: (q, k, v[:, :20].copy()), r"Argumen 'Vd' harus berbentuk"),
], ids=["d_k-128-di-kernel-d32", "K-lebih-pendek", "V-lebih-pendek"])
def test_partials_refuse_what_the_split_kernel_cannot_read(no_launch, change, match):
    Q, K, V = change(*_qkv())
    with pytest.raises(ValueError, match=match):
        kernels.launch.launch_partials(_split_v2_d32(), Q, K, V, 2, causal=False, scale=True,
                                       backend=CPU)


@pytest.mark.parametrize("splits, error, match", [
    (0, ValueError, r"Argumen 'splits' harus bilangan bulat 1 sampai"),
    (-1, ValueError, r"Argumen 'splits' harus bilangan bulat 1 sampai"),
    ("2", TypeError, r"Argumen 'splits' harus bilangan bulat \(int\)"),
])
def test_partials_name_a_bad_splits(no_launch, splits, error, match):
    with pytest.raises(error, match=match):
        kernels.launch.launch_partials(_split_v2_d32(), *_qkv(), splits, causal=False,
                                       scale=True, backend=CPU)


@pytest.mark.parametrize("k, error, match", [
    ("attention_fused_v2_split_d32", TypeError, r"Argumen 'k' harus entri registri kernel"),
    (None, TypeError, r"Argumen 'k' harus entri registri kernel"),
    (kernels.launch.fused_kernel("v2", 32), ValueError,
     r"Argumen 'k' harus lintasan split-K .*attention_fused_v2_d32"),
], ids=["nama", "None", "bukan-split"])
def test_partials_need_a_split_entry_of_the_registry(no_launch, k, error, match):
    with pytest.raises(error, match=match):
        kernels.launch.launch_partials(k, *_qkv(), 2, causal=False, scale=True, backend=CPU)


def _partials():
    Q, K, V = _qkv()
    return kernels.launch.launch_partials(_split_v2_d32(), Q, K, V, 3, causal=True, scale=True,
                                          backend=CPU)


def test_combine_refuses_outputs_and_ml_of_another_shape():
    Op, ML = _partials()
    combine = _split_v2_d32().combine
    cases = [
        (Op, ML[:, :, :20].copy(), np.empty((2, 40, 32), np.float32), r"Argumen 'ML' harus berbentuk"),
        (Op, ML[:2].copy(), np.empty((2, 40, 32), np.float32), r"Argumen 'ML' harus berbentuk"),
        (Op, ML, np.full((4, 40, 32), 7, np.float32), r"Argumen 'Od' harus berbentuk .*2 baris depan"),
        (Op, ML, np.empty((1, 40, 32), np.float32), r"Argumen 'Od' harus berbentuk"),
        (Op[0], ML, np.empty((2, 40, 32), np.float32), r"Argumen 'Op' harus berdimensi 4"),
    ]
    for op, ml, od, match in cases:
        with pytest.raises(ValueError, match=match):
            kernels.launch.launch_combine(combine, op, ml, od, backend=CPU)
    with pytest.raises(ValueError, match=r"Argumen 'name' harus nama kernel penggabung"):
        kernels.launch.launch_combine("attention_fused_v2_d32", Op, ML, np.empty((2, 40, 32), np.float32),
                                      backend=CPU)
    # The right shapes still combine to attention.
    Od = np.empty((2, 40, 32), np.float32)
    kernels.launch.launch_combine(combine, Op, ML, Od, backend=CPU)
    assert np.isfinite(Od).all() and np.abs(Od).max() < 10


def test_combine_into_a_smaller_output_is_refused_not_a_crash():
    """It wrote past the end of Od: run in a child, so a crash fails the test."""
    run = _child("""
        import numpy as np
        from atensi.kernels import launch
        rng = np.random.default_rng(0)
        Q, K, V = (rng.standard_normal((2, 40, 32)).astype(np.float32) for _ in range(3))
        k = launch.fused_kernel("v2", 32, split=True)
        Op, ML = launch.launch_partials(k, Q, K, V, 3, causal=True, scale=True, backend="cpu")
        try:
            launch.launch_combine(k.combine, Op, ML, np.empty((1, 2, 32), np.float32), backend="cpu")
        except ValueError as err:
            print("DITOLAK", err)
    """)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "DITOLAK Argumen 'Od' harus berbentuk (..., T, d_k) = (..., 40, 32)" in run.stdout


def test_causal_mask_launcher_refuses_a_smaller_output(no_launch):
    S = rand(2, 16, 16)
    for Od, name in ((np.empty((2, 8, 8), np.float32), "Od"), (np.empty((1, 16, 16), np.float32), "Od")):
        with pytest.raises(ValueError, match=rf"Argumen '{name}' harus berisi H · T · T = 2 · 16 · 16"):
            kernels.launch.launch_causal_mask(S, Od, 2, 16, backend=CPU)
    with pytest.raises(ValueError, match=r"Argumen 'Sd' harus berisi"):
        kernels.launch.launch_causal_mask(S[:1].copy(), np.empty_like(S), 2, 16, backend=CPU)
    with pytest.raises(TypeError, match=r"Argumen 'T' harus bilangan bulat"):
        kernels.launch.launch_causal_mask(S, np.empty_like(S), 2, 16.0, backend=CPU)
