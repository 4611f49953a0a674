"""The kernels on a real NVIDIA GPU through CuPy (skipped without one).

Same cases as test_kernels_cpu.py, with backend="cupy". Also: CuPy in gives
CuPy out, NumPy in gives NumPy out, and more heads than grid.z allows.
Run on a GPU machine with ``bash scripts/gpu_check.sh``.
"""

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import kernels

# Skipped without a GPU; scripts/gpu_check.sh sets ATENSI_REQUIRE_GPU=1, and
# there a missing GPU is a failure, not a quiet skip.
pytestmark = kc.GPU_MARKS


@pytest.fixture(autouse=True)
def gpu_required():
    kc.require_gpu()


BACKEND = "cupy"


def to_cupy(x):
    import cupy

    return cupy.asarray(x)


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("case", kc.SHAPES, ids=kc.SHAPE_IDS)
def test_scores(case, version):
    kc.check_scores(case, BACKEND, version=version, to=to_cupy)
    kc.check_scores(case, BACKEND, version=version, causal=True, to=to_cupy)
    kc.check_scores(case, BACKEND, version=version, scale=False)


@pytest.mark.parametrize("case", kc.SHAPES, ids=kc.SHAPE_IDS)
def test_causal_mask(case):
    kc.check_causal_mask(case, BACKEND, to=to_cupy)


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("case", kc.SHAPES, ids=kc.SHAPE_IDS)
def test_softmax(case, version):
    kc.check_softmax(case, BACKEND, version=version, to=to_cupy)


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("n", [1, 31, 257, 1025, 5000])
def test_softmax_long_rows(n, version):
    kc.check_softmax_rows(17, n, BACKEND, version=version, to=to_cupy)


@pytest.mark.parametrize("case", kc.SHAPES, ids=kc.SHAPE_IDS)
def test_weighted_sum(case):
    kc.check_weighted_sum(case, BACKEND, to=to_cupy)


@pytest.mark.parametrize("version", ["v1", "v2"])
@pytest.mark.parametrize("case", kc.SHAPES + [((12,), 1024, 64)], ids=kc.SHAPE_IDS + ["andrea"])
def test_attention(case, version):
    kc.check_attention(case, BACKEND, version=version, to=to_cupy)
    kc.check_attention(case, BACKEND, version=version, causal=False)


def test_numpy_in_numpy_out():
    kc.check_all_small(BACKEND)


def test_cupy_in_cupy_out():
    import cupy

    kc.check_all_small(BACKEND, to=to_cupy)
    Q = cupy.ones((2, 4, 3), dtype=cupy.float32)
    if "cpu" in kernels.available_backends():  # needs g++
        assert isinstance(kernels.attention(Q, Q, Q, backend="cpu"), cupy.ndarray)
    assert isinstance(kernels.attention(Q, Q, Q), cupy.ndarray)


def test_cupy_validation():
    import cupy

    Q = cupy.ones((4, 3), dtype=cupy.float64)
    with pytest.raises(TypeError, match=r"'Q'.*float64.*Q\.astype\(cupy\.float32\)"):
        kernels.scores(Q, Q)
    Q = cupy.ones((4, 3), dtype=cupy.float32)
    with pytest.raises(ValueError, match=r"'K'.*C-contiguous.*cupy\.ascontiguousarray"):
        kernels.scores(Q, cupy.ones((3, 4), dtype=cupy.float32).T)
    with pytest.raises(TypeError, match="NumPy"):
        kernels.scores(Q, np.ones((4, 3), np.float32))


def test_more_heads_than_grid_z():
    """70 000 heads > 65 535 blocks in grid.z: the kernels' head loops cover the rest."""
    case = ((70000,), 2, 2)
    kc.check_scores(case, BACKEND, version="v1", to=to_cupy)
    kc.check_scores(case, BACKEND, version="v2", causal=True, to=to_cupy)
    kc.check_causal_mask(case, BACKEND, to=to_cupy)
    kc.check_weighted_sum(case, BACKEND, to=to_cupy)
    kc.check_attention(case, BACKEND, version="v2", to=to_cupy)


def test_grid_loops_with_small_grid(monkeypatch):
    monkeypatch.setattr(kernels, "MAX_GRID_YZ", 2)
    monkeypatch.setattr(kernels, "MAX_GRID_X", 3)
    kc.check_all_small(BACKEND, to=to_cupy)
