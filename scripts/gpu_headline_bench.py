"""Ukuran utama di GPU, fakta kartunya, dan lintasan ncu: yang diukur scripts/gpu_check.sh.

    python scripts/gpu_headline_bench.py OUT.json [--T 1024 4096]
    python scripts/gpu_headline_bench.py --fakta FAKTA.json
    python scripts/gpu_headline_bench.py --ncu PATH_NCU NCU.json

**Waktu kernel, bukan waktu API.** ``kernels.attention`` memeriksa masukannya
dulu (bentuk, NaN, batas float32), dan pemeriksaan itu menunggu GPU beberapa
kali per panggilan, sebesar satu kernel v2 di T = 1024; torch tidak membayar
itu. Jadi setiap baris dipanggil sekali lewat API publik (periksa dan bandingkan
hasilnya), lalu yang diukur adalah peluncurnya (``atensi.kernels.launch``)
dengan array yang sama: pemanasan paling sedikit ``WARMUP_MS`` ms, lalu
``REPEATS`` ulangan bergantian dengan torch SDPA (A, B, lalu B, A pada ulangan
berikutnya), masing-masing diukur dengan event CUDA di stream bawaan yang
juga dipakai torch. Setiap baris mencatat median, min, maks, median torch dari
ulangan yang sama, clock SM saat itu (nvidia-smi) dan kartunya.

Baris: fused v1, fused v2 (tanpa split dan dengan split), fused v3 di tensor
core (TF32 dan 3xTF32), rantai v2 (empat kernel), cuBLAS + softmax CuPy, dan
torch SDPA dengan masukan float32. Baris torch diberi label apa adanya: GEMM-nya
berjalan di tensor core dengan pembagian 3xTF32, bukan FP32 CUDA-core. TFLOP/s
dari FLOP berguna 4·B·H·T²·d_k / 2 (kausal) dan bagian dari puncak FP32
perangkat (2 × jalur FP32 per SM × jumlah SM × clock atribut perangkat).
Berkas JSON ditulis ulang setelah setiap baris.

``--fakta``: kartu, clock (atribut perangkat dan nvidia-smi), *bandwidth* dari
salinan device-ke-device, dan roofline tiap kernel registri di ukuran utama
dengan *bandwidth* yang diukur itu (bukan angka tabel kartu lain).

``--ncu``: Nsight Compute pada fused v2 d64, v3 TF32 dan v3 3xTF32 di
(8, 12, 1024, 64), tanpa mask kausal, mengumpulkan metrik yang diramalkan
emulator (:mod:`atensi.kernels.profil`); hasilnya terukur dan ramalan
berdampingan, per nama metrik.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import subprocess
import sys
import time

B, H, D_K = 8, 12, 64
WARMUP_MS = 100.0  # at least this much GPU time per row before the repeats
REPEATS = 20
TORCH_ROW = "torch SDPA float32 (tensor core, 3xTF32; bukan FP32 CUDA-core)"
COPY_BYTES = 1 << 30
NCU_T = 1024
NCU_TIMEOUT_S = 35  # of the ncu step's 50 s; the rest is the emulator's prediction
NCU_KERNELS = {  # ncu target → (impl, precision)
    "attention_fused_v2_d64": ("fused-v2", None),
    "attention_tensorcore_tf32_d64": ("fused-v3", "tf32"),
    "attention_tensorcore_3xtf32_d64": ("fused-v3", "3xtf32"),
}
NCU_METRICS = (
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_mufu_pred_on.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "smsp__sass_average_branch_targets_threads_uniform.pct",
)


# --- Timing ------------------------------------------------------------------------


def _event_ms(fn, cp) -> float:
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop)


def warm_up(fn, cp, ms: float = WARMUP_MS) -> tuple[float, int]:
    """Run ``fn`` until it has kept the GPU busy for ``ms`` (clocks up, caches and
    autotuners settled); returns (GPU ms spent, calls)."""
    spent, calls, batch = 0.0, 0, 1
    while spent < ms:
        spent += _event_ms(lambda: [fn() for _ in range(batch)], cp)
        calls += batch
        batch *= 2
    return spent, calls


def interleaved(fns: dict, cp, repeats: int = REPEATS) -> dict:
    """{name: [ms per repeat]}: each repeat times every function once, the order
    reversed on every other repeat, so drift (clock, temperature) falls on all."""
    names = list(fns)
    times = {name: [] for name in names}
    for r in range(repeats):
        for name in (names if r % 2 == 0 else names[::-1]):
            times[name].append(_event_ms(fns[name], cp))
    return times


def _median(xs):
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def clocks() -> dict:
    """SM and memory clocks now (nvidia-smi), or {} where it cannot tell."""
    fields = ("clocks.sm", "clocks.max.sm", "clocks.mem", "temperature.gpu", "power.draw")
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={','.join(fields)}",
                              "--format=csv,noheader,nounits", "-i", "0"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return {}
    if out.returncode != 0 or not out.stdout.strip():
        return {}
    values = [v.strip() for v in out.stdout.strip().splitlines()[0].split(",")]
    names = ("sm_clock_mhz", "max_sm_clock_mhz", "mem_clock_mhz", "temperature_c", "power_w")
    result = {}
    for name, value in zip(names, values):
        try:
            result[name] = float(value)
        except ValueError:
            result[name] = None
    return result


def attribute_clock_mhz(cp) -> float | None:
    """cudaDevAttrClockRate (kHz → MHz): CUDA 13 dropped clockRate from the properties."""
    try:
        return cp.cuda.runtime.deviceGetAttribute(cp.cuda.runtime.cudaDevAttrClockRate, 0) / 1e3
    except Exception:  # noqa: BLE001 - a fact we report as missing
        return None


# --- The rows: a public call to check, a launcher to time ---------------------------


def _cublas_softmax(Q, K, V, cp):
    T = Q.shape[-2]
    S = cp.matmul(Q, K.swapaxes(-1, -2)) * (1.0 / D_K ** 0.5)
    S = cp.where(cp.tri(T, dtype=bool), S, cp.float32(-cp.inf))
    S -= S.max(axis=-1, keepdims=True)
    cp.exp(S, out=S)
    S /= S.sum(axis=-1, keepdims=True)
    return cp.matmul(S, V)


KERNEL_ROWS = {  # name → (impl, options of kernels.attention and of its launcher)
    "fused v1": ("fused-v1", {}),
    "fused v2": ("fused-v2", {"splits": 1}),
    "fused v2 split 4": ("fused-v2", {"splits": 4}),
    "fused v3 TF32 (tensor core)": ("fused-v3", {"precision": "tf32", "splits": 1}),
    "fused v3 3xTF32 (tensor core)": ("fused-v3", {"precision": "3xtf32", "splits": 1}),
    "rantai v2": ("chain-v2", {}),
}


def _variants(Q, K, V, cp):
    """{name: (public call, launcher)}: the launcher runs the same kernels on the
    same arrays without the input checks (none needed: the public call checked them)."""
    from atensi.kernels import launch

    def public(impl, options):
        from atensi import kernels

        return lambda: kernels.attention(Q, K, V, impl=impl, causal=True, backend="cupy", **options)

    def launcher(impl, options):
        return lambda: launch.launch_attention(Q, K, V, impl=impl, causal=True, scale=True,
                                               backend="cupy", **options)

    rows = {name: (public(impl, opts), launcher(impl, opts))
            for name, (impl, opts) in KERNEL_ROWS.items()}
    rows["cuBLAS + softmax CuPy"] = (lambda: _cublas_softmax(Q, K, V, cp),) * 2
    return rows


def _torch_sdpa(Q, K, V, cp):
    """torch SDPA on the same memory (no copy), or None without torch and CUDA."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    tq, tk, tv = (torch.as_tensor(x, device="cuda") for x in (Q, K, V))
    return lambda: F.scaled_dot_product_attention(tq, tk, tv, is_causal=True)


def run(out_path: str, Ts=(1024, 4096)) -> dict:
    import cupy as cp

    from atensi import kernels
    from atensi.bench.measure import gpu_info

    kernels.gpu_available()  # loads the CUDA libraries from the pip wheels when needed
    gpu = gpu_info()
    peak = gpu.get("fp32_peak_gflops")
    result = {"schema": "atensi-headline-2", "gpu": gpu,
              "shape": {"B": B, "H": H, "d_k": D_K, "causal": True},
              "timing": {"what": "peluncur atensi.kernels.launch (tanpa pemeriksaan masukan)",
                         "warmup_ms": WARMUP_MS, "repeats": REPEATS,
                         "interleaved_with": "torch SDPA", "events": "CUDA, stream bawaan"},
              "clocks_start": clocks(), "rows": []}
    for T in Ts:
        rng = cp.random.default_rng(2026)
        Q, K, V = (rng.standard_normal((B, H, T, D_K), dtype=cp.float32) for _ in range(3))
        flop = 4 * B * H * T * T * D_K / 2
        torch_fn = _torch_sdpa(Q, K, V, cp)
        ref = None
        rows = _variants(Q, K, V, cp)
        if torch_fn is not None:
            rows[TORCH_ROW] = (lambda: cp.asarray(torch_fn()), torch_fn)
        for name, (check, timed) in rows.items():
            row = {"name": name, "T": T, "flop": flop}
            try:
                out = check()
                if ref is None:
                    ref = out
                row["max_diff_vs_fused_v1"] = float(cp.abs(out - ref).max())
                del out
                fns = {name: timed}
                if torch_fn is not None and name != TORCH_ROW:
                    fns[TORCH_ROW] = torch_fn
                for fn in fns.values():
                    row.setdefault("warmup", []).append(warm_up(fn, cp)[1])
                times = interleaved(fns, cp)
                ms = _median(times[name])
                row.update(ms=ms, ms_min=min(times[name]), ms_max=max(times[name]),
                           repeats=len(times[name]), tflops=flop / ms / 1e9,
                           clocks=clocks(), attribute_clock_mhz=attribute_clock_mhz(cp))
                if TORCH_ROW in times and name != TORCH_ROW:
                    row["torch_ms"] = _median(times[TORCH_ROW])
                    row["vs_torch"] = ms / row["torch_ms"]
                if peak:
                    row["fp32_peak_share"] = flop / ms / 1e6 / peak
            except Exception as err:  # one failing row must not stop the others
                row["error"] = f"{type(err).__name__}: {err}"[:300]
            result["rows"].append(row)
            _write(result, out_path)
            print(json.dumps(row, ensure_ascii=False), flush=True)
            cp.get_default_memory_pool().free_all_blocks()
    return result


def _write(result: dict, out_path: str) -> None:
    """The rows so far, replacing the file whole (a reader never sees half of it)."""
    from atensi.files import write_text

    write_text(out_path, json.dumps(result, indent=1, ensure_ascii=False))


# --- Facts: the card, its clocks, its bandwidth, its roofline -------------------------


def copy_bandwidth(cp, nbytes: int = COPY_BYTES, repeats: int = 10) -> float:
    """Bytes per second of a device-to-device copy (read + write), median of ``repeats``."""
    src = cp.ones(nbytes // 4, dtype=cp.float32)
    dst = cp.empty_like(src)
    copy = lambda: dst.__setitem__(slice(None), src)  # noqa: E731 - one cudaMemcpyAsync
    warm_up(copy, cp, 50.0)
    ms = _median([_event_ms(copy, cp) for _ in range(repeats)])
    del src, dst
    cp.get_default_memory_pool().free_all_blocks()
    return 2 * nbytes / (ms / 1e3)


def roofline_rows(fp32_flops: float, bandwidth: float, name: str,
                  arch: str | None = None, sm_count: int = 0) -> list[dict]:
    """Each registry kernel's roofline at the headline shape, on this card's measured roofs
    (``arch`` such as "sm_90"; the book's default when the table does not know it)."""
    from atensi import hardware, roofline

    gpu = hardware.GPU(name, hardware.ARCHS.get(arch or "", hardware.DEFAULT_ARCH), sm_count,
                       fp32_flops, bandwidth)
    rows = []
    for m in roofline.models(B=B, T=1024, d_k=D_K, heads=H):
        rows.append({"kernel": m.kernel, "flops": m.flops, "bytes": m.bytes,
                     "intensity": m.intensity, "bound_us": m.bound_seconds(gpu) * 1e6,
                     "limited_by": m.limited_by(gpu)})
    return rows


def facts(out_path: str) -> dict:
    import cupy as cp

    from atensi import kernels
    from atensi.bench.measure import gpu_info

    kernels.gpu_available()
    gpu = gpu_info()
    result = {"schema": "atensi-fakta-1", "gpu": gpu, "clocks": clocks(),
              "attribute_clock_mhz": attribute_clock_mhz(cp)}
    _write(result, out_path)
    bandwidth = copy_bandwidth(cp)
    result["copy_bandwidth_bytes_per_s"] = bandwidth
    result["copy_bytes"] = COPY_BYTES
    if gpu.get("fp32_peak_gflops"):
        result["roofline"] = {"fp32_flops": gpu["fp32_peak_gflops"] * 1e9,
                              "bandwidth": bandwidth, "source": "salinan device-ke-device terukur",
                              "kernels": roofline_rows(
                                  gpu["fp32_peak_gflops"] * 1e9, bandwidth, gpu["name"],
                                  "sm_" + str(gpu.get("compute_capability", "")).replace(".", ""),
                                  gpu.get("sm_count") or 0)}
    result["clocks_end"] = clocks()
    _write(result, out_path)
    print(json.dumps({k: v for k, v in result.items() if k != "roofline"}, ensure_ascii=False))
    return result


# --- ncu: measured beside predicted ----------------------------------------------------


def ncu_command(ncu: str) -> list[str]:
    """Nsight Compute on the three kernels only, the metrics the emulator predicts."""
    names = "|".join(NCU_KERNELS)
    return [ncu, "--csv", "--metrics", ",".join(NCU_METRICS), "--kernel-name",
            f"regex:^({names})$", "--launch-count", str(len(NCU_KERNELS)),
            sys.executable, os.path.abspath(__file__), "--ncu-sasaran"]


def ncu_targets() -> None:
    """The process ncu watches: each of the three kernels once, at (8, 12, 1024, 64)."""
    import cupy as cp

    from atensi import kernels
    from atensi.kernels import launch

    kernels.gpu_available()
    rng = cp.random.default_rng(7)
    Q, K, V = (rng.standard_normal((B, H, NCU_T, D_K), dtype=cp.float32) for _ in range(3))
    for impl, precision in NCU_KERNELS.values():
        options = {"precision": precision} if precision else {}
        kernels.attention(Q, K, V, impl=impl, causal=False, splits=1, backend="cupy", **options)
    cp.cuda.Device().synchronize()


def parse_ncu_csv(text: str) -> dict:
    """{kernel: {metric: value}} from ``ncu --csv`` (lines before the header skipped)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return {}
    found: dict = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        name = row.get("Kernel Name", "").split("(")[0].strip()
        try:
            value = float(row["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
        found.setdefault(name, {})[row["Metric Name"]] = value
    return found


def predicted(T_run: int = 128) -> dict:
    """{kernel: {metric: value}} from the emulator's counts of one head of T_run,
    scaled to B·H heads of NCU_T as atensi.kernels.profil.scaled_bound scales them."""
    try:
        from atensi.kernels import profil
    except ImportError:  # the profiler is not in this copy: measured only
        return {}
    counts = profil.run(list(NCU_KERNELS), T=T_run, d=D_K)
    factor = B * H * (NCU_T / T_run) ** 2
    return {name: {m: (v if m.endswith((".pct", ".ratio")) else v * factor)
                   for m, v in metrics.items()}
            for name, (metrics, _sites) in counts.items()}


def side_by_side(measured: dict, predicted_: dict) -> list[dict]:
    """One line per kernel and metric, joined by ncu's metric name."""
    rows = []
    for kernel in NCU_KERNELS:
        for metric in NCU_METRICS:
            got = measured.get(kernel, {}).get(metric)
            want = predicted_.get(kernel, {}).get(metric)
            rows.append({"kernel": kernel, "metric": metric, "measured": got, "predicted": want,
                         "measured_over_predicted": got / want if got is not None and want else None})
    return rows


def ncu_pass(ncu: str, out_path: str) -> int:
    result = {"schema": "atensi-ncu-1", "shape": {"B": B, "H": H, "T": NCU_T, "d_k": D_K,
                                                 "causal": False},
              "command": ncu_command(ncu), "predicted_from": "atensi.kernels.profil, T = 128, "
              "diskalakan B·H·(T/128)² (model)"}
    try:  # inside the step's 50 s: ended here, so the file still says what happened
        proc = subprocess.run(result["command"], capture_output=True, text=True,
                              timeout=NCU_TIMEOUT_S)
        stdout, stderr, result["returncode"] = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as err:
        stdout = err.stdout.decode() if isinstance(err.stdout, bytes) else (err.stdout or "")
        stderr, result["returncode"] = f"ncu dihentikan setelah {NCU_TIMEOUT_S} s", None
    measured = parse_ncu_csv(stdout)
    if result["returncode"] != 0 or not measured:
        result["error"] = (stderr or stdout)[-1500:]
    _write(result, out_path)  # measured first: the prediction runs the emulator
    try:
        pred = predicted()
    except Exception as err:  # noqa: BLE001 - measured values still count
        pred, result["predicted_error"] = {}, f"{type(err).__name__}: {err}"[:300]
    result["rows"] = side_by_side(measured, pred)
    _write(result, out_path)
    for row in result["rows"]:
        print(f"{row['kernel']:32s} {row['metric']:60s} terukur {row['measured']} "
              f"ramalan {row['predicted']}")
    return 0 if measured else 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", help="berkas JSON hasil ukuran utama")
    parser.add_argument("--T", type=int, nargs="+", default=[1024, 4096])
    parser.add_argument("--fakta", metavar="JSON", help="kartu, clock, bandwidth, roofline")
    parser.add_argument("--ncu", nargs=2, metavar=("NCU", "JSON"), help="lintasan Nsight Compute")
    parser.add_argument("--ncu-sasaran", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.ncu_sasaran:
        ncu_targets()
        return 0
    if args.fakta:
        facts(args.fakta)
        return 0
    if args.ncu:
        return ncu_pass(*args.ncu)
    if not args.out:
        parser.error("beri berkas JSON hasil, atau --fakta / --ncu")
    start = time.perf_counter()
    result = run(args.out, tuple(args.T))
    bad = [r["name"] for r in result["rows"] if "error" in r]
    print(f"{len(result['rows'])} baris dalam {time.perf_counter() - start:.1f} s; gagal: {bad or 'tidak ada'}")
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
