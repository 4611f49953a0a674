"""Hitungan profiler setiap kernel registri di emulator, dan batas kecepatan dari hitungan itu.

    run(names=None, T=128)          {kernel: (metrik, tempat akses)} dari atensi.cudacpu.profile()
    bound(kernel, metrics, T, d)    Bound: waktu terbaik per sumber daya di H200 dan yang mengikat
    table(names=None, T=128)        teks untuk ``python -m atensi.kernels --profil [NAMA]``

Setiap kernel dijalankan lewat fungsi publiknya (``kernels.attention``,
``kernels.softmax`` ...) dengan ``backend="cpu"`` pada satu *head* kecil
(T baris, d_k = lebar varian atau 64), di dalam :func:`atensi.cudacpu.profile`.
Hitungannya dihitung dari jalannya kernel di emulator; batasnya adalah model:

* FP32 (CUDA core): FFMA, FMUL dan FADD per *lane*, 128 *lane* FP32 per SM per siklus (sm_90);
* MUFU (``exp2f``, pembagian, akar): 16 per SM per siklus;
* *shared memory*: satu *wavefront* per SM per siklus (32 bank x 4 bita);
* L1 (memori global lewat L1): empat sektor 32 bita per SM per siklus (128 bita);
* *tensor core*: FLOP ``wmma::mma_sync`` (2·16·16·8 per panggilan) terhadap puncak TF32 padat;
* DRAM: setiap array masukan dan keluaran dibaca atau ditulis sekali, terhadap *bandwidth* HBM.

Setiap laju dikalikan jumlah SM, jadi batasnya berlaku bila ada cukup *block*
untuk semua SM (B·H·T besar, seperti di bab Kinerja). Waktu terbaik adalah yang
terbesar dari kelimanya; sumber daya itulah yang mengikat. Latensi, okupansi
yang kurang, dan instruksi alamat tidak dihitung, jadi kernel sungguhan lebih
lambat dari batas ini, tidak pernah lebih cepat.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from atensi import hardware
from atensi.kernels import registry

FP32_LANES_PER_SM = 128   # sm_90: 4 schedulers x 32 FP32 lanes
MUFU_PER_SM = 16          # special-function results per SM per cycle (sm_80, sm_90)
WAVEFRONTS_PER_SM = 1     # one 128-byte shared-memory wavefront per SM per cycle
SECTORS_PER_SM = 4        # L1: 128 bytes of global sectors per SM per cycle
WMMA_FLOP = 2 * 16 * 16 * 8  # one wmma::mma_sync m16n16k8
RESOURCES = ("FP32", "MUFU", "shared memory", "L1", "tensor core", "DRAM")

FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
FMUL = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"
FADD = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
MUFU = "smsp__sass_thread_inst_executed_op_mufu_pred_on.sum"
WAVES = ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
         "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")
MMA = "smsp__inst_executed_op_wmma_mma_sync.sum"
SECTORS = tuple(f"l1tex__t_sectors_pipe_lsu_mem_global_op_{op}.sum" for op in ("ld", "st", "ldgsts"))


def clock(gpu: hardware.GPU = hardware.H200) -> float:
    """SM clock (Hz) implied by the FP32 peak: peak = SMs x 128 lanes x 2 FLOP x clock."""
    return gpu.fp32_flops / (gpu.sm_count * FP32_LANES_PER_SM * 2)


@dataclass(frozen=True)
class Bound:
    """Best-case seconds per resource for one launch, and which one binds."""

    kernel: str
    seconds: dict          # resource -> seconds
    useful_flops: float    # the registry's model of the work (FLOP)
    gpu: hardware.GPU

    @property
    def binding(self) -> str:
        return max(self.seconds, key=self.seconds.get)

    @property
    def best_seconds(self) -> float:
        return max(self.seconds.values())

    @property
    def tflops(self) -> float:
        """Useful TFLOP/s at the bound."""
        return self.useful_flops / self.best_seconds / 1e12

    @property
    def fp32_share(self) -> float:
        """The bound as a share of the FP32 (CUDA core) peak."""
        return self.useful_flops / self.best_seconds / self.gpu.fp32_flops


def bound(kernel: str, metrics: dict, T: int, d: int, *, N: int = 1, causal: bool = False,
          array_bytes: float | None = None, gpu: hardware.GPU = hardware.H200) -> Bound:
    """The bound of one launch from its counts (see the module docstring)."""
    k = registry.get(kernel)
    f, sms = clock(gpu), gpu.sm_count
    lanes = metrics.get(FFMA, 0) + metrics.get(FMUL, 0) + metrics.get(FADD, 0)
    if k.model is None and k.step == "fused" and k.width:
        k = registry.variant("attention_fused_v2", k.width)  # the same work: Q Kᵀ and P V
    model = k.model(N, T, d, causal) if k.model is not None else None
    dram = array_bytes if array_bytes is not None else (model.bytes if model else 0.0)
    seconds = {
        "FP32": lanes / (sms * FP32_LANES_PER_SM * f),
        "MUFU": metrics.get(MUFU, 0) / (sms * MUFU_PER_SM * f),
        "shared memory": sum(metrics.get(w, 0) for w in WAVES) / (sms * WAVEFRONTS_PER_SM * f),
        "L1": sum(metrics.get(x, 0) for x in SECTORS) / (sms * SECTORS_PER_SM * f),
        "tensor core": metrics.get(MMA, 0) * WMMA_FLOP / gpu.tf32_flops,
        "DRAM": dram / gpu.bandwidth,
    }
    useful = model.flops if model else 2.0 * metrics.get(FFMA, 0)
    return Bound(kernel, seconds, useful, gpu)


def scaled_bound(kernel: str, metrics: dict, *, T_run: int, T: int, d: int, N: int = 1,
                 causal: bool = False, gpu: hardware.GPU = hardware.H200) -> Bound:
    """The bound at N heads of length T from counts of one head of length T_run.

    Model: an attention kernel's work per head grows with T² (every query meets
    every key tile), so every count is multiplied by N·(T/T_run)²; DRAM bytes come
    from the registry's model at the large size.
    """
    factor = N * (T / T_run) ** 2
    scaled = {m: v * factor for m, v in metrics.items() if not m.endswith((".ratio", ".pct"))}
    return bound(kernel, scaled, T, d, N=N, causal=causal, gpu=gpu)


def _inputs(T: int, d: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((T, d)).astype(np.float32) for _ in range(3)]


def _call(k: registry.Kernel, T: int, d: int) -> None:
    """Launch ``k`` through its public function (with the kernels it needs around it)."""
    from atensi import kernels

    Q, K, V = _inputs(T, d)
    S = (Q @ K.T / np.sqrt(d)).astype(np.float32)
    A = np.exp(S - S.max(axis=1, keepdims=True))
    A = (A / A.sum(axis=1, keepdims=True)).astype(np.float32)
    cpu = {"backend": "cpu"}
    if k.step == "fused" or k.name == "attention_fused_v2_combine":
        version = k.version or "v2"
        kw = {"splits": 2 if (k.split or k.combine is None and k.step is None) else 1}
        if k.precision:
            kw["precision"] = k.precision
        if f"fused-{version}" == "fused-v1":
            kw.pop("splits")
        kernels.attention(Q, K, V, causal=k.causal, impl=f"fused-{version}", **kw, **cpu)
    elif k.step == "scores":
        kernels.scores(Q, K, causal=k.causal, version=k.version, **cpu)
    elif k.step == "causal_mask":
        kernels.causal_mask(S, version=k.version, **cpu)
    elif k.step == "softmax":
        kernels.softmax(S, causal=k.causal, version=k.version, **cpu)
    elif k.step == "weighted_sum":
        kernels.weighted_sum(A, V, causal=k.causal, version=k.version, **cpu)
    elif k.step == "rope":
        kernels.rope(Q, version=k.version, **cpu)
    else:  # the backward kernels run as one chain
        from atensi.kernels.backward import attention_backward

        # With the forward's log-sum-exp the weights come from exp(S - lse) (its own kernel).
        lse = None
        if k.name == "attention_weights_from_lse_v1":
            S64 = S.astype(np.float64)
            top = S64.max(axis=1, keepdims=True)
            lse = (top[:, 0] + np.log(np.exp(S64 - top).sum(axis=1))).astype(np.float32)
        attention_backward(Q, K, V, np.ones_like(Q), causal=False, lse=lse, **cpu)


def _d_for(k: registry.Kernel, d: int | None) -> int:
    return d if d is not None else (k.width or 64)


def run(names=None, *, T: int = 128, d: int | None = None) -> dict:
    """{kernel: (metrics, sites)} for the named registry kernels (all when None)."""
    from atensi.cudacpu import profile

    names = list(names) if names else [k.name for k in registry.KERNELS]
    for name in names:
        registry.get(name)  # an unknown name is refused before anything runs
    out = {}
    for name in names:
        k = registry.get(name)
        with profile() as prof:
            _call(k, T, _d_for(k, d))
        if name not in prof.kernels:
            raise RuntimeError(f"Kernel '{name}' tidak diluncurkan oleh fungsi publiknya pada T = {T}.")
        out[name] = (prof.kernels[name], [s for s in prof.sites if s.kernel == name])
    return out


OCCUPANCY_ARCHS = ("sm_75", "sm_80", "sm_86", "sm_90")


def occupancy(name: str, archs=OCCUPANCY_ARCHS) -> dict:
    """{arch: theoretical occupancy} of a registry kernel, from ptxas (NVRTC) and
    ``hardware``'s limits (``sm__maximum_warps_per_active_cycle_pct`` / 100); {} without
    NVRTC. An architecture the kernel cannot be compiled for is left out."""
    from atensi.kernels.compiling import compile_report
    from atensi.kernels.loading import kernel_path

    k = registry.get(name)
    out = {}
    for arch in archs:
        try:
            res = compile_report(kernel_path(k.file), arch=arch).kernels.get(name)
        except Exception:  # NVRTC missing, or a kernel this architecture cannot build
            continue
        if res is not None:
            out[arch] = res.occupancy
    return out


def _fmt(v: float) -> str:
    return f"{v:,.0f}".replace(",", ".") if float(v).is_integer() else f"{v:.2f}".replace(".", ",")


def table(names=None, *, T: int = 128, d: int | None = None, gpu: hardware.GPU = hardware.H200) -> str:
    """Per kernel: its counts (Nsight Compute names), per site with file:line, and its bound."""
    lines = []
    for name, (metrics, sites) in run(names, T=T, d=d).items():
        k = registry.get(name)
        dk = _d_for(k, d)
        lines.append(f"== {name} ({k.file}), T = {T}, d_k = {dk}, satu head; dihitung dari jalannya "
                     "kernel di emulator ==")
        for metric in sorted(metrics):
            lines.append(f"  {metric:<62} {_fmt(metrics[metric])}")
        lines.append("  per tempat akses:")
        for s in sites:
            lines.append(f"    {s.file}:{s.line:<5} {s.metric:<62} {_fmt(s.value)}")
        b = bound(name, metrics, T, dk, causal=k.causal, gpu=gpu)
        parts = ", ".join(f"{r} {b.seconds[r] * 1e9:.1f} ns".replace(".", ",") for r in RESOURCES)
        lines.append(f"  batas (model, {gpu.name}, semua SM terisi): {parts}")
        lines.append(f"  yang mengikat: {b.binding}; paling cepat {b.tflops:.1f} TFLOP/s".replace(".", ",")
                     + f" = {100 * b.fp32_share:.0f} % puncak FP32".replace(".", ","))
        occ = occupancy(name)
        if occ:
            lines.append("  okupansi teoretis (ptxas, sm__maximum_warps_per_active_cycle_pct): "
                         + ", ".join(f"{a} {100 * o:.0f} %" for a, o in occ.items()))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
