"""Guard bytes around the array arguments of a launch without a sanitizer.

A kernel that writes past the end (or before the start) of an array would
otherwise write into the Python heap: the process aborts later, far from the
kernel ("malloc(): invalid next size"), or goes on with damaged memory. So
each launch gets copies of its arrays, each with a guard region before and
after, filled with a pattern; after the launch the guards are compared, the
copies are written back and a damaged guard becomes an error that names the
argument and the side.

The guards catch writes that land within them (up to :func:`guard_bytes`
past the ends), not reads: AddressSanitizer (``sanitize="address"``) sees
both and names the .cu line. Each array's pattern differs (a rotation of one
random sequence), so a kernel that copies one array's out-of-bounds bytes to
the same place past another array still changes that array's guard.
"""

from __future__ import annotations

import ctypes
import functools

import numpy as np

from . import args as _args
from .errors import OutOfBoundsWriteError

# A copy starts at the same address modulo this as the array: an aligned float4 load
# stays aligned, and a misaligned one (which cudacpu reports) stays misaligned.
_ALIGN = 256
_MIN_GUARD = 4096
_MAX_GUARD = 256 << 10  # an off-by-one row of 65536 floats still lands in it
# One random sequence; each array's guards use it rotated by a different amount.
_PATTERN = np.random.default_rng(0x6A75).integers(0, 256, _MAX_GUARD + 4096, dtype=np.uint8)
_PATTERN[_PATTERN == 0] = 0x5A   # a kernel zeroing memory past the end must change a guard byte


@functools.lru_cache(maxsize=64)
def _patterns(number: int, guard: int) -> tuple[np.ndarray, np.ndarray]:
    """The bytes before and after the ``number``-th region of a launch."""
    shift = (number * 977) % 4096
    before = _PATTERN[shift:shift + guard].copy()
    after = _PATTERN[shift + 1:shift + 1 + guard][::-1].copy()
    before.flags.writeable = after.flags.writeable = False
    return before, after


def guard_bytes(nbytes: int) -> int:
    """Guard size on each side of an array of ``nbytes``: the array's own size,
    between 4 KiB and 256 KiB, so that an off-by-one row of a matrix still lands in it."""
    size = min(max(int(nbytes), _MIN_GUARD), _MAX_GUARD)
    return -(-size // _ALIGN) * _ALIGN


class _Region:
    """One guarded copy of a span of memory shared by one or more array arguments."""

    def __init__(self, start: int, end: int, number: int):
        self.start, self.end = start, end
        self.guard = guard_bytes(end - start)
        size = end - start
        raw = np.empty(2 * self.guard + size + _ALIGN, dtype=np.uint8)
        skip = (start - raw.ctypes.data) % _ALIGN
        self.buffer = raw[skip:skip + 2 * self.guard + size]
        self.raw = raw  # keeps the memory alive
        self.before, self.after = _patterns(number, self.guard)
        self.buffer[:self.guard] = self.before
        self.buffer[self.guard + size:] = self.after
        ctypes.memmove(self.buffer.ctypes.data + self.guard, start, size)
        self.members: list = []   # (index, Param, array)
        self.written = False

    def address(self, array: np.ndarray) -> int:
        return self.buffer.ctypes.data + self.guard + (array.ctypes.data - self.start)

    def damage(self) -> tuple[int, int]:
        """Bytes of the guard changed before the start and after the end: how far
        out the farthest change lies on each side (0: untouched)."""
        size = self.end - self.start
        head, tail = self.buffer[:self.guard], self.buffer[self.guard + size:]
        if np.array_equal(head, self.before) and np.array_equal(tail, self.after):  # the usual case
            return 0, 0
        head = np.flatnonzero(head != self.before)
        tail = np.flatnonzero(tail != self.after)
        return (int(self.guard - head[0]) if head.size else 0,
                int(tail[-1] + 1) if tail.size else 0)

    def copy_back(self) -> None:
        if self.written:
            ctypes.memmove(self.start, self.buffer.ctypes.data + self.guard, self.end - self.start)


class GuardedCopies:
    """Point every array argument of ``packed`` at a guarded copy.

    Arrays that share memory (the same array twice, ``out`` being ``S``, two
    views of one buffer) share one copy, so the kernel sees them alias as on a
    GPU. Call :meth:`finish` after the launch, whatever its outcome.
    """

    def __init__(self, packed: _args.Packed):
        spans = sorted(((arr.ctypes.data, arr.ctypes.data + arr.nbytes, i, param, arr, holder)
                        for i, param, arr, holder in packed.arrays), key=lambda s: (s[0], s[2]))
        groups: list[list] = []
        for span in spans:
            if groups and span[0] < groups[-1][0][1] or (groups and span[:2] == groups[-1][0][:2]):
                first = groups[-1][0]
                groups[-1][0] = (first[0], max(first[1], span[1]))
                groups[-1][1].append(span)
            else:
                groups.append([span[:2], [span]])
        self.regions = []
        for number, ((start, end), members) in enumerate(groups):
            region = _Region(start, end, number)
            for _, _, i, param, arr, holder in members:
                region.members.append((i, param, arr))
                region.written |= not param.const
                holder[0] = region.address(arr)
            self.regions.append(region)

    def finish(self, kernel: str, path: str) -> None:
        """Write the copies back, then raise if a guard changed."""
        found = []
        for region in self.regions:
            region.copy_back()
            before, after = region.damage()
            if before or after:
                found.append((region, before, after))
        if found:
            raise OutOfBoundsWriteError(_message(kernel, path, found))


def _message(kernel: str, path: str, found: list) -> str:
    parts = []
    for region, before, after in found:
        for side, reach, pick in (("sebelum awalnya", before, min), ("sesudah akhirnya", after, max)):
            if not reach:
                continue
            # The argument whose edge is that side of the shared span.
            edge = region.start if pick is min else region.end
            i, param, arr = next(
                ((i, p, a) for i, p, a in region.members
                 if (a.ctypes.data if pick is min else a.ctypes.data + a.nbytes) == edge),
                region.members[0])
            far = "setidaknya " if reach >= region.guard else ""
            parts.append(f"argumen ke-{i + 1} ('{param.name}', {arr.nbytes} bita) sampai "
                         f"{far}{reach} bita {side}")
    return (
        f"Kernel '{kernel}' ({path}) menulis di luar batas array: {'; '.join(parts)}. Di GPU penulisan "
        "seperti ini merusak data lain tanpa pesan atau menghentikan program (an illegal memory "
        "access was encountered); di sini byte penjaga di sekitar array berubah, dan isi array "
        "yang tertulis di dalam batasnya sudah disalin kembali. Periksa syarat batas indeks di "
        "kernel (misalnya i < T, bukan i <= T), lalu jalankan lagi dengan sanitize=\"address\" "
        f"untuk baris .cu-nya: atensi.cudacpu.run_in_subprocess(path={path!r}, "
        f"kernel={kernel!r}, grid=..., block=..., args=..., sanitize=\"address\")."
    )
