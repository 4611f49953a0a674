"""Array antar-backend: NumPy masuk → NumPy keluar, CuPy masuk → CuPy keluar.

Data dipindah seperlunya bila backend berbeda dari jenis array masukan.
"""

from __future__ import annotations

import numpy as np

from atensi.validation import kind


def to_backend(x, backend: str):
    """The array on the backend's side: NumPy for 'cpu', CuPy for 'cupy'."""
    if backend == "cupy":
        import cupy

        return cupy.ascontiguousarray(cupy.asarray(x))
    return x.get() if kind(x) == "cupy" else x


def like_input(y, x):
    """Give ``y`` back as the same kind of array as the user's input ``x``."""
    if kind(x) == kind(y):
        return y
    if kind(x) == "cupy":
        import cupy

        return cupy.asarray(y)
    return y.get()


def empty(shape, backend: str):
    """An uninitialised float32 array of ``shape`` on the backend."""
    if backend == "cupy":
        import cupy

        return cupy.empty(shape, dtype=cupy.float32)
    return np.empty(shape, dtype=np.float32)
