"""Fused v3 (tensor cores) on a GPU: TF32 and 3xTF32 next to v2 and torch SDPA float32.

    python scripts/tensorcore_gpu.py            (scripts/gpu_check.sh runs it)

Headline shapes: B = 8, H = 12, T in {1024, 4096}, d_k = 64, causal, standard
normal float32. For each row: the result of the public call is judged, and
its launcher (``atensi.kernels.launch``, the same kernels without the input
checks and their host syncs) is timed as scripts/gpu_headline_bench.py times
it: at least 100 ms of warm-up, 20 CUDA-event repeats interleaved with torch
SDPA, the median, and the SM clock at the time; TFLOP/s counted as 2·B·H·T²·d_k (causal: half of 4·B·H·T²·d_k), and
the largest error against float64 on batch 0 (12 heads), relative to max |O|.
torch's row is ``scaled_dot_product_attention`` on float32 inputs with TF32
allowed (its default GEMM path on sm_80+ decides); it is skipped when torch is
absent.

The v3 tolerance comes from a rounding model, not a fixed number. Tensor cores
need not round to nearest inside an MMA: on the A100, Fasi et al. (2021,
"Numerical behavior of NVIDIA tensor cores") found products kept exact, the
addends aligned to the largest one with the bits below its 24-bit window cut
off, and the sum truncated (round toward zero). :func:`mma_truncate` is that
model without any extra alignment bits, the pessimistic end. :func:`model_v3`
runs fused v3's order of operations (kernels/attention_tensorcore.cu: Q·Kᵀ in
D/8 MMA steps per key tile, online softmax in float32, each key tile's P·V
from a zeroed fragment, added to O with one fmaf on CUDA cores) with it, on the 16-row warp tiles
that matter: for each head the one holding the GPU's largest error and the
last one (the most key tiles, so the most truncations). A v3 row fails only
when its error is above ``BOUND_FACTOR`` times the model's error on those rows
plus ``BOUND_FLOOR``. Operand rounding and splitting are
atensi.number_formats' (to_tf32, split_tf32), the cvt.rna.tf32.f32 the kernel
runs.

Prints one line per row; exit code 1 when a v3 result is above its bound.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from atensi import kernels, reference
from atensi.number_formats import MMA_K, split_tf32, to_tf32

B, H, D = 8, 12, 64
BOUND_FACTOR = 2.0  # room for what the model leaves out (summation order inside an MMA)
BOUND_FLOOR = 1e-6  # relative to max |O|: float32-level noise the model may miss
WARP_ROWS = 16  # query rows of one warp in fused v3 (one MMA tile high)
LOG2E = np.float32(1.4426950408889634)  # TC_LOG2E in the .cu


def _round_toward_zero(x: np.ndarray) -> np.ndarray:
    """float64 to float32 by cutting the bits below float32's 24 (round toward zero)."""
    _, e = np.frexp(x)
    return np.ldexp(np.trunc(np.ldexp(x, 24 - e)), e - 24).astype(np.float32)


def _exp2f(x: np.ndarray) -> np.ndarray:
    """exp2f of float32 ``x``, rounded once from float64 (libm's exp2f is within half an ulp)."""
    return np.exp2(x.astype(np.float64)).astype(np.float32)


def _fmaf(a, b, c) -> np.ndarray:
    """fmaf of float32 arrays: a b + c rounded once to float32.

    a b is exact in float64, the sum need not be: TwoSum keeps its error e, and
    only where the float64 sum lies exactly halfway between two float32 values
    does e (its sign) change the float32 result. Rounding the float64 sum alone
    would round twice there.
    """
    prod = a.astype(np.float64) * b.astype(np.float64)
    c = np.broadcast_to(c.astype(np.float64), prod.shape)
    total = prod + c
    back = total - prod
    err = (prod - (total - back)) + (c - back)  # prod + c == total + err exactly
    out = total.astype(np.float32)
    toward = np.nextafter(out, np.where(total > out, np.float32(np.inf), np.float32(-np.inf)))
    halfway = (out.astype(np.float64) + toward.astype(np.float64)) / 2 == total
    other = np.nextafter(out, np.where(err > 0, np.float32(np.inf), np.float32(-np.inf)))
    fix = halfway & (err != 0) & ((other.astype(np.float64) - total) * err > 0)
    return np.where(fix, other, out).astype(np.float32)


def mma_truncate(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``A B + C`` as a truncating tensor core: a (..., M, k), b (..., k, N), c (..., M, N).

    a and b hold TF32 values (products exact in float64), c float32. Each of
    the k products and C is cut to the 24-bit window of the largest of them
    (toward zero), the sum of those is exact, and the result is cut to float32.
    """
    prods = a[..., :, :, None].astype(np.float64) * b[..., None, :, :].astype(np.float64)
    c = c.astype(np.float64)
    _, e = np.frexp(np.maximum(np.abs(prods).max(axis=-2), np.abs(c)))
    shift = 24 - e  # the largest addend scaled to 24 integer bits; everything below is cut
    total = np.trunc(np.ldexp(c, shift)) + np.trunc(np.ldexp(prods, shift[..., None, :])).sum(axis=-2)
    return _round_toward_zero(np.ldexp(total, -shift))


def model_v3(Q, K, V, rows, *, precision="3xtf32", mma=mma_truncate) -> np.ndarray:
    """Causal fused v3 (splits = 1) for query ``rows`` (H, R) of Q, K, V (H, T, d_k) float32.

    Returns O[h, rows[h]] (H, R, d_k) float32, computed in the kernel's order
    with ``mma`` for every tensor-core step (one 16 x 8 x 16 tile or a batch of them).
    """
    from atensi.kernels import registry

    c = registry.CONSTANTS["attention_tensorcore.cu"]
    bk = c["TC_BK"]
    Hn, T, d = Q.shape
    width = registry.width_for(d)
    tiles = -(-T // bk)
    pad = ((0, 0), (0, tiles * bk - T), (0, width - d))
    Kp, Vp = (np.pad(x, pad) for x in (K, V))
    scale = np.float32(1.0) / np.sqrt(np.float32(d))
    q = np.pad(np.take_along_axis(Q, rows[..., None], axis=1), ((0, 0), (0, 0), (0, width - d)))
    q = (q * (scale * LOG2E)).astype(np.float32)
    split = precision == "3xtf32"

    def parts(x):
        x = np.ascontiguousarray(x, dtype=np.float32)
        return split_tf32(x) if split else (to_tf32(x), None)

    def step(acc, a, b):  # tc_mma: a_lo b_hi, a_hi b_lo, then a_hi b_hi
        if split:
            acc = mma(a[1], b[0], acc)
            acc = mma(a[0], b[1], acc)
        return mma(a[0], b[0], acc)

    qa = [parts(q[..., k:k + MMA_K]) for k in range(0, width, MMA_K)]
    m = np.full(rows.shape, -np.inf, np.float32)
    l = np.zeros(rows.shape + (2,), np.float32)  # two lanes per row, 16 keys each
    o = np.zeros(rows.shape + (width,), np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        for k0 in range(0, int(rows.max()) + 1, bk):
            Kt, Vt = Kp[:, k0:k0 + bk], Vp[:, k0:k0 + bk]
            s = np.zeros(rows.shape + (bk,), np.float32)
            for kk, k in enumerate(range(0, width, MMA_K)):
                s = step(s, qa[kk], parts(np.swapaxes(Kt[:, :, k:k + MMA_K], 1, 2)))
            j = k0 + np.arange(bk)
            s = np.where((j >= T) | (j > rows[..., None]), np.float32(-np.inf), s)
            m_new = np.maximum(m, s.max(axis=-1))
            ref = np.where(m_new == -np.inf, np.float32(0), m_new)
            m_old, m = m, m_new
            p = _exp2f(s - ref[..., None])
            alpha = _exp2f(m_old - ref)
            halves = p.reshape(rows.shape + (2, bk // 2))
            total = np.zeros_like(l)
            for jj in range(bk // 2):  # each lane adds its keys in order
                total = (total + halves[..., jj]).astype(np.float32)
            l = (l * alpha[..., None] + total).astype(np.float32)
            pv = np.zeros_like(o)  # each key tile's P V from a zeroed fragment
            for k in range(0, bk, MMA_K):
                pv = step(pv, parts(p[..., k:k + MMA_K]), parts(Vt[:, k:k + MMA_K]))
            o = _fmaf(o, alpha[..., None], pv)
    tot = (l[..., 0] + l[..., 1]).astype(np.float32)
    inv = np.where(tot > 0, np.float32(1) / tot, np.float32(0)).astype(np.float32)
    return (o[..., :d] * inv[..., None]).astype(np.float32)


def checked_rows(got, ref) -> np.ndarray:
    """Per head, the first rows of the warp tile with the largest error and of the last one (H, 32)."""
    T = ref.shape[-2]
    worst = np.abs(got - ref).max(axis=-1).argmax(axis=-1)
    starts = np.stack([worst // WARP_ROWS * WARP_ROWS,
                       np.full_like(worst, (T - 1) // WARP_ROWS * WARP_ROWS)], axis=-1)
    rows = starts[..., None] + np.arange(WARP_ROWS)
    return np.minimum(rows.reshape(ref.shape[0], -1), T - 1)


def v3_bound(Q, K, V, got, ref, precision, *, mma=mma_truncate) -> tuple[float, float, float]:
    """(error, model error, bound) of a causal v3 result ``got`` against float64 ``ref``.

    Errors are relative to max |ref|; the model runs on :func:`checked_rows`.
    """
    scale = float(np.abs(ref).max())
    err = float(np.abs(got - ref).max()) / scale
    rows = checked_rows(got, ref)
    modelled = model_v3(Q, K, V, rows, precision=precision, mma=mma)
    want = np.take_along_axis(ref, rows[..., None], axis=1)
    model_err = float(np.abs(modelled - want).max()) / scale
    return err, model_err, BOUND_FACTOR * model_err + BOUND_FLOOR


def main() -> int:
    import cupy as cp

    from atensi.kernels import launch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import gpu_headline_bench as timing  # warm-up, interleaved repeats, clocks

    try:
        import torch
    except ImportError:
        torch = None
    bad = 0
    for T in (1024, 4096):
        rng = np.random.default_rng(T)
        Q, K, V = (rng.standard_normal((B, H, T, D), dtype=np.float32) for _ in range(3))
        ref = reference.attention(*(x[0].astype(np.float64) for x in (Q, K, V)), causal=True)
        scale = float(np.abs(ref).max())
        flops = 2.0 * B * H * T * T * D
        Qd, Kd, Vd = (cp.asarray(x) for x in (Q, K, V))
        # (name, public call whose result is judged, launcher that is timed: the same
        # kernels on the same arrays, without the input checks and their host syncs)
        rows = [(f"v3-{p}",
                 lambda p=p: kernels.attention(Qd, Kd, Vd, impl="fused-v3", precision=p, splits=1,
                                               backend="cupy"),
                 lambda p=p: launch.launch_attention(Qd, Kd, Vd, impl="fused-v3", precision=p,
                                                     splits=1, causal=True, scale=True,
                                                     backend="cupy"))
                for p in ("tf32", "3xtf32")]
        rows.append(("v2-fp32",
                     lambda: kernels.attention(Qd, Kd, Vd, impl="fused-v2", splits=1, backend="cupy"),
                     lambda: launch.launch_attention(Qd, Kd, Vd, impl="fused-v2", splits=1,
                                                     causal=True, scale=True, backend="cupy")))
        sdpa = None
        if torch is not None and torch.cuda.is_available():
            tq, tk, tv = (torch.as_tensor(x, device="cuda") for x in (Qd, Kd, Vd))
            torch.backends.cuda.matmul.allow_tf32 = True
            sdpa = lambda: torch.nn.functional.scaled_dot_product_attention(  # noqa: E731
                tq, tk, tv, is_causal=True)
            rows.append(("torch-sdpa-fp32", lambda: cp.asarray(sdpa()), sdpa))
        for name, check, timed in rows:
            got = cp.asnumpy(check()[0]).astype(np.float64)
            fns = {name: timed}
            if sdpa is not None and name != "torch-sdpa-fp32":
                fns["torch-sdpa-fp32"] = sdpa
            for fn in fns.values():
                timing.warm_up(fn, cp)
            times = timing.interleaved(fns, cp)
            ms = timing._median(times[name])
            sm = timing.clocks().get("sm_clock_mhz")
            line = (f"{name:16s} B={B} H={H} T={T:5d} d_k={D}  {ms:8.3f} ms  "
                    f"{flops / ms / 1e9:7.1f} TFLOP/s  (peluncur, median {len(times[name])}x, "
                    f"SM {sm if sm is not None else '?'} MHz)  galat relatif ")
            if not name.startswith("v3-"):
                print(line + f"{float(np.abs(got - ref).max()) / scale:.2e}", flush=True)
                continue
            precision = name[3:]
            err, model_err, bound = v3_bound(Q[0], K[0], V[0], got, ref, precision)
            print(line + f"{err:.2e} (model pemotongan {model_err:.2e}, batas {bound:.2e})",
                  flush=True)
            if not err <= bound:
                print(f"  GAGAL: {name} T={T}: galat {err:.2e} di atas batas {bound:.2e} "
                      f"({BOUND_FACTOR:g} x model akumulasi terpotong + {BOUND_FLOOR:.0e})")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
