"""Metode yang diukur dan preset ukurannya.

``METHODS``: setiap cara menghitung attention kausal yang sama (NumPy naif,
berubin dan cepat, PyTorch, rantai *kernel* dan *fused kernel* di CPU atau GPU,
CuPy cuBLAS). ``PRESETS``: bentuk (B, T) dan jumlah ulangan per preset.
``_callable(key, Q, K, V)`` memberi fungsi tanpa argumen yang menjalankan
satu metode; ``flops`` menghitung FLOP bergunanya.
"""

from __future__ import annotations

from dataclasses import dataclass

from atensi import cpu_fast, reference
from atensi.kernels import launch

H, D_K = 12, 64  # ANDREA-120M: 12 heads of d_k = 64
ANDREA_T = 1024


@dataclass(frozen=True)
class Method:
    key: str
    label: str
    device: str  # "cpu" or "gpu"
    square: bool  # allocates (B, H, T, T) arrays: skipped when those would not fit


METHODS = {
    m.key: m
    for m in (
        Method("numpy_naive", "NumPy naif (reference.attention)", "cpu", True),
        Method("numpy_blocked", "NumPy berubin (attention_blocked)", "cpu", False),
        Method("numpy_fast", "NumPy cepat (attention_cpu_fast)", "cpu", False),
        Method("torch_sdpa_cpu", "PyTorch scaled_dot_product_attention (CPU)", "cpu", False),
        Method("cpu_chain_v2", "rantai kernel v2, emulasi CPU", "cpu", True),
        Method("cpu_fused", "fused kernel, emulasi CPU", "cpu", False),
        Method("gpu_chain_v1", "rantai kernel v1 (GPU)", "gpu", True),
        Method("gpu_chain_v2", "rantai kernel v2, terbaik (GPU)", "gpu", True),
        Method("gpu_chain_v3", "rantai kernel v3: softmax dan jumlah V melewati masa depan (GPU)",
               "gpu", True),
        Method("gpu_fused", "fused kernel (GPU)", "gpu", False),
        Method("gpu_fused_v2", "fused kernel v2, struktur FlashAttention-2 (GPU)", "gpu", False),
        Method("gpu_fused_v2_s1", "fused kernel v2 tanpa split-K, splits = 1 (GPU)", "gpu",
               False),
        Method("cupy_cublas", "CuPy cuBLAS (cp.matmul + elementwise)", "gpu", True),
        # On sm_80+ its float32 path runs the GEMMs on tensor cores with a
        # 3xTF32 split (FP32-accurate, whatever allow_tf32 says): it is not a
        # CUDA-core FP32 baseline, and the label says so.
        Method("torch_sdpa", "PyTorch scaled_dot_product_attention (GPU: tensor core, 3xTF32)",
               "gpu", False),
    )
}


@dataclass(frozen=True)
class Preset:
    sweep: tuple  # T values at B = 1
    batches: tuple  # larger B values, at T = batch_T
    emulation_T: tuple  # T values for the CPU-emulation rows (slow: small T only)
    repeats: int  # timed runs on the CPU (median of these)
    gpu_repeats: int
    max_seconds: float  # stop repeating a CPU measurement after this long
    max_square_bytes: int  # skip a "square" CPU method whose (B, H, T, T) array is larger
    gpu_sweep: tuple = (256, 512, 1024, 2048, 4096, 8192)  # the GPU is fast enough for all
    batch_T: int = ANDREA_T


PRESETS = {
    # For the book build: a few seconds on a 2-core CPU. max_seconds = 1: the
    # emulated kernel chain (about 1 s a call at T = 256) is timed once after its
    # traced warm-up run; the NumPy rows still get their 3 repeats.
    "book": Preset((256, 512, 1024), (), (256,), 3, 20, 1.0, 2**30),
    "quick": Preset((256, 512, 1024, 2048), (8,), (256,), 3, 20, 3.0, 2**30),
    "full": Preset((256, 512, 1024, 2048, 4096, 8192), (8,), (256,), 7, 100, 30.0, 2**30),
    # For the tests: every kind of row, in about a second.
    "tiny": Preset((256,), (2,), (32,), 1, 2, 1.0, 2**30, gpu_sweep=(256,), batch_T=48),
}


def flops(B, T, d_k=D_K, heads=H, *, causal=True):
    """FLOP berguna satu attention: 2·T²·d untuk Q Kᵀ, 2·T²·d untuk A V, per head."""
    total = 4 * B * heads * T * T * d_k
    return total / 2 if causal else total


def _torch():
    """PyTorch when importable (optional, never a dependency of atensi)."""
    try:
        import torch
    except Exception:
        return None
    return torch


def _chain(Qd, Kd, Vd, version, backend):
    """The kernel chain scores → softmax → weighted_sum, launched without the
    per-call validation of kernels.attention (inputs are known good here), so
    the GPU rows time the kernels and nothing else."""
    return launch.launch_attention(Qd, Kd, Vd, impl=f"chain-{version}", causal=True,
                                   scale=True, backend=backend)


def _fused(Qd, Kd, Vd, backend, version="v1", splits=None):
    return launch.launch_fused(Qd, Kd, Vd, causal=True, scale=True, backend=backend,
                               version=version, splits=splits)


def _callable(key, Q, K, V):
    """A zero-argument function computing causal attention with method ``key``."""
    if key == "numpy_naive":
        return lambda: reference.attention(Q, K, V)
    if key == "numpy_blocked":
        return lambda: reference.attention_blocked(Q, K, V)
    if key == "numpy_fast":
        return lambda: cpu_fast.attention_cpu_fast(Q, K, V)
    if key == "torch_sdpa_cpu":  # same threads as numpy_fast
        return cpu_fast.torch_sdpa_cpu(Q, K, V)
    if key == "cpu_chain_v2":
        return lambda: _chain(Q, K, V, "v2", "cpu")
    if key == "cpu_fused":
        return lambda: _fused(Q, K, V, "cpu")
    if key == "gpu_chain_v1":
        return lambda: _chain(Q, K, V, "v1", "cupy")
    if key == "gpu_chain_v2":
        return lambda: _chain(Q, K, V, "v2", "cupy")
    if key == "gpu_chain_v3":
        return lambda: _chain(Q, K, V, "v3", "cupy")
    if key == "gpu_fused":
        return lambda: _fused(Q, K, V, "cupy")
    if key == "gpu_fused_v2":  # splits=None: split-K when B·H·T is small
        return lambda: _fused(Q, K, V, "cupy", "v2")
    if key == "gpu_fused_v2_s1":
        return lambda: _fused(Q, K, V, "cupy", "v2", splits=1)
    if key == "cupy_cublas":
        return lambda: reference.attention(Q, K, V)  # cp.matmul + CuPy elementwise
    if key == "torch_sdpa":
        torch = _torch()
        q, k, v = (torch.from_dlpack(x) for x in (Q, K, V))
        sdpa = torch.nn.functional.scaled_dot_product_attention
        # Plain TF32 off for any cuBLAS path; the memory-efficient SDPA kernel
        # still uses 3xTF32 tensor-core GEMMs on float32, independent of this.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        return lambda: sdpa(q, k, v, is_causal=True)
    raise ValueError(f"Metode tidak dikenal: {key!r}. Pilihan: {', '.join(METHODS)}.")


def _torch_gpu_ok():
    torch = _torch()
    try:
        return torch is not None and torch.cuda.is_available()
    except Exception:
        return False
