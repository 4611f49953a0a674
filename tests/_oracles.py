"""Shared oracles for the CPU attention paths: fresh random inputs, the
float64 reference, relative error, and peak Python memory of a call."""

import tracemalloc

import numpy as np

from atensi import reference as R


def qkv(shape, seed=0, dtype=np.float32, scale=1.0):
    rng = np.random.default_rng(seed)
    return tuple((scale * rng.standard_normal(shape)).astype(dtype) for _ in range(3))


def rel_err(got, want):
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))


def reference64(Q, K, V, **kw):
    return R.attention(*(x.astype(np.float64) for x in (Q, K, V)), **kw)


def peak_bytes(fn):
    """Largest Python/NumPy allocation peak while fn() runs (tracemalloc)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
