"""Fuzz: good and bad input to every public function of reference, kernels (cpu),
cpu_fast, loops, masks, model, train, corpus, explorers.attention_maps, the helpers
(measures, the explorers' state functions, plots) and the command-line tools.

Each example starts from valid arguments and either keeps them or spoils one
argument with one mutation (wrong dtype, list, None, NaN, +inf, -inf, 1e19,
masked array, strided view, wrong shape, empty, flag that is not a bool,
bad block/version/axis...). For each mutation the expected outcome is known:

- accepted: the result must match an independent float64 oracle, without NaN;
- refused: before any work, with TypeError/ValueError/MemoryError whose
  Indonesian message names the spoiled argument ("refused clearly").

Anything else fails the test: a crash (IndexError, ZeroDivisionError, an
English NumPy error...), a silent answer on bad input, NaN on finite input, or
a refusal of valid input, a call that runs past ``HANG_SECONDS``. The counts
(tried, refused clearly, refused poorly, accepted correctly, garbage, crash,
hang) are printed at the end and written to
``$ATENSI_FUZZ_COUNTS`` when that is set. Examples are small: the whole file
takes well under a minute.
"""

from __future__ import annotations

import json
import math
import os
import signal
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from atensi import kernels, loops, masks, measures, plots, reference
from atensi.bench import cpu_fast
from atensi.explorers import mask as mask_explorer, row as row_explorer, sharpness

COUNTS: Counter = Counter()
POOR: list = []
FUZZ = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
# A refusal is "clear" when it names the argument and reads as Indonesian.
INDONESIAN = ("harus", "tetapi", "yang diterima", "Ubah", "Pakai", "periksa", "kecilkan",
              "melebihi", "berisi", "tidak", "terlalu", "bukan", "kosong", "Berikan", "rusak",
              "Buat ulang")
REFUSALS = (TypeError, ValueError, MemoryError, FileNotFoundError, IsADirectoryError)


def _names_argument(message: str, names) -> bool:
    return any(f"'{n}'" in message or f"{n}=" in message for n in names)


class _Hang(BaseException):
    """Raised by the alarm when one call runs past HANG_SECONDS."""


HANG_SECONDS = 60


def _alarm(signum, frame):
    raise _Hang


def attempt(call, *, expect: str, names=(), check=None, named=None):
    """Run ``call``; count and judge the outcome (see the module docstring).

    ``named(message)``: whether a refusal names the spoiled argument (default:
    one of ``names`` quoted, as ``'name'`` or ``name=``)."""
    COUNTS["tried"] += 1
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        out = call()
    except _Hang:
        COUNTS["hang"] += 1
        pytest.fail(f"macet: lebih dari {HANG_SECONDS} s ({names})")
    except REFUSALS as err:
        message = str(err)
        assert expect in ("refuse", "either"), f"masukan sah ditolak: {type(err).__name__}: {message}"
        said = named(message) if named else _names_argument(message, names)
        if said and any(w in message for w in INDONESIAN):
            COUNTS["refused clearly"] += 1
        else:
            COUNTS["refused poorly"] += 1
            POOR.append((names, message))
            pytest.fail(f"penolakan tidak jelas (harus menyebut {names}): {message}")
        return None
    except Exception as err:  # noqa: BLE001 - any other exception is a crash
        COUNTS["crashed"] += 1
        pytest.fail(f"crash: {type(err).__name__}: {err}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    if expect not in ("accept", "either"):
        COUNTS["garbage"] += 1
        pytest.fail(f"masukan salah ({names}) diterima diam-diam")
    if check is not None:
        try:
            check(out)
        except AssertionError:
            COUNTS["garbage"] += 1
            raise
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
VERSION_MUTATIONS = ("unknown", "list", "none", "int", "upper")
# impl=None is valid: it picks the best version the GPU runs.
IMPL_MUTATIONS = ("unknown", "list", "int", "upper", "bare", "bool")
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


def _arrays(kinds) -> int:
    return sum(kind in ("qk", "scores", "weights", "values") for kind in kinds.values())


def mutate_flag(how):
    return {"str": "no", "half": 0.5, "one": 1, "none": None, "np_bool": np.bool_(True)}[how]


def mutate_block(how):
    return {"zero": 0, "negative": -2, "float": 2.5, "str": "4", "bool": True,
            "huge": 10**9, "np_int": np.int64(3)}[how]


def mutate_version(how):
    return {"unknown": "v9", "list": ["v1"], "none": None, "int": 2, "upper": "V1"}[how]


def mutate_impl(how):
    return {"unknown": "chain-v9", "list": ["chain-v1"], "none": None, "int": 2,
            "upper": "CHAIN-V1", "bare": "fused", "bool": True}[how]


def mutate_axis(how):
    return {"far": 5, "str": "x", "float": 1.0, "bool": True}[how]


# Which array mutations each module accepts (with the right answer).
REFERENCE_OK = {"list", "float64", "float16", "strided"}
KERNELS_OK: set = set()


def array_expectation(module, how, role):
    """'accept' or 'refuse' for mutation ``how`` of an array with ``role``."""
    ok = REFERENCE_OK if module in ("reference", "loops") else KERNELS_OK
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
        return qkv(rng, T, d, lead) | {"impl": "chain-v2"}

    c["kernels.attention"] = ("kernels", kqkv, att_kinds | {"impl": "impl"},
                              lambda **kw: kernels.attention(**kw, **cpu),
                              lambda kw: o_attention(kw["Q"], kw["K"], kw["V"], kw["causal"],
                                                     kw["scale"]))

    def kqkv_fused(rng, T, d, lead):
        return qkv(rng, T, d, lead) | {"impl": "fused-v1"}

    c["kernels.attention(fused)"] = ("kernels", kqkv_fused, att_kinds | {"impl": "impl"},
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
    c["cpu_fast.attention_cpu_fast"] = (
        "reference", lambda *a: qkv(*a) | {"block": 2, "threads": 2},
        att_kinds | {"block": "block", "threads": "block"},
        lambda **kw: cpu_fast.attention_cpu_fast(**kw),
        lambda kw: o_attention(kw["Q"], kw["K"], kw["V"], kw["causal"], kw["scale"]))
    c["loops.scores"] = ("loops", qk, {"Q": "qk", "K": "qk", "scale": "flag"},
                         lambda **kw: loops.scores(kw["Q"], kw["K"], scale=kw["scale"]),
                         lambda kw: o_scores(kw["Q"], kw["K"], kw["scale"]))
    c["loops.causal_mask"] = ("loops", s_only, {"S": "scores"},
                              lambda **kw: loops.causal_mask(kw["S"]), lambda kw: o_mask(kw["S"]))
    c["loops.softmax"] = ("loops", lambda *a: {"S": scores_matrix(a[0], a[1], a[3], masked=True)},
                          {"S": "scores"}, lambda **kw: loops.softmax(kw["S"]),
                          lambda kw: o_softmax(kw["S"]))
    c["loops.weighted_sum"] = ("loops", av, {"A": "weights", "V": "values"},
                               lambda **kw: loops.weighted_sum(kw["A"], kw["V"]),
                               lambda kw: np.asarray(kw["A"], np.float64)
                               @ np.asarray(kw["V"], np.float64))
    c["loops.attention"] = ("loops", qkv, att_kinds, lambda **kw: loops.attention(**kw),
                            lambda kw: o_attention(**kw))
    if hasattr(kernels, "attention_backward"):
        c["kernels.attention_backward"] = (
            "kernels", qkvdo, bw_kinds, lambda **kw: kernels.attention_backward(**kw, **cpu),
            lambda kw: o_backward(**kw))
    return c


CASES = _cases()
TOLERANCE = {"reference": 1e-4, "kernels": 1e-4, "loops": 1e-4}


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


@pytest.mark.slow
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
    if module == "loops":
        lead = ()  # one head: the loops take matrices only
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
                       # other leading axes are wrong only next to another array
                       and not (m == "lead" and _arrays(kinds) == 1)]
            how = data.draw(st.sampled_from(options), label="mutation")
            kw[target] = mutate_array(kw[target], how, rng, shape_axis=_shape_axis(target, fn))
            expect = array_expectation(module, how, kind)
            if how == "huge" and kind == "qk":
                other = "K" if target == "Q" else "Q"
                kw[other] = mutate_array(kw[other], "huge", rng)
                expect = overflow_expectation(kw["Q"], kw["K"])
                if module == "loops" and expect == "refuse":
                    expect = "either"  # the loops add in float64: no overflow to refuse
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
        elif kind == "impl":
            how = data.draw(st.sampled_from(IMPL_MUTATIONS), label="mutation")
            kw[target] = mutate_impl(how)
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
def test_fuzz_explorer_row_state(row, temperature):
    good_row = isinstance(row, int) and not isinstance(row, bool) and 0 <= row < row_explorer.T
    good_t = (isinstance(temperature, float) and math.isfinite(temperature)
              and 1e-3 <= temperature <= 1e3)
    names = tuple(x for x, ok in (("row", good_row), ("temperature", good_t)) if not ok)

    def check(out):
        s, w, V, o, limits, values = out
        assert np.isfinite(w).all() and np.isfinite(o).all()
        assert abs(w.sum() - 1) < 1e-6

    attempt(lambda: row_explorer.state(row, temperature), expect="refuse" if names else "accept",
            names=names, check=check)


@FUZZ
@given(T=st.one_of(st.integers(4, 12), st.sampled_from([3, 33, 8.0, "8", None, True])),
       masked=st.sampled_from([True, False, "ya", 1, None]),
       scaled=st.sampled_from([True, False, "no", 0.5]),
       row=st.one_of(st.integers(0, 3), st.sampled_from([-1, 40, 1.5, None])),
       kind=st.sampled_from(list(mask_explorer.KINDS) + ["bogus", None, ["kausal"]]))
def test_fuzz_explorer_mask_state(T, masked, scaled, row, kind):
    good_T = isinstance(T, int) and not isinstance(T, bool) and 4 <= T <= mask_explorer.T_MAX
    good_row = (isinstance(row, int) and not isinstance(row, bool) and good_T and 0 <= row < T)
    names = tuple(x for x, ok in (("T", good_T), ("masked", isinstance(masked, bool)),
                                  ("scaled", isinstance(scaled, bool)), ("row", good_row),
                                  ("kind", isinstance(kind, str) and kind in mask_explorer.KINDS))
                  if not ok)

    def check(out):
        S, A, values = out
        assert not np.isnan(A).any()

    attempt(lambda: mask_explorer.state(T, masked, scaled, row, kind=kind),
            expect="refuse" if names else "accept", names=names, check=check)


@FUZZ
@given(d_k=st.sampled_from(list(sharpness.D_K_VALUES) + [3, 0, "64", None, 64.5, True]),
       scale=st.sampled_from([True, False, "no", 1, None]))
def test_fuzz_explorer_sharpness_state(d_k, scale):
    good_dk = (isinstance(d_k, int) and not isinstance(d_k, bool) and d_k in sharpness.D_K_VALUES)
    names = tuple(x for x, ok in (("d_k", good_dk), ("scale", isinstance(scale, bool))) if not ok)
    attempt(lambda: sharpness.state(d_k, scale), expect="refuse" if names else "accept",
            names=names)


@FUZZ
@given(M=st.sampled_from(["ok", "list", "neginf", "nan", "rank1", "empty", "string", "none",
                          "rank3", "complex"]),
       row=st.sampled_from([None, 0, 2, -1, 9, "1", 1.5]))
@pytest.mark.slow
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
@given(weights=st.sampled_from(["ok", "nan", "empty", "rank1", "string", "rows"]),
       temps=st.sampled_from(["ok", "zero", "nan", "inf", "string", "empty", "none"]))
def test_fuzz_plots_softmax_temperature(weights, temps):
    import matplotlib.pyplot as plt

    good = np.array([[0.5, 0.3, 0.2]] * 3)
    w = {"ok": good, "nan": good * np.nan, "empty": np.zeros((3, 0)), "rank1": good[0],
         "string": "abc", "rows": good[:2]}[weights]
    t = {"ok": [0.5, 1, 2], "zero": [0, 1, 2], "nan": [float("nan")] * 3,
         "inf": [float("inf")] * 3, "string": ["a"], "empty": [], "none": None}[temps]
    names = tuple(x for x, ok in (("temperatures", temps == "ok"),
                                  ("weights", weights == "ok")) if not ok)
    fig = attempt(lambda: plots.softmax_temperature(t, w, [1.0, 1.0, 1.0]),
                  expect="refuse" if names else "accept", names=names)
    if fig is not None:
        plt.close(fig)


# ---------------------------------------------------------------------------
# The newer modules: masks, model, train, corpus, explorers.attention_maps
# ---------------------------------------------------------------------------

BAD_INTS = [0, -1, 2.5, "4", None, True, np.float64(3.0), [3]]


def _good_int(v, low=1, high=None):
    return (isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
            and v >= low and (high is None or v <= high))


@FUZZ
@given(fn=st.sampled_from(["causal", "sliding_window", "prefix_lm", "padding"]),
       T=st.one_of(st.integers(1, 6), st.sampled_from(BAD_INTS)),
       w=st.one_of(st.integers(0, 8), st.sampled_from(BAD_INTS + [10**30])),
       lengths=st.sampled_from([[2, 0, 1], [1], [], [[1, 2], [3]], [1.5], [-1], [99], "ab",
                                np.array([True]), None]),
       additive=st.sampled_from([False, True, "ya", 1, None]))
def test_fuzz_masks_makers(fn, T, w, lengths, additive):
    good_T = _good_int(T)
    names = [] if good_T else ["T"]
    if fn == "sliding_window" and not _good_int(w):
        names.append("w")
    if fn == "prefix_lm" and not (_good_int(w, low=0) and good_T and w <= T):
        names.append("p")
    if fn == "padding":
        arr = np.asarray(lengths, dtype=object)
        good = (isinstance(lengths, list) and arr.ndim == 1 and arr.size > 0
                and all(_good_int(v, low=0) and good_T and v <= T for v in lengths))
        if not good:
            names.append("lengths")
    if not isinstance(additive, bool):
        names.append("additive")
    call = {"causal": lambda: masks.causal(T, additive=additive),
            "sliding_window": lambda: masks.sliding_window(T, w, additive=additive),
            "prefix_lm": lambda: masks.prefix_lm(T, w, additive=additive),
            "padding": lambda: masks.padding(lengths, T, additive=additive)}[fn]

    def check(out):
        i, j = np.arange(T)[:, None], np.arange(T)[None, :]
        want = {"causal": lambda: j <= i, "sliding_window": lambda: (j <= i) & (j > i - w),
                "prefix_lm": lambda: (j <= i) | (j < w),
                "padding": lambda: ((np.arange(T)[None, :] < np.array(lengths)[:, None])[:, :, None]
                                    & (np.arange(T)[None, :] < np.array(lengths)[:, None])[:, None, :])}[fn]()
        got = out if not additive else out == 0
        assert got.shape == want.shape and (got == want).all()
        if additive:
            assert set(np.unique(out)) <= {0.0, -np.inf}

    attempt(call, expect="refuse" if names else "accept",
            names=tuple(names) + (("mask ke-0",) if not names else ()), check=check)


@FUZZ
@given(S=st.sampled_from(["ok", "neginf", "nan", "posinf", "int", "masked", "rank1", "list",
                          "shape"]),
       visible=st.sampled_from(["ok", "float", "masked", "rank1", "broadcast", "list_bool"]),
       dtype=st.sampled_from([np.float32, np.float64, "float16", np.int32, bool, "x", None]))
def test_fuzz_masks_apply_combine_additive(S, visible, dtype):
    base = np.arange(9, dtype=np.float64).reshape(3, 3)
    vis = masks.causal(3)
    s_value = {"ok": base, "neginf": o_mask(base), "nan": base * np.nan, "posinf": base + np.inf,
               "int": base.astype(int), "masked": np.ma.masked_array(base), "rank1": base[0],
               "list": base.tolist(), "shape": np.ones((3, 4))}[S]
    v_value = {"ok": vis, "float": vis.astype(float), "masked": np.ma.masked_array(vis),
               "rank1": vis[0], "broadcast": np.broadcast_to(vis, (2, 3, 3)),
               "list_bool": vis.tolist()}[visible]
    good_v = visible in ("ok", "broadcast", "list_bool")
    good_s = S in ("ok", "neginf", "list")
    names = tuple(n for n, ok in (("S", good_s), ("visible", good_v)) if not ok)

    def check_apply(out):
        want = np.where(np.asarray(v_value), np.asarray(s_value), -np.inf)
        assert out.shape == want.shape and np.array_equal(np.isneginf(out), np.isneginf(want))

    attempt(lambda: masks.apply(s_value, v_value), expect="refuse" if names else "accept",
            names=names or ("S",), check=check_apply)
    good_dtype = dtype is None or (dtype != "x" and np.dtype(dtype).kind == "f")  # None: float64
    names = tuple(n for n, ok in (("visible", good_v), ("dtype", good_dtype)) if not ok)
    attempt(lambda: masks.to_additive(v_value, dtype=dtype), expect="refuse" if names else "accept",
            names=names or ("visible",),
            check=lambda out: np.array_equal(out == 0, np.asarray(v_value)))
    names = () if good_v else ("mask ke-1",)
    attempt(lambda: masks.combine(vis, v_value), expect="refuse" if names else "accept",
            names=names or ("mask ke-0",),
            check=lambda out: np.array_equal(out, np.asarray(v_value) & vis))


def _tiny_model():
    from atensi.model import Config, TinyGPT

    return TinyGPT(Config(vocab=5, T=8, d_model=8, n_head=2, n_layer=1, d_mlp=8), "abcde")


MODEL = _tiny_model()


@FUZZ
@given(prompt=st.sampled_from(["ab", "", "abz", None, 5, "abcdeabcde"]),
       n=st.one_of(st.integers(0, 4), st.sampled_from([-1, 1.5, "2", True, None])),
       temperature=st.one_of(st.floats(0, 5), st.sampled_from(
           [1e-300, np.float32(0.5), -1.0, float("nan"), float("inf"), True, "1", None])),
       seed=st.one_of(st.integers(0, 9), st.sampled_from([-1, 1.5, "0", True, None])),
       kv_cache=st.sampled_from([True, False, 1, "ya"]),
       return_logits=st.sampled_from([False, True, 0, None]))
@pytest.mark.slow
def test_fuzz_model_generate(prompt, n, temperature, seed, kv_cache, return_logits):
    good_prompt = isinstance(prompt, str) and prompt and set(prompt) <= set("abcde")
    good_n = _good_int(n, low=0)
    names = [x for x, ok in (
        ("prompt", isinstance(prompt, str) and prompt != ""), ("n", good_n),
        ("temperature", isinstance(temperature, (int, float, np.floating))
         and not isinstance(temperature, bool) and math.isfinite(temperature) and temperature >= 0),
        ("seed", _good_int(seed, low=0)), ("kv_cache", isinstance(kv_cache, bool)),
        ("return_logits", isinstance(return_logits, bool))) if not ok]
    if not names and not good_prompt:
        names = ["prompt"]  # a character the model does not know
    too_long = isinstance(prompt, str) and good_n and len(prompt) + n > MODEL.config.T
    if too_long:
        names += ["prompt", "n"]  # checked before the other arguments
    message_names = tuple(names)

    def check(out):
        text = out[0] if return_logits else out
        assert isinstance(text, str) and len(text) == n and set(text) <= set("abcde")
        if return_logits:
            assert out[1].shape == (n, 5) and np.isfinite(out[1]).all()

    attempt(lambda: MODEL.generate(prompt, n, temperature=temperature, seed=seed,
                                   kv_cache=kv_cache, return_logits=return_logits),
            expect="refuse" if names else "accept", names=message_names, check=check)


@FUZZ
@given(ids=st.sampled_from([[0, 4], [], [-1], [5], [1.7], ["a"], np.array([[1, 2]]),
                            np.array([True])]),
       targets=st.sampled_from(["ok", "negative", "big", "float", "shape", "broadcast"]),
       lr=st.sampled_from([1e-3, np.float32(1e-2), 0.0, -1.0, float("nan"), "x", None, True]),
       betas=st.sampled_from([(0.9, 0.99), (1.0, 0.9), (-0.1, 0.9), (0.9,), "ab", None]))
def test_fuzz_model_pieces(ids, targets, lr, betas):
    from atensi.model import Adam, cross_entropy

    arr = np.asarray(ids)
    good_ids = arr.size == 0 or (arr.dtype.kind in "iu" and arr.min() >= 0 and arr.max() < 5)
    attempt(lambda: MODEL.decode(ids), expect="accept" if good_ids else "refuse",
            names=("ids",), check=lambda out: len(out) == arr.size)
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((2, 3, 5))
    t = {"ok": np.array([[0, 1, 4], [2, 2, 3]]), "negative": np.array([[0, 1, -1], [0, 0, 0]]),
         "big": np.full((2, 3), 5), "float": np.zeros((2, 3)), "shape": np.zeros((3, 2), int),
         "broadcast": np.zeros((1, 3), int)}[targets]

    def check_ce(out):
        loss, grad = out
        p = np.exp(logits - logits.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        want = -np.log(np.take_along_axis(p, t[..., None], -1)).mean()
        assert abs(loss - want) < 1e-9 and np.isfinite(grad).all()

    attempt(lambda: cross_entropy(logits, t), expect="accept" if targets == "ok" else "refuse",
            names=("targets",), check=check_ce)
    good_lr = (isinstance(lr, (float, np.floating)) and math.isfinite(lr) and lr > 0)
    good_b = isinstance(betas, tuple) and len(betas) == 2 and all(0 <= b < 1 for b in betas)
    names = tuple(x for x, ok in (("lr", good_lr), ("betas", good_b)) if not ok)
    if names == ("betas",) and isinstance(betas, tuple) and len(betas) == 2:
        names = ("betas", "betas[0]")
    attempt(lambda: Adam(MODEL.params, lr=lr, betas=betas), expect="refuse" if names else "accept",
            names=names)


@FUZZ
@given(field=st.sampled_from(["vocab", "T", "d_model", "n_head", "n_layer", "d_mlp", "scale",
                              "seed", "chars"]),
       value=st.sampled_from([0, -2, 2.5, "4", None, True, 3]))
def test_fuzz_model_construction(field, value):
    from atensi.model import Config, TinyGPT

    kw = dict(vocab=4, T=4, d_model=4, n_head=2, n_layer=1, d_mlp=4, scale=True, seed=0)
    chars = "abcd"
    if field == "chars":
        chars = {0: "", -2: "abca", 2.5: ["a", "b", "c", "d"], "4": "abcdef", None: None,
                 True: True, 3: "abc"}[value]
        good = False
    else:
        kw[field] = value
        if field == "scale":
            good = isinstance(value, bool)
        elif field == "seed":
            good = _good_int(value, low=0)
        else:
            good = _good_int(value) and kw["d_model"] % kw["n_head"] == 0 and (
                field != "vocab" or value == 4)
    names = (field, "d_model", "n_head") if field in ("d_model", "n_head") else (field,)
    attempt(lambda: TinyGPT(Config(**kw), chars), expect="accept" if good else "refuse",
            names=names + ("chars",) if field == "vocab" else names)


@settings(FUZZ, max_examples=25)
@given(arg=st.sampled_from(["steps", "batch_size", "eval_every", "warmup", "lr", "clip", "seed",
                            "log", "corpus", None]),
       value=st.sampled_from([0, -5, 1.5, "x", None, True, float("nan")]))
@pytest.mark.slow
def test_fuzz_train(arg, value):
    from atensi import corpus, train

    c = corpus.load()
    kw = dict(steps=1, batch_size=2, lr=1e-3, warmup=0, eval_every=1, clip=1.0, seed=0, log=None)
    model = _tiny_model_for(c)
    if arg not in (None, "corpus"):
        kw[arg] = value
    good = arg is None or (arg == "warmup" and value == 0) or (arg == "seed" and value == 0) or (
        arg == "log" and value is None)
    target = c if arg != "corpus" else value
    attempt(lambda: train.train(model, target, **kw), expect="accept" if good else "refuse",
            names=(arg,) if arg else (),
            check=lambda out: np.isfinite(out["val"]).all() and len(out["train"]) == 1)


def _tiny_model_for(c):
    from atensi.model import Config, TinyGPT

    return TinyGPT(Config(vocab=len(c.chars), T=8, d_model=8, n_head=2, n_layer=1, d_mlp=8),
                   c.chars)


@settings(FUZZ, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(kind=st.sampled_from(["missing", "folder", "latin1", "empty", "junk", "int", "list"]),
       reader=st.sampled_from(["corpus", "experiment", "weights"]))
def test_fuzz_file_readers(kind, reader, tmp_path_factory):
    from atensi import corpus, tasks
    from atensi.model import TinyGPT

    folder = tmp_path_factory.mktemp("baca")
    path = {"missing": folder / "tidak-ada.txt", "folder": folder, "latin1": folder / "l.txt",
            "empty": folder / "e.txt", "junk": folder / "j.txt", "int": 5, "list": [1]}[kind]
    if kind == "latin1":
        path.write_bytes("ç".encode("latin-1") * 50)
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "junk":
        path.write_bytes(b"PK\x03\x04 bukan" * 30)
    read = {"corpus": corpus.load, "experiment": lambda p: tasks.load_experiment("teks", p),
            "weights": TinyGPT.load}[reader]
    names = (str(path),) if kind not in ("int", "list") else ("path",)
    attempt(lambda: read(path), expect="refuse", names=names)


@FUZZ
@given(A=st.sampled_from(["ok", "shape", "nan", "list", "string"]),
       text=st.sampled_from(["abcd", "ab", "", 5, None]))
def test_fuzz_attention_maps_head_summary(A, text):
    from atensi.explorers import attention_maps

    T = len(text) if isinstance(text, str) else 4
    base = o_softmax(o_mask(np.zeros((max(T, 1), max(T, 1)))))
    value = {"ok": base, "shape": base[:, :-1] if T > 1 else np.ones((1, 2)),
             "nan": base * np.nan, "list": base.tolist(), "string": "A"}[A]
    good_text = isinstance(text, str) and len(text) >= 3
    names = tuple(x for x, ok in (("text", good_text), ("A", A in ("ok", "list"))) if not ok)

    def check(out):
        assert all(0 <= v <= 1 for v in out.values())

    attempt(lambda: attention_maps.head_summary(value, text),
            expect="refuse" if names else "accept", names=names, check=check)


@FUZZ
@given(T_k=st.one_of(st.integers(1, 10**7), st.sampled_from(BAD_INTS)),
       itemsize=st.sampled_from([2, 4, 8, 0, -4, 4.0, "4", None, True]),
       step=st.one_of(st.integers(0, 60), st.sampled_from(BAD_INTS)),
       warmup=st.one_of(st.integers(0, 60), st.sampled_from([-5, 1.5, "5", None, True])),
       lr=st.sampled_from([1e-3, np.float32(0.1), 0.0, -1.0, float("nan"), "x", None]))
def test_fuzz_cpu_fast_block_and_learning_rate(T_k, itemsize, step, warmup, lr):
    from atensi import training_loop

    names = tuple(x for x, ok in (("T_k", _good_int(T_k)), ("itemsize", _good_int(itemsize, 1, 16)))
                  if not ok)
    attempt(lambda: cpu_fast.auto_block(T_k, itemsize), expect="refuse" if names else "accept",
            names=names, check=lambda out: 16 <= out <= 128 and out % 16 == 0)
    good_lr = isinstance(lr, (float, np.floating)) and math.isfinite(lr) and lr > 0
    names = tuple(x for x, ok in (("step", _good_int(step, low=0)), ("lr", good_lr),
                                  ("warmup", _good_int(warmup, low=0))) if not ok)

    def check(out):
        assert math.isfinite(out) and 0 <= out <= lr

    attempt(lambda: training_loop.learning_rate(step, 50, lr, warmup),
            expect="refuse" if names else "accept", names=names, check=check)


CLI_TOOLS = {
    "train": lambda argv: __import__("atensi.train", fromlist=["main"]).main(argv),
    "corpus": lambda argv: __import__("atensi.corpus", fromlist=["main"]).main(argv),
    "bench": lambda argv: __import__("atensi.bench.cli", fromlist=["main"]).main(argv),
    "kernels": lambda argv: __import__("atensi.kernels.cli", fromlist=["main"]).main(argv),
}
CLI_BAD = [["--steps", "x"], ["--steps"], ["--steps", "0"], ["--bogus"], ["--out"],
           ["--experiment", "z"], ["--device", "tpu"], ["--preset", "x"], ["--json"],
           ["--arch"], ["-x"], ["--quick", "extra", "args", "--steps=-1"]]


@settings(FUZZ, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(tool=st.sampled_from(sorted(CLI_TOOLS)), argv=st.sampled_from(CLI_BAD))
def test_fuzz_command_lines(tool, argv, capsys):
    """Bad arguments: exit 2 (or 1 for a file the tool cannot read) with one Indonesian
    line naming the option; nothing runs."""
    known = {"train": ("--steps", "--out", "--experiment", "--quick"),
             "corpus": ("--out",), "bench": ("--device", "--preset", "--json", "--quick"),
             "kernels": ("--arch", "--tabel")}[tool]
    if tool == "kernels" and argv in (["--out"], ["--steps", "x"]):
        return  # "--out": an unknown option, like the others below
    if tool == "train" and argv == ["--quick", "extra", "args", "--steps=-1"]:
        argv = ["extra"]

    def call():
        try:
            code = CLI_TOOLS[tool](argv)
        except SystemExit as exit_:
            code = exit_.code
        err = capsys.readouterr().err.strip()
        if code in (0, None):
            return code
        lines = err.splitlines()
        assert len(lines) == 1, err
        raise ValueError(lines[0])

    def named(line):
        return ("Pemakaian:" in line
                and any(a.split("=")[0] in line for a in argv if a.startswith("-") or a == "extra"))

    out = attempt(call, expect="refuse", names=tuple(argv) + known, named=named)
    assert out is None


def test_zz_counts():
    """Print (and optionally save) the counts of the whole file; check the targets."""
    total_refused = COUNTS["refused clearly"] + COUNTS["refused poorly"]
    line = (f"\nfuzz: dicoba {COUNTS['tried']}, ditolak jelas {COUNTS['refused clearly']}, "
            f"ditolak kurang jelas {COUNTS['refused poorly']}, diterima dan benar "
            f"{COUNTS['accepted correctly']}, sampah {COUNTS['garbage']}, crash "
            f"{COUNTS['crashed']}, macet {COUNTS['hang']}")
    print(line)
    path = os.environ.get("ATENSI_FUZZ_COUNTS")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            keys = ("tried", "refused clearly", "refused poorly", "accepted correctly",
                    "garbage", "crashed", "hang")
            json.dump({k: COUNTS[k] for k in keys}, f, indent=1)
    if COUNTS["tried"]:
        assert COUNTS["crashed"] == COUNTS["garbage"] == COUNTS["hang"] == 0
        assert total_refused == 0 or COUNTS["refused clearly"] / total_refused >= 0.95, POOR
