"""The bank/sector explorer: one warp of the real fused kernels, replayed from the
emulator's addresses (atensi.cudacpu.profile(warp=...))."""

import numpy as np
import pytest

from atensi.explorers import bank


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_the_replayed_kernel_computes_attention(version):
    error, requests = bank.replay(version, False)
    assert error < 1e-5
    assert any(r.space == "shared" for r in requests) and any(r.space == "global" for r in requests)


def test_v2_kt_swizzle_takes_an_8_way_conflict_to_none():
    _, with_swizzle = bank.state("v2", "K", False)
    _, plain = bank.state("v2", "K", True)
    assert (with_swizzle["wavefronts"], with_swizzle["ideal"], with_swizzle["degree"]) == (4, 4, 1)
    assert (plain["wavefronts"], plain["ideal"], plain["degree"]) == (32, 4, 8)
    # Without the swizzle the 8 lanes of one phase read 8 rows at the same bank.
    assert len(set(plain["keys"][:8])) == 1 and len(set(with_swizzle["keys"][:8])) == 8
    fig, values, text = bank.render("v2", "K", True)
    assert "konflik 8 arah" in text and "32 gelombang" in text
    assert "Dihitung dari jalannya kernel di emulator" in text


def test_v2_qs_reads_are_broadcasts_within_each_phase():
    _, v = bank.state("v2", "Q", False)
    assert v["distinct"] == 4 and v["phases"] == [1, 1, 1, 1]
    addresses = v["addresses"]
    assert all(len({addresses[lane] for lane in range(p * 8, p * 8 + 8)}) == 1 for p in range(4))


def test_v1_skew_of_4_floats_removes_a_2_way_conflict():
    _, skewed = bank.state("v1", "K", False)
    _, plain = bank.state("v1", "K", True)
    assert (skewed["wavefronts"], skewed["ideal"]) == (1, 1)
    assert (plain["wavefronts"], plain["degree"]) == (2, 2)


def test_v1_q_load_touches_one_sector_per_lane():
    _, v = bank.state("v1", "Q", False)
    assert v["space"] == "global" and (v["sectors"], v["ideal"]) == (32, 4)
    assert len(set(v["keys"])) == 32
    _, _, text = bank.render("v1", "Q", False)
    assert "32 sektor" in text


@pytest.mark.parametrize("args, error, name", [
    (("v3", "K", False), ValueError, "'version'"),
    (("v2", "V", False), ValueError, "'array'"),
    (("v2", "K", "ya"), TypeError, "'plain'"),
])
def test_arguments_are_refused_by_name(args, error, name):
    with pytest.raises(error, match=name):
        bank.state(*args)


def test_static_twin_has_a_frame_for_every_choice():
    twin = bank.static()
    assert len(twin.frames) == 8
    assert twin.name == bank.NAME
