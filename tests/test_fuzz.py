"""Fuzz: good and bad input to every public function of reference, kernels (cpu)
and the helpers (measures, widgets' state functions, plots).

Each example starts from valid arguments and either keeps them or spoils one
argument with one mutation (wrong dtype, list, None, NaN, +inf, -inf, 1e19,
masked array, strided view, wrong shape, empty, flag that is not a bool,
bad block/version/axis...). For each mutation the expected outcome is known:

- accepted: the result must match an independent float64 oracle, without NaN;
- refused: before any work, with TypeError/ValueError/MemoryError whose
  Indonesian message names the spoiled argument ("refused clearly").

Anything else fails the test: a crash (IndexError, ZeroDivisionError, an
English NumPy error...), a silent answer on bad input, NaN on finite input, or
a refusal of valid input. The counts (tried, refused clearly, refused poorly,
accepted correctly) are printed at the end and written to
``$ATENSI_FUZZ_COUNTS`` when that is set. Examples are small: the whole file
takes well under a minute.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atensi import kernels, measures, plots, reference, widgets

COUNTS: Counter = Counter()
POOR: list = []
FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# A refusal is "clear" when it names the argument and reads as Indonesian.
INDONESIAN = ("harus", "tetapi", "yang diterima", "Ubah", "Pakai", "periksa", "kecilkan",
              "melebihi", "berisi", "tidak", "terlalu", "bukan", "kosong", "Berikan")
REFUSALS = (TypeError, ValueError, MemoryError)


def _names_argument(message: str, names) -> bool:
    return any(f"'{n}'" in message or f"{n}=" in message for n in names)


def attempt(call, *, expect: str, names=(), check=None):
    """Run ``call``; count and judge the outcome (see the module docstring)."""
    COUNTS["tried"] += 1
    try:
        out = call()
    except REFUSALS as err:
        message = str(err)
        assert expect in ("refuse", "either"), f"masukan sah ditolak: {type(err).__name__}: {message}"
        if _names_argument(message, names) and any(w in message for w in INDONESIAN):
            COUNTS["refused clearly"] += 1
        else:
            COUNTS["refused poorly"] += 1
            POOR.append((names, message))
            pytest.fail(f"penolakan tidak jelas (harus menyebut {names}): {message}")
        return None
    except Exception as err:  # noqa: BLE001 - any other exception is a crash
        COUNTS["crashed"] += 1
        pytest.fail(f"crash: {type(err).__name__}: {err}")
    assert expect in ("accept", "either"), f"masukan salah ({names}) diterima diam-diam"
    if check is not None:
        check(out)
    COUNTS["accepted correctly"] += 1
    return out


# ---------------------------------------------------------------------------
# Independent float64 oracles
# ---------------------------------------------------------------------------


def o_scores(Q, K, scale=True, causal=False):
    Q, K = np.asarray(Q, np.float64), np.asarray(K, np.float64)
    S = np.einsum("...id,...jd->...ij", Q, K)
    if scale:
        S = S / math.sqrt(Q.shape[-1])
    return o_mask(S) if causal else S


def o_mask(S):
    S = np.array(S, np.float64)
    Tq, Tk = S.shape[-2:]
    S[..., np.arange(Tk)[None, :] > np.arange(Tq)[:, None]] = -np.inf
    return S


def o_softmax(S, axis=-1):
    S = np.moveaxis(np.asarray(S, np.float64), axis, -1)
    out = np.zeros_like(S)
    for idx in np.ndindex(S.shape[:-1]):
        row = S[idx]
        if np.isneginf(row).all():
            continue
        e = np.exp(row - row.max())
        out[idx] = e / e.sum()
    return np.moveaxis(out, -1, axis)


def o_attention(Q, K, V, causal=True, scale=True):
    S = o_scores(Q, K, scale, causal)
    return o_softmax(S) @ np.asarray(V, np.float64)


def o_backward(Q, K, V, dO, causal=True, scale=True):
    Q, K, V, dO = (np.asarray(x, np.float64) for x in (Q, K, V, dO))
    s = 1 / math.sqrt(Q.shape[-1]) if scale else 1.0
    A = o_softmax(o_scores(Q, K, scale, causal))
    dV = np.swapaxes(A, -1, -2) @ dO
    dA = dO @ np.swapaxes(V, -1, -2)
    dS = A * (dA - (dA * A).sum(-1, keepdims=True))
    return dS @ K * s, np.swapaxes(dS, -1, -2) @ Q * s, dV


def o_rope(X, offset):
    """Each pair (x[2m], x[2m+1]) of row t turned by (offset + t) / 10000^(2m/d)."""
    X = np.asarray(X, np.float64)
    T, d = X.shape[-2:]
    theta = (offset + np.arange(T))[:, None] / 10000.0 ** (np.arange(0, d, 2) / d)[None, :]
    out = np.empty_like(X)
    out[..., 0::2] = X[..., 0::2] * np.cos(theta) - X[..., 1::2] * np.sin(theta)
    out[..., 1::2] = X[..., 0::2] * np.sin(theta) + X[..., 1::2] * np.cos(theta)
    return out


def close(tol):
    def check(got, want):
        if isinstance(want, tuple):
            for g, w in zip(got, want):
                check(g, w)
            return
        got = np.asarray(got, np.float64)
        assert got.shape == want.shape, (got.shape, want.shape)
        assert not np.isnan(got).any(), "NaN pada masukan yang hingga"
        np.testing.assert_array_equal(np.isneginf(got), np.isneginf(want))
        fin = np.isfinite(want)
        scale = max(float(np.abs(want[fin]).max(initial=0.0)), 1.0)
        assert np.abs(got[fin] - want[fin]).max(initial=0.0) <= tol * scale
    return check


# ---------------------------------------------------------------------------
# Mutations
# ---------------------------------------------------------------------------

ARRAY_MUTATIONS = ("list", "int32", "uint8", "bool", "complex", "float64", "float16", "none",
                   "string", "scalar", "rank1", "empty", "nan", "posinf", "neginf", "huge",
                   "masked", "strided", "shape", "lead")
FLAG_MUTATIONS = ("str", "half", "one", "none", "np_bool")
BLOCK_MUTATIONS = ("zero", "negative", "float", "str", "bool", "huge", "np_int")
VERSION_MUTATIONS = ("v3", "list", "none", "int", "upper")
AXIS_MUTATIONS = ("far", "str", "float", "bool")


def mutate_array(x, how, rng, *, shape_axis=-1):
    x = np.asarray(x)
    if how == "list":
        return x.tolist()
    if how in ("int32", "uint8", "bool", "complex", "float64", "float16"):
        dt = {"int32": np.int32, "uint8": np.uint8, "bool": np.bool_, "complex": np.complex64,
              "float64": np.float64, "float16": np.float16}[how]
        return (x * 3).astype(dt)
    if how == "none":
        return None
    if how == "string":
        return "Q K V"
    if how == "scalar":
        return np.float32(1.5)
    if how == "rank1":
        return np.ascontiguousarray(x.reshape(-1))
    if how == "empty":
        return x[..., :0, :]
    if how in ("nan", "posinf", "neginf"):
        y = x.copy()
        y.reshape(-1)[rng.integers(y.size)] = {"nan": np.nan, "posinf": np.inf,
                                              "neginf": -np.inf}[how]
        return y
    if how == "huge":
        return (x * np.float32(1e19)).astype(x.dtype)
    if how == "masked":
        return np.ma.masked_array(x, mask=np.zeros(x.shape, bool))
    if how == "strided":
        wide = np.repeat(x, 2, axis=-1)
        return wide[..., ::2]
    if how == "shape":
        pad = [(0, 0)] * x.ndim
        pad[shape_axis] = (0, 1)
        return np.pad(x, pad).astype(x.dtype)
    if how == "lead":
        return np.ascontiguousarray(np.broadcast_to(x[:1], (3,) + x.shape[1:]))
    raise AssertionError(how)


def mutate_flag(how):
    return {"str": "no", "half": 0.5, "one": 1, "none": None, "np_bool": np.bool_(True)}[how]


def mutate_block(how):
    return {"zero": 0, "negative": -2, "float": 2.5, "str": "4", "bool": True,
            "huge": 10**9, "np_int": np.int64(3)}[how]


def mutate_version(how):
    return {"v3": "v3", "list": ["v1"], "none": None, "int": 2, "upper": "V1"}[how]


def mutate_axis(how):
    return {"far": 5, "str": "x", "float": 1.0, "bool": True}[how]


# Which array mutations each module accepts (with the right answer).
REFERENCE_OK = {"list", "float64", "float16", "strided"}
KERNELS_OK: set = set()


def array_expectation(module, how, role):
    """'accept' or 'refuse' for mutation ``how`` of an array with ``role``."""
    ok = REFERENCE_OK if module == "reference" else KERNELS_OK
    if how in ok:
        return "accept"
    if how == "neginf" and role == "scores":  # -inf in scores means masked
        return "accept"
    if how == "huge" and role not in ("qk",):  # only Q·Kᵀ can overflow
        return "accept"
    return "refuse"


def overflow_expectation(Q, K):
    """Scores that certainly overflow float32 must be refused; far below, accepted."""
    Q64, K64 = np.asarray(Q, np.float64), np.asarray(K, np.float64)
    bound = (np.sqrt((Q64 ** 2).sum(-1)).max() * np.sqrt((K64 ** 2).sum(-1)).max())
    fmax = float(np.finfo(np.float32).max)
    if bound > fmax:
        return "refuse"
    return "accept" if bound <= fmax / 2 else "either"


# ---------------------------------------------------------------------------
# The functions
# ---------------------------------------------------------------------------


def base_arrays(rng, T, d, lead, *names):
    shape = lead + (T, d)
    out = {n: rng.standard_normal(shape).astype(np.float32) for n in names}
    return out


def scores_matrix(rng, T, lead, masked=False):
    S = rng.standard_normal(lead + (T, T)).astype(np.float32) * 2
    return o_mask(S).astype(np.float32) if masked else S


def weights(rng, T, lead):
    return o_softmax(o_mask(rng.standard_normal(lead + (T, T)))).astype(np.float32)


# name -> (module, builder(rng, T, d, lead) -> kwargs, {arg: kind}, call(**kw), oracle(kw), tol)
def _cases():
    cpu = {"backend": "cpu"}
    c = {}

    def qk(rng, T, d, lead):
        return base_arrays(rng, T, d, lead, "Q", "K") | {"scale": True}

    c["reference.scores"] = ("reference", qk, {"Q": "qk", "K": "qk", "scale": "flag"},
                             lambda **kw: reference.scores(kw["Q"], kw["K"], scale=kw["scale"]),
                             lambda kw: o_scores(kw["Q"], kw["K"], kw["scale"]))

    def kqk(rng, T, d, lead):
        return qk(rng, T, d, lead) | {"causal": False, "version": "v2"}

    c["kernels.scores"] = ("kernels", kqk,
                           {"Q": "qk", "K": "qk", "scale": "flag", "causal": "flag",
                            "version": "version"},
                           lambda **kw: kernels.scores(kw["Q"], kw["K"], scale=kw["scale"],
                                                       causal=kw["causal"],
                                                       version=kw["version"], **cpu),
                           lambda kw: o_scores(kw["Q"], kw["K"], kw["scale"], kw["causal"]))

    def s_only(rng, T, d, lead):
        return {"S": scores_matrix(rng, T, lead)}

    c["reference.causal_mask"] = ("reference", s_only, {"S": "scores"},
                                  lambda **kw: reference.causal_mask(kw["S"]),
                                  lambda kw: o_mask(kw["S"]))
    c["kernels.causal_mask"] = ("kernels", s_only, {"S": "scores"},
                                lambda **kw: kernels.causal_mask(kw["S"], **cpu),
                                lambda kw: o_mask(kw["S"]))

    def s_axis(rng, T, d, lead):
        return {"S": scores_matrix(rng, T, lead, masked=True), "axis": -1}

    c["reference.softmax"] = ("reference", s_axis, {"S": "scores", "axis": "axis"},
                              lambda **kw: reference.softmax(kw["S"], axis=kw["axis"]),
                              lambda kw: o_softmax(kw["S"], kw["axis"]))

    def ks_axis(rng, T, d, lead):
        return s_axis(rng, T, d, lead) | {"version": "v1"}

    c["kernels.softmax"] = ("kernels", ks_axis, {"S": "scores", "axis": "axis",
                                                 "version": "version"},
                            lambda **kw: kernels.softmax(kw["S"], axis=kw["axis"],
                                                         version=kw["version"], **cpu),
                            lambda kw: o_softmax(kw["S"]))

    def av(rng, T, d, lead):
        return {"A": weights(rng, T, lead)} | base_arrays(rng, T, d, lead, "V")

    c["reference.weighted_sum"] = ("reference", av, {"A": "weights", "V": "values"},
                                   lambda **kw: reference.weighted_sum(kw["A"], kw["V"]),
                                   lambda kw: np.asarray(kw["A"], np.float64)
                                   @ np.asarray(kw["V"], np.float64))
    c["kernels.weighted_sum"] = ("kernels", av, {"A": "weights", "V": "values"},
                                 lambda **kw: kernels.weighted_sum(kw["A"], kw["V"], **cpu),
                                 lambda kw: np.asarray(kw["A"], np.float64)
                                 @ np.asarray(kw["V"], np.float64))

    def qkv(rng, T, d, lead):
        return base_arrays(rng, T, d, lead, "Q", "K", "V") | {"causal": True, "scale": True}

    att_kinds = {"Q": "qk", "K": "qk", "V": "values", "causal": "flag", "scale": "flag"}
    c["reference.attention"] = ("reference", qkv, att_kinds,
                                lambda **kw: reference.attention(**kw),
                                lambda kw: o_attention(**kw))

    def qkv_block(rng, T, d, lead):
        return qkv(rng, T, d, lead) | {"block": 2}

    c["reference.attention_blocked"] = ("reference", qkv_block, att_kinds | {"block": "block"},
                                        lambda **kw: reference.attention_blocked(**kw),
                                        lambda kw: o_attention(kw["Q"], kw["K"], kw["V"],
                                                               kw["causal"], kw["scale"]))

    def kqkv(rng, T, d, lead):
        return qkv(rng, T, d, lead) | {"version": "v2", "fused": False}

    c["kernels.attention"] = ("kernels", kqkv,
                              att_kinds | {"version": "version", "fused": "flag"},
                              lambda **kw: kernels.attention(**kw, **cpu),
                              lambda kw: o_attention(kw["Q"], kw["K"], kw["V"], kw["causal"],
                                                     kw["scale"]))

    def kqkv_fused(rng, T, d, lead):
        return qkv(rng, T, d, lead) | {"fused": True}

    c["kernels.attention(fused)"] = ("kernels", kqkv_fused, att_kinds | {"fused": "flag"},
                                     lambda **kw: kernels.attention(**kw, **cpu),
                                     lambda kw: o_attention(kw["Q"], kw["K"], kw["V"],
                                                            kw["causal"], kw["scale"]))

    def qkvdo(rng, T, d, lead):
        return base_arrays(rng, T, d, lead, "Q", "K", "V", "dO") | {"causal": True,
                                                                   "scale": True}

    bw_kinds = att_kinds | {"dO": "values"}
    c["reference.attention_backward"] = (
        "reference", qkvdo, bw_kinds, lambda **kw: reference.attention_backward(**kw),
        lambda kw: o_backward(**kw))
    c["reference.attention_backward_blocked"] = (
        "reference", lambda *a: qkvdo(*a) | {"block": 2}, bw_kinds | {"block": "block"},
        lambda **kw: reference.attention_backward_blocked(**kw),
        lambda kw: o_backward(kw["Q"], kw["K"], kw["V"], kw["dO"], kw["causal"], kw["scale"]))
    def x_even(rng, T, d, lead):
        # RoPE needs an even d_k: 2, 4, ..., 10 (the "shape" mutation makes it odd).
        return base_arrays(rng, T, 2 * d, lead, "X") | {"offset": 2}

    c["reference.rope"] = ("reference", x_even, {"X": "values"},
                           lambda **kw: reference.rope(kw["X"], offset=kw["offset"]),
                           lambda kw: o_rope(kw["X"], kw["offset"]))
    c["kernels.rope"] = ("kernels", x_even, {"X": "values"},
                         lambda **kw: kernels.rope(kw["X"], offset=kw["offset"], **cpu),
                         lambda kw: o_rope(kw["X"], kw["offset"]))
    if hasattr(kernels, "attention_backward"):
        c["kernels.attention_backward"] = (
            "kernels", qkvdo, bw_kinds, lambda **kw: kernels.attention_backward(**kw, **cpu),
            lambda kw: o_backward(**kw))
    return c


CASES = _cases()
TOLERANCE = {"reference": 1e-4, "kernels": 1e-4}


def _shape_axis(name, fn):
    """Which axis the 'shape' mutation grows so that the call must be refused."""
    if name == "V":
        return -2  # one value row per key
    if name == "A":
        return -1 if "kernels" in fn else -1
    if name == "S":
        return -1
    return -1  # d_k of Q / K / dO


def _shape_refused(fn, name):
    """Is a grown axis of ``name`` refused by ``fn``? (reference allows a few shapes.)"""
    if name == "S":
        return fn == "kernels.causal_mask"  # reference: any (T_q, T_k); softmax: any row length
    if name == "K" and fn == "reference.scores":
        return True  # d_k of K differs from Q's
    return True


@pytest.mark.parametrize("fn", sorted(CASES))
@FUZZ
@given(data=st.data())
def test_fuzz_public_function(fn, data):
    module, build, kinds, call, oracle = CASES[fn]
    seed = data.draw(st.integers(0, 2**16), label="seed")
    rng = np.random.default_rng(seed)
    T = data.draw(st.integers(1, 6), label="T")
    d = data.draw(st.integers(1, 5), label="d")
    lead = data.draw(st.sampled_from([(), (2,)]), label="lead")
    kw = build(rng, T, d, lead)
    target = data.draw(st.sampled_from([None, *kinds]), label="argument")
    expect, tol = "accept", TOLERANCE[module]
    if target is not None:
        kind = kinds[target]
        if kind in ("qk", "scores", "weights", "values"):
            options = [m for m in ARRAY_MUTATIONS
                       if not (m == "lead" and lead != (2,))
                       and not (m == "rank1" and target == "S" and "softmax" in fn)
                       and not (m == "shape" and not _shape_refused(fn, target))
                       and not (m == "empty" and T == 0)
                       and not (m == "lead" and fn.endswith(".rope"))]  # any leading axes
            how = data.draw(st.sampled_from(options), label="mutation")
            kw[target] = mutate_array(kw[target], how, rng, shape_axis=_shape_axis(target, fn))
            expect = array_expectation(module, how, kind)
            if how == "huge" and kind == "qk":
                other = "K" if target == "Q" else "Q"
                kw[other] = mutate_array(kw[other], "huge", rng)
                expect = overflow_expectation(kw["Q"], kw["K"])
            if how == "strided" and kw[target].flags.c_contiguous:
                expect = "accept"  # a one-element row is contiguous after all
            if how == "float16":
                tol = 2e-2
            if how == "huge" and expect == "accept" and kind == "weights":
                tol = 1e-4
        elif kind == "flag":
            how = data.draw(st.sampled_from(FLAG_MUTATIONS), label="mutation")
            kw[target] = mutate_flag(how)
            expect = "accept" if how == "np_bool" else "refuse"
        elif kind == "block":
            how = data.draw(st.sampled_from(BLOCK_MUTATIONS), label="mutation")
            kw[target] = mutate_block(how)
            expect = "accept" if how == "np_int" else "refuse"
        elif kind == "version":
            how = data.draw(st.sampled_from(VERSION_MUTATIONS), label="mutation")
            kw[target] = mutate_version(how)
            expect = "refuse"
        elif kind == "axis":
            how = data.draw(st.sampled_from(AXIS_MUTATIONS), label="mutation")
            kw[target] = mutate_axis(how)
            expect = "refuse"
    names = (target,) if target else ()
    if target in ("Q", "K") and expect == "refuse":
        names = ("Q", "K")
    if target in ("V", "A", "dO", "S") and expect == "refuse":
        names = (target, "Q", "K", "A", "V") if target != "S" else ("S",)

    def check(out):
        close(tol)(out, oracle(kw))

    attempt(lambda: call(**kw), expect=expect, names=names, check=check)


# ---------------------------------------------------------------------------
# Helpers' public functions
# ---------------------------------------------------------------------------

BAD_NUMBERS = [float("nan"), float("inf"), -1.0, 0.0, "1", None, True, [1.0], 1e300]


@FUZZ
@given(p=st.one_of(
    st.lists(st.floats(0, 1), min_size=1, max_size=6).map(lambda v: np.array(v) / max(sum(v), 1e-9)
                                                          if sum(v) > 0 else np.array(v)),
    st.sampled_from([np.array([0.5, np.nan]), np.array([np.inf, 0.0]), np.array([-0.5, 1.5]),
                     np.array([]), "abc", None, np.array([[0.2, 0.9]]), np.array(3.0)])))
def test_fuzz_measures(p, ):
    valid = (isinstance(p, np.ndarray) and p.ndim >= 1 and p.size > 0 and np.isfinite(p).all()
             and (p >= 0).all() and (p <= 1).all()
             and np.all(np.isclose(p.sum(-1), 1, atol=1e-6) | (p.sum(-1) == 0)))
    for fn in (measures.entropy, measures.softmax_jacobian, measures.jacobian_norm):
        def check(out, fn=fn):
            assert np.isfinite(out).all()
        attempt(lambda fn=fn: fn(p), expect="accept" if valid else "refuse", names=("p",),
                check=check)


@FUZZ
@given(d_k=st.one_of(st.integers(1, 64), st.sampled_from([0, -3, 2.5, "8", None, True, 10**9])),
       n=st.one_of(st.integers(1, 50), st.sampled_from([0, -1, 1.5, "4", 10**12])),
       scale=st.sampled_from([True, False, "no", 1, None]))
def test_fuzz_measures_dot_products(d_k, n, scale):
    good_dk = isinstance(d_k, int) and not isinstance(d_k, bool) and 1 <= d_k <= 2**20
    good_n = isinstance(n, int) and 1 <= n <= 10**6
    good_scale = isinstance(scale, bool)
    names = tuple(x for x, ok in (("d_k", good_dk), ("n", good_n), ("scale", good_scale))
                  if not ok)
    expect = "accept" if not names else "refuse"

    def check(out):
        assert out.shape == (n,) and np.isfinite(out).all()

    attempt(lambda: measures.random_dot_products(d_k, n=n, scale=scale), expect=expect,
            names=names, check=check)


@FUZZ
@given(row=st.one_of(st.integers(0, 7), st.sampled_from([-1, 8, 2.0, "1", None, True])),
       temperature=st.one_of(st.floats(0.1, 10),
                             st.sampled_from([0.0, -1.0, float("nan"), float("inf"), "1",
                                              None, 1e-30, 1e30, True])))
def test_fuzz_widgets_row_state(row, temperature):
    good_row = isinstance(row, int) and not isinstance(row, bool) and 0 <= row < widgets.ROW_T
    good_t = (isinstance(temperature, float) and math.isfinite(temperature)
              and 1e-3 <= temperature <= 1e3)
    names = tuple(x for x, ok in (("row", good_row), ("temperature", good_t)) if not ok)

    def check(out):
        s, w, V, o, limits, values = out
        assert np.isfinite(w).all() and np.isfinite(o).all()
        assert abs(w.sum() - 1) < 1e-6

    attempt(lambda: widgets.row_state(row, temperature), expect="refuse" if names else "accept",
            names=names, check=check)


@FUZZ
@given(T=st.one_of(st.integers(4, 12), st.sampled_from([3, 33, 8.0, "8", None, True])),
       masked=st.sampled_from([True, False, "ya", 1, None]),
       scaled=st.sampled_from([True, False, "no", 0.5]),
       row=st.one_of(st.integers(0, 3), st.sampled_from([-1, 40, 1.5, None])),
       kind=st.sampled_from(list(widgets.MASK_KINDS) + ["bogus", None, ["kausal"]]))
def test_fuzz_widgets_mask_state(T, masked, scaled, row, kind):
    good_T = isinstance(T, int) and not isinstance(T, bool) and 4 <= T <= widgets.MASK_T_MAX
    good_row = (isinstance(row, int) and not isinstance(row, bool) and good_T and 0 <= row < T)
    names = tuple(x for x, ok in (("T", good_T), ("masked", isinstance(masked, bool)),
                                  ("scaled", isinstance(scaled, bool)), ("row", good_row),
                                  ("kind", isinstance(kind, str) and kind in widgets.MASK_KINDS))
                  if not ok)

    def check(out):
        S, A, values = out
        assert not np.isnan(A).any()

    attempt(lambda: widgets.mask_state(T, masked, scaled, row, kind=kind),
            expect="refuse" if names else "accept", names=names, check=check)


@FUZZ
@given(d_k=st.sampled_from(list(widgets.D_K_VALUES) + [3, 0, "64", None, 64.5, True]),
       scale=st.sampled_from([True, False, "no", 1, None]))
def test_fuzz_widgets_sharpness_state(d_k, scale):
    good_dk = (isinstance(d_k, int) and not isinstance(d_k, bool) and d_k in widgets.D_K_VALUES)
    names = tuple(x for x, ok in (("d_k", good_dk), ("scale", isinstance(scale, bool))) if not ok)
    attempt(lambda: widgets.sharpness_state(d_k, scale), expect="refuse" if names else "accept",
            names=names)


@FUZZ
@given(M=st.sampled_from(["ok", "list", "neginf", "nan", "rank1", "empty", "string", "none",
                          "rank3", "complex"]),
       row=st.sampled_from([None, 0, 2, -1, 9, "1", 1.5]))
def test_fuzz_plots_heatmap(M, row):
    import matplotlib.pyplot as plt

    base = np.arange(9, dtype=np.float64).reshape(3, 3)
    value = {"ok": base, "list": base.tolist(), "neginf": o_mask(base), "nan": base * np.nan,
             "rank1": base[0], "empty": base[:0], "string": "abc", "none": None,
             "rank3": base[None], "complex": base.astype(complex)}[M]
    good_M = M in ("ok", "list", "neginf", "nan")  # NaN and -inf cells are drawn grey
    good_row = row is None or (isinstance(row, int) and 0 <= row < 3)
    names = tuple(x for x, ok in (("M", good_M), ("highlight_row", good_row)) if not ok)
    fig = attempt(lambda: plots.heatmap(value, "uji", highlight_row=row),
                  expect="refuse" if names else "accept", names=names)
    if fig is not None:
        plt.close(fig)


@FUZZ
@given(scores=st.sampled_from(["ok", "nan", "empty", "rank2", "string", "neginf"]),
       temps=st.sampled_from(["ok", "zero", "nan", "inf", "string", "empty", "none"]))
def test_fuzz_plots_softmax_temperature(scores, temps):
    import matplotlib.pyplot as plt

    s = {"ok": np.array([1.0, 2.0, 0.5]), "nan": np.array([1.0, np.nan]), "empty": np.array([]),
         "rank2": np.ones((2, 2)), "string": "abc", "neginf": np.array([1.0, -np.inf])}[scores]
    t = {"ok": [0.5, 1, 2], "zero": [0, 1], "nan": [float("nan")], "inf": [float("inf")],
         "string": ["a"], "empty": [], "none": None}[temps]
    names = tuple(x for x, ok in (("scores", scores in ("ok", "neginf")),
                                  ("temperatures", temps == "ok")) if not ok)
    fig = attempt(lambda: plots.softmax_temperature(s, t),
                  expect="refuse" if names else "accept", names=names)
    if fig is not None:
        plt.close(fig)


def test_zz_counts():
    """Print (and optionally save) the counts of the whole file; check the targets."""
    total_refused = COUNTS["refused clearly"] + COUNTS["refused poorly"]
    line = (f"\nfuzz: dicoba {COUNTS['tried']}, ditolak jelas {COUNTS['refused clearly']}, "
            f"ditolak kurang jelas {COUNTS['refused poorly']}, diterima dan benar "
            f"{COUNTS['accepted correctly']}, crash {COUNTS['crashed']}")
    print(line)
    path = os.environ.get("ATENSI_FUZZ_COUNTS")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(dict(COUNTS), f, indent=1)
    if COUNTS["tried"]:
        assert COUNTS["crashed"] == 0
        assert total_refused == 0 or COUNTS["refused clearly"] / total_refused >= 0.95, POOR
