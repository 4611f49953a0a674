"""atensi.kernels.sass: the static SASS instruction mix per kernel (no GPU).

The parser on small hand-written listings (groups, the loop found from a
backward branch, FFMA share; HMMA FLOP and the densest MMA loop); real
NVRTC + nvdisasm runs when
both are installed: fused v2's register tiles give its inner loop a larger FFMA
share than v1's, fused v3 issues HMMA where v2 has none; and
``python -m atensi.kernels --sass``.
"""

import functools
import subprocess
import sys
from pathlib import Path

import pytest

from atensi.kernels import sass

ROOT = Path(__file__).resolve().parents[1]

LISTING = """
//--------------------- .text.k --------------------------
.text.k:
        /*0000*/                   LDG.E R2, desc[UR4][R2.64] ;
        /*0010*/                   MOV R4, RZ ;
.L_x_0:
        /*0020*/                   LDS.128 R8, [R3] ;
        /*0030*/                   FFMA.FTZ R4, R8, R9, R4 ;
        /*0040*/                   FFMA.FTZ R4, R10, R11, R4 ;
        /*0050*/                   SHFL.BFLY PT, R5, R4, 0x1, 0x1f ;
        /*0060*/               @P0 BRA `(.L_x_0) ;
        /*0070*/                   FADD.FTZ R4, R4, R5 ;
        /*0080*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0090*/                   STG.E desc[UR4][R6.64], R4 ;
        /*00a0*/                   EXIT ;
"""


def test_parse_sass_groups_and_inner_loop():
    mix = sass.parse_sass(LISTING)["k"]
    assert mix.kernel == {"LDG/LDGSTS/STG": 2, "lainnya": 3, "LDS/STS": 1, "FFMA": 2, "SHFL": 1,
                          "FP lain": 1, "BAR": 1}
    # The loop: 0x20 .. 0x60 (LDS, 2 FFMA, SHFL, BRA).
    assert mix.loop == {"LDS/STS": 1, "FFMA": 2, "SHFL": 1, "lainnya": 1}
    assert mix.share(mix.loop) == pytest.approx(2 / 5)
    # The static mix is no longer a speed bound: that comes from executed counts (kernels.profil).
    assert not hasattr(mix, "peak_bound")


TENSOR_LISTING = """
//--------------------- .text.t --------------------------
.text.t:
        /*0000*/                   MOV R4, RZ ;
.L_x_0:
        /*0010*/                   LD.E R8, [R2.64] ;
        /*0020*/                   HMMA.1684.F32.TF32 R4, R8, R10, R4 ;
        /*0030*/                   HMMA.1684.F32.TF32 R6, R8, R11, R6 ;
        /*0040*/                   FFMA R12, R13, R14, R12 ;
        /*0050*/               @P0 BRA `(.L_x_0) ;
.L_x_1:
        /*0060*/                   FFMA R12, R13, R14, R12 ;
        /*0070*/                   FFMA R12, R13, R14, R12 ;
        /*0080*/                   HMMA.1684.F32.TF32 R4, R8, R10, R4 ;
        /*0090*/                   FMUL R12, R13, R14 ;
        /*00a0*/                   LDS R8, [R3] ;
        /*00b0*/                   LDS R9, [R3+0x4] ;
        /*00c0*/                   LDS R10, [R3+0x8] ;
        /*00d0*/               @P1 BRA `(.L_x_1) ;
        /*00e0*/                   EXIT ;
"""


def test_parse_sass_counts_hmma_and_takes_the_densest_mma_loop():
    mix = sass.parse_sass(TENSOR_LISTING)["t"]
    assert mix.kernel["HMMA"] == 3 and mix.kernel_mma_flops == 3 * 2 * 16 * 8 * 4
    # Loop 0x10 .. 0x50: 2 HMMA in 5 instructions beats 1 HMMA in 8, though the other has more FFMA.
    assert mix.loop == {"LD/ST": 1, "lainnya": 1, "HMMA": 2, "FFMA": 1}
    assert mix.loop_mma_flops == 2 * 1024
    assert mix.share(mix.loop) == pytest.approx(1 / 5)


def test_generic_loads_and_stores_count_as_memory_traffic_not_other():
    listing = """
.text.g:
        /*0000*/                   MOV R4, RZ ;
.L_x_0:
        /*0010*/                   LD.E.128 R8, [R2.64] ;
        /*0020*/                   ST.E [R6.64+0x10], R4 ;
        /*0030*/                   LDC R1, c[0x0][0x28] ;
        /*0040*/                   LDL R5, [R1] ;
        /*0050*/                   STL [R1], R5 ;
        /*0060*/               @P0 BRA `(.L_x_0) ;
        /*0070*/                   EXIT ;
"""
    mix = sass.parse_sass(listing)["g"]
    # Constant-bank loads and local (stack) traffic stay "lainnya": they are not the tiles.
    assert mix.loop == {"LD/ST": 2, "lainnya": 4}
    assert "LD/ST" in sass.GROUPS and sass.group_of("LD") == sass.group_of("ST") == "LD/ST"


def test_mma_flops_reads_the_shape_and_refuses_an_unknown_one():
    assert sass.mma_flops(".1684.F32.TF32") == 1024
    assert sass.mma_flops(".1688.F32.TF32") == 2048
    assert sass.mma_flops(".16816.F32.BF16") == 4096
    assert sass.mma_flops(".884.F32.F16") == 512
    with pytest.raises(ValueError, match="HMMA.999"):
        sass.mma_flops(".999.F32")


def _tools_or_skip():
    if sass.nvdisasm() is None:
        pytest.skip("nvdisasm tidak terpasang (nvidia-cuda-nvdisasm)")
    pytest.importorskip("cupy")


@functools.cache
def _mixes(kernel_file: str):
    return sass.instruction_mix(ROOT / "kernels" / kernel_file)


@pytest.mark.slow
def test_fused_v2_inner_loop_has_a_larger_ffma_share_than_v1():
    _tools_or_skip()
    mixes = _mixes("attention_fused.cu")
    v1, v2 = mixes["attention_fused_d64"], mixes["attention_fused_v2_d64"]
    for mix in (v1, v2):
        assert mix.loop["FFMA"] > 0 and sum(mix.loop.values()) <= sum(mix.kernel.values())
    assert mix.share(v2.loop) > mix.share(v1.loop)


@pytest.mark.slow
def test_fused_v3_issues_hmma_and_v2_none():
    _tools_or_skip()
    v2 = _mixes("attention_fused.cu")["attention_fused_v2_d64"]
    v3 = _mixes("attention_tensorcore.cu")
    assert v2.kernel["HMMA"] == 0 and v2.kernel_mma_flops == 0
    for mode in ("tf32", "3xtf32"):
        mix = v3[f"attention_tensorcore_{mode}_d64"]
        assert mix.kernel["HMMA"] > 0 and mix.loop["HMMA"] > 0
    tf32, x3 = v3["attention_tensorcore_tf32_d64"], v3["attention_tensorcore_3xtf32_d64"]
    assert x3.loop["HMMA"] == 3 * tf32.loop["HMMA"]  # three MMAs per product
    # One wmma::mma_sync (m16n16k8, 4096 FLOP) is several HMMA instructions.
    assert tf32.kernel_mma_flops % tf32.kernel["HMMA"] == 0
    assert 2 * 16 * 16 * 8 // (tf32.kernel_mma_flops // tf32.kernel["HMMA"]) > 1


@pytest.mark.slow
def test_sass_command_prints_the_table():
    _tools_or_skip()
    proc = subprocess.run([sys.executable, "-m", "atensi.kernels", "--sass", "kernels/causal_mask.cu"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert "Campuran instruksi SASS statis" in proc.stdout and "FFMA %" in proc.stdout
    assert "causal_mask" in proc.stdout and "HMMA" in proc.stdout and "--profil" in proc.stdout
    bad = subprocess.run([sys.executable, "-m", "atensi.kernels", "--sass", "tidak_ada.cu"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(ROOT / "src")})
    assert bad.returncode == 1 and "tidak ada" in bad.stderr


# FFMA share of fused v2's inner loop while P still went to P·V by four shuffles per key.
SHARE_WITH_SHUFFLES = {"attention_fused_v2_d64": 0.351, "attention_fused_v2_d128": 0.462,
                       "attention_fused_v2_split_d64": 0.517}
SHFL_WITH_SHUFFLES = 88  # SHFL in attention_fused_v2_d64's inner loop then


@pytest.mark.slow
def test_fused_v2_passing_p_through_shared_memory_raised_the_ffma_share():
    _tools_or_skip()
    mixes = _mixes("attention_fused.cu")
    for name, old in SHARE_WITH_SHUFFLES.items():
        assert sass.Mix.share(mixes[name].loop) > old, name
    loop = mixes["attention_fused_v2_d64"].loop
    assert loop["SHFL"] < SHFL_WITH_SHUFFLES / 2 and loop["LDS/STS"] > 0


@pytest.mark.slow
def test_the_disassembly_is_cached_by_the_binary(tmp_path, monkeypatch):
    _tools_or_skip()
    from atensi import kernels

    cubin = kernels.compile_report(ROOT / "kernels" / "causal_mask.cu").cubin
    monkeypatch.setenv("ATENSI_CACHE", str(tmp_path))  # an empty cache for the disassembly
    first = sass.instruction_mix("kernels/causal_mask.cu", cubin=cubin)
    assert first["causal_mask_v1"].kernel["LDG/LDGSTS/STG"] > 0

    def no_nvdisasm(*args, **kwargs):
        raise AssertionError("nvdisasm dijalankan lagi untuk cubin yang sama")

    monkeypatch.setattr(sass.subprocess, "run", no_nvdisasm)
    assert sass.instruction_mix("kernels/causal_mask.cu", cubin=cubin) == first
    with pytest.raises(AssertionError, match="nvdisasm dijalankan lagi"):  # another binary misses
        sass.instruction_mix("kernels/causal_mask.cu", cubin=cubin + b"\0")


@pytest.mark.book
def test_the_built_book_shows_the_profile_table(built_book):
    """The performance chapter's bound comes from the emulator's counts, with ncu names."""
    text = (built_book / "chapters" / "kinerja.html").read_text(encoding="utf-8")
    assert "model SASS" not in text and "batas puncak FP32" not in text
    assert "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum" in text and "yang mengikat" in text
