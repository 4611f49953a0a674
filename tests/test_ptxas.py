"""The ptxas -v log parser shared by the compile report and the emulator's launch limits."""

from atensi import ptxas

# The shape of an NVRTC 12 log with -Xptxas=-v (two entry functions, one with spills).
LOG = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'softmax_v2_warp' for 'sm_90'
ptxas info    : Function properties for softmax_v2_warp
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 18 registers, used 1 barriers, 128 bytes smem, 384 bytes cmem[0]
ptxas info    : Compiling entry function 'attention_fused_d128' for 'sm_90'
ptxas info    : Function properties for attention_fused_d128
    24 bytes stack frame, 20 bytes spill stores, 16 bytes spill loads
ptxas info    : Used 255 registers, 33792 bytes smem, 396 bytes cmem[0]
"""


def test_parse_reads_every_entry_function():
    found = ptxas.parse(LOG)
    assert list(found) == ["softmax_v2_warp", "attention_fused_d128"]
    soft, fused = found["softmax_v2_warp"], found["attention_fused_d128"]
    assert (soft.registers, soft.barriers, soft.shared_bytes) == (18, 1, 128)
    assert (soft.stack_frame, soft.spill_stores, soft.spill_loads) == (0, 0, 0)
    assert (fused.registers, fused.barriers, fused.shared_bytes) == (255, 0, 33792)
    assert (fused.stack_frame, fused.spill_stores, fused.spill_loads) == (24, 20, 16)


def test_parse_ignores_lines_before_the_first_entry_and_an_empty_log():
    assert ptxas.parse("ptxas info    : Used 7 registers\n") == {}
    assert ptxas.parse("") == {}
