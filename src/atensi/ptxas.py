"""What ``ptxas -v`` says about each kernel: registers, spills, stack, shared memory, barriers.

NVRTC with ``-Xptxas=-v`` writes one block of lines per entry function into
its program log. :func:`parse` turns that log into one
:class:`KernelResources` per kernel. Both the compile report
(:mod:`atensi.kernels.compiling`) and the emulator's launch limits
(:mod:`atensi.cudacpu.resources`) read it, so this module imports nothing
from either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass
class KernelResources:
    """Sumber daya satu kernel menurut ptxas."""

    registers: int = 0
    spill_stores: int = 0
    spill_loads: int = 0
    stack_frame: int = 0
    shared_bytes: int = 0
    barriers: int = 0
    # Filled by the compile report from the registry, not by ptxas:
    threads: int = 0  # threads per block used for the occupancy figure
    occupancy: float = 0.0  # theoretical: resident warps / max warps per SM
    dynamic_shared_bytes: int = 0  # extern __shared__ asked for at launch


_ENTRY = re.compile(r"Compiling entry function '(\w+)'")
_FRAME = re.compile(
    r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads"
)
_USED = re.compile(r"Used (\d+) registers")
_BARRIERS = re.compile(r"used (\d+) barriers")
_SMEM = re.compile(r"(\d+) bytes smem")


def parse(log: str) -> dict[str, KernelResources]:
    """{kernel: its resources} for every entry function the ptxas log names."""
    kernels, current = {}, None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current = kernels.setdefault(m.group(1), KernelResources())
        elif current is None:
            continue
        elif m := _FRAME.search(line):
            current.stack_frame, current.spill_stores, current.spill_loads = map(
                int, m.groups()
            )
        elif m := _USED.search(line):
            current.registers = int(m.group(1))
            if b := _BARRIERS.search(line):
                current.barriers = int(b.group(1))
            if s := _SMEM.search(line):
                current.shared_bytes = int(s.group(1))
    return kernels
