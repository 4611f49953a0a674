"""atensi.kernels.sass: the SASS instruction mix per kernel (a model, no GPU).

The parser on a small hand-written listing (groups, the loop found from a
backward branch, FFMA share, the occupancy factor of the peak bound); one real
NVRTC + nvdisasm run on kernels/attention_fused.cu when both are installed,
where fused v2's register tiles give its inner loop a larger FFMA share than
v1's; and ``python -m atensi.kernels --sass``.
"""

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
    assert mix.peak_bound() == pytest.approx(2 / 5)
    assert mix.peak_bound(resident_warps=2) == pytest.approx(1 / 5)  # 2 warps for 4 schedulers
    assert mix.peak_bound(resident_warps=48) == pytest.approx(2 / 5)


def _tools_or_skip():
    if sass.nvdisasm() is None:
        pytest.skip("nvdisasm tidak terpasang (nvidia-cuda-nvdisasm)")
    pytest.importorskip("cupy")


@pytest.mark.slow
def test_fused_v2_inner_loop_has_a_larger_ffma_share_than_v1():
    _tools_or_skip()
    mixes = sass.instruction_mix(ROOT / "kernels" / "attention_fused.cu")
    v1, v2 = mixes["attention_fused_d64"], mixes["attention_fused_v2_d64"]
    for mix in (v1, v2):
        assert mix.loop["FFMA"] > 0 and sum(mix.loop.values()) <= sum(mix.kernel.values())
    assert mix.share(v2.loop) > mix.share(v1.loop)


@pytest.mark.slow
def test_sass_command_prints_the_table():
    _tools_or_skip()
    proc = subprocess.run([sys.executable, "-m", "atensi.kernels", "--sass", "kernels/causal_mask.cu"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert "Campuran instruksi SASS" in proc.stdout and "FFMA %" in proc.stdout and "causal_mask" in proc.stdout
    bad = subprocess.run([sys.executable, "-m", "atensi.kernels", "--sass", "tidak_ada.cu"], cwd=ROOT,
                         capture_output=True, text=True, timeout=60, env={"PYTHONPATH": str(ROOT / "src")})
    assert bad.returncode == 1 and "tidak ada" in bad.stderr
