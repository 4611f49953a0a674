"""atensi.validation.check_score_overflow counts the log2(e) that fused v2
multiplies Q by: a finite Q entry above max(float32) / log2(e) ≈ 2,36·10³⁸ would
become inf there (and the output NaN), so it is refused on every path.

Every module of checks (the shared core and those beside their owners) defines
each check once."""

import numpy as np
import pytest

from atensi import kernels, reference, validation

f32 = np.float32


def _huge_q_tiny_k(d_k=4):
    Q = np.full((1, 3, d_k), 0.5, f32)
    Q[0, 1, 2] = 3.0e38  # finite; × log2(e) is not
    K = np.full((1, 3, d_k), 1e-30, f32)
    return Q, K, np.ones((1, 3, d_k), f32)


PATHS = {
    "reference.scores": lambda Q, K, V: reference.scores(Q, K, scale=False),
    "reference.attention": lambda Q, K, V: reference.attention(Q, K, V, scale=False),
    "reference.attention_blocked": lambda Q, K, V: reference.attention_blocked(Q, K, V, scale=False, block=2),
    "kernels.scores": lambda Q, K, V: kernels.scores(Q, K, scale=False, backend="cpu"),
    "kernels.attention": lambda Q, K, V: kernels.attention(Q, K, V, scale=False, backend="cpu"),
    "kernels.attention fused v1": lambda Q, K, V: kernels.attention(Q, K, V, scale=False, impl="fused-v1",
                                                                    backend="cpu"),
    "kernels.attention fused v2": lambda Q, K, V: kernels.attention(Q, K, V, scale=False, impl="fused-v2", backend="cpu"),
    "kernels.attention fused v2 split": lambda Q, K, V: kernels.attention(
        Q, K, V, scale=False, impl="fused-v2", splits=2, backend="cpu"),
    "kernels.attention_backward": lambda Q, K, V: kernels.attention_backward(Q, K, V, V, scale=False,
                                                                             backend="cpu"),
}


def test_without_the_factor_fused_v2_returns_nan(monkeypatch):
    Q, K, V = _huge_q_tiny_k()
    monkeypatch.setattr(validation, "LOG2E", 1.0)  # the check as it was before
    out = PATHS["kernels.attention fused v2"](Q, K, V)
    assert np.isnan(out).any()


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_q_entry_that_overflows_times_log2e_is_refused(path):
    Q, K, V = _huge_q_tiny_k()
    with pytest.raises(ValueError, match=r"'Q'.*log₂e.*float32.*Perkecil Q"):
        PATHS[path](Q, K, V)


def test_the_bound_counts_log2e_and_still_accepts_what_fits():
    q = np.full((1, 2, 1), 1.3e19, f32)  # ‖q‖·‖k‖ = 1,69·10³⁸: fits max/2, not once × log2(e)
    with pytest.raises(ValueError, match=r"'Q' dan 'K' terlalu besar"):
        validation.check_score_overflow(q, q)
    small = np.full((1, 2, 1), 1.0e19, f32)  # 1,0·10³⁸ × log2(e) fits
    validation.check_score_overflow(small, small)
    out = kernels.attention(small, -small, np.ones((1, 2, 1), f32), scale=False, impl="fused-v2", backend="cpu")
    assert np.isfinite(out).all()


@pytest.mark.parametrize("module", ["validation", "position_checks", "reference_checks",
                                    "model_checks", "figure_checks", "result_checks", "masks",
                                    "kernels.limits"])
def test_every_check_has_one_definition(module):
    # A second def of the same name silently replaces the first, message and all.
    import ast
    import importlib
    import inspect

    tree = ast.parse(inspect.getsource(importlib.import_module(f"atensi.{module}")))
    names = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert sorted({n for n in names if names.count(n) > 1}) == []
