"""The OpenBLAS that NumPy ships, and how many threads it uses.

The one place that finds it. Two callers: ``bench.cpu_fast`` sets it per
worker thread (its own threads must not fight BLAS's), ``training_loop`` to
one thread for a whole run (the small model's matrices are as fast on one
thread, and spinning BLAS threads slow a busy machine down). Another BLAS has
none of these functions; then nothing changes.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import glob
import os

import numpy as np


def _libraries():
    """Every OpenBLAS loaded in this process, then the ones NumPy's wheel ships."""
    paths = []
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            for line in maps:
                fields = line.split()
                path = fields[-1] if len(fields) >= 6 else ""
                if "openblas" in path.lower() and path not in paths:
                    paths.append(path)
    except OSError:
        pass
    paths += sorted(glob.glob(os.path.join(os.path.dirname(np.__file__) + ".libs", "*openblas*")))
    for path in paths:
        try:
            yield ctypes.CDLL(path)
        except OSError:
            continue


@functools.lru_cache(maxsize=None)
def function(name, argtypes=(), restype=ctypes.c_int):
    """OpenBLAS's ``openblas_<name>`` under any name NumPy's builds give it, or None."""
    for lib in _libraries():
        for full in (f"scipy_openblas_{name}64_", f"scipy_openblas_{name}",
                     f"openblas_{name}64_", f"openblas_{name}"):
            fn = getattr(lib, full, None)
            if fn is not None:
                fn.argtypes, fn.restype = list(argtypes), restype
                return fn
    return None


def set_threads_here(n):
    """Set this thread's BLAS thread count (OpenBLAS ≥ 0.3.26); returns the old one,
    or None when ``n`` is None or the BLAS cannot."""
    local = function("set_num_threads_local", (ctypes.c_int,))
    if local is None or n is None:
        return None
    return local(int(n))


@contextlib.contextmanager
def one_thread():
    """Satu thread BLAS selama blok ini (matriks model kecil: lebih cepat, tidak
    berebut CPU). Tidak berbuat apa-apa bila OpenBLAS NumPy tidak ditemukan."""
    get = function("get_num_threads")
    set_ = function("set_num_threads", (ctypes.c_int,), None)
    before = get() if get is not None and set_ is not None else None
    if before:
        set_(1)
    try:
        yield
    finally:
        if before:
            set_(before)
