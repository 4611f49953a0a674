"""atensi.measures: entropy, the softmax Jacobian and its norm, random dot products."""

import math

import numpy as np
import pytest

from atensi import measures
from atensi.reference import softmax


def test_entropy_of_uniform_one_hot_and_masked_rows():
    assert measures.entropy(np.full(16, 1 / 16)) == pytest.approx(math.log(16))
    one_hot = measures.entropy([0.0, 1.0, 0.0])
    assert one_hot == 0.0 and not np.signbit(one_hot)  # shown as "0", never "−0"
    # Masked positions carry p = 0 and add nothing (no NaN from 0 log 0).
    assert measures.entropy([0.5, 0.5, 0.0, 0.0]) == pytest.approx(math.log(2))
    rows = np.array([[1.0, 0.0], [0.5, 0.5]])
    np.testing.assert_allclose(measures.entropy(rows), [0.0, math.log(2)])


def test_softmax_jacobian_matches_finite_differences():
    rng = np.random.default_rng(0)
    s = rng.standard_normal(6)
    p = softmax(s)
    J = measures.softmax_jacobian(p)
    eps = 1e-6
    numeric = np.empty((6, 6))
    for b in range(6):
        step = np.zeros(6)
        step[b] = eps
        numeric[:, b] = (softmax(s + step) - softmax(s - step)) / (2 * eps)
    np.testing.assert_allclose(J, numeric, atol=1e-8)
    np.testing.assert_allclose(J, J.T)
    np.testing.assert_allclose(J.sum(axis=0), 0, atol=1e-12)  # shifting all scores changes nothing


def test_jacobian_norm_values():
    n = 16
    assert measures.jacobian_norm(np.full(n, 1 / n)) == pytest.approx(math.sqrt(n - 1) / n)
    assert measures.jacobian_norm([0.5, 0.5]) == pytest.approx(0.5)
    assert measures.jacobian_norm([0.0, 1.0, 0.0]) == pytest.approx(0.0)
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(5), size=200)
    norms = measures.jacobian_norm(P)
    assert norms.shape == (200,)
    assert (norms <= 0.5 + 1e-12).all()
    np.testing.assert_allclose(norms[3], np.linalg.norm(measures.softmax_jacobian(P[3])))


def test_sharper_rows_have_smaller_gradients():
    s = np.array([1.0, 0.5, -0.2, 0.1])
    norms = [measures.jacobian_norm(softmax(s * c)) for c in (1, 4, 16, 64)]
    assert norms == sorted(norms, reverse=True)
    assert norms[-1] < 1e-6


@pytest.mark.slow
@pytest.mark.parametrize("d_k", [1, 64, 256, 4096])
def test_dot_product_spread_is_sqrt_d_k_and_one_when_scaled(d_k):
    assert measures.dot_product_spread(d_k, n=2000) == pytest.approx(math.sqrt(d_k), rel=0.08)
    assert measures.dot_product_spread(d_k, n=2000, scale=True) == pytest.approx(1.0, rel=0.08)


def test_random_dot_products_are_seeded():
    a = measures.random_dot_products(64, n=100, seed=7)
    b = measures.random_dot_products(64, n=100, seed=7)
    c = measures.random_dot_products(64, n=100, seed=8)
    assert a.shape == (100,)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    np.testing.assert_allclose(measures.random_dot_products(64, n=100, seed=7, scale=True), a / 8)


def test_errors_are_indonesian_and_name_the_argument():
    with pytest.raises(ValueError, match="Argumen 'd_k'.*0"):
        measures.random_dot_products(0)
    with pytest.raises(TypeError, match="Argumen 'd_k' harus bilangan bulat"):
        measures.dot_product_spread(2.5)
    with pytest.raises(ValueError, match="Argumen 'd_k' harus bilangan bulat 1 sampai 1.048.576"):
        measures.random_dot_products(2**20 + 1)
    with pytest.raises(ValueError, match="Argumen 'n'"):
        measures.random_dot_products(4, n=0)
    with pytest.raises(ValueError, match="Argumen 'p'.*NaN"):
        measures.entropy([0.5, np.nan])
    with pytest.raises(ValueError, match="Argumen 'p'.*tidak kosong"):
        measures.jacobian_norm([])
