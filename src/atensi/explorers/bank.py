"""Penjelajah bank dan sektor (bab bank_memori): satu warp kernel sungguhan, diputar ulang.

Kernel *fused* v1 (``attention_fused_d64``) atau v2 (``attention_fused_v2_d64``)
dari ``kernels/attention_fused.cu`` berjalan di emulator pada satu ubin
(T = 64, d_k = 64, satu *head*, satu *block*) di dalam
``atensi.cudacpu.profile(warp=((0, 0, 0), 0))``. Dari alamat yang benar-benar
dipakai 32 lane warp 0, penjelajah menunjukkan permintaan pertama di satu
tempat akses: bank *shared memory* (alamat / 4 mod 32) atau sektor global 32
bita setiap lane, dan hitungannya (gelombang dan derajat konflik, atau sektor
per permintaan) menurut model ``cuda_cpu_profile.h``.

Pilihan: versi (v1, v2), larik (Q: v1 membaca Q dari memori global ke
register, v2 membaca ``Qs``; K: ``Ks`` v1, ``Kt`` v2) dan "tanpa penataan":
v1 dikompilasi dengan ``-DFUSED_SKEW=0`` (tanpa geseran 4 float), v2 dengan
indeks ``Kt`` tanpa *swizzle* XOR (teks ``.cu`` yang sama, dua ekspresi
diganti). Semua angka dihitung dari jalannya kernel di emulator, bukan diukur
di GPU.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from .. import bank_plots, reference, style
from .. import validation as _val
from ..formatting import id_int
from .framework import Choice, Explorer, Toggle, faces

NAME = "bank-sektor"
T = 64
D_K = 64
SEED = 5
FILE = "attention_fused.cu"
VERSIONS = ("v1", "v2")
ARRAYS = ("Q", "K")
KERNELS = {"v1": "attention_fused_d64", "v2": "attention_fused_v2_d64"}
V2_SHARED = ((64 + 4 * 32) * 64 + 64 * 32) * 4  # FV2_SMEM(64): Qs + 2 x (Ks, Vs) + Ps, bytes
# v2 without its swizzle: the two index expressions of Kt, written plainly.
SWIZZLES = (("(c4 ^ (jj % 8))", "c4"), ("(c4 ^ lc)", "c4"))
# Where each array is read (a piece of the .cu line), what kind of access it is,
# and what the reader sees it as.
SITES = {
    ("v1", "Q"): ("q[c] = (row_ok", "global", "Q[baris][c] (memori global → register)"),
    ("v1", "K"): ("part0 += q[c] * kj[c]", "shared", "Ks[jj][c] (shared memory)"),
    ("v2", "Q"): ("qv[a] = Qs[", "shared", "Qs[r0 + a][c4] (shared memory, float4)"),
    ("v2", "K"): ("kv[b] = Kt[", "shared", "Kt[lc + 8b][c4 ^ lc] (shared memory, float4)"),
}


def _source(kernel, plain):
    """The .cu text with only ``kernel`` left (other kernels blanked line for line, so the
    line numbers stay those of the file) and, when ``plain``, v2's swizzle taken out."""
    from .. import kernels

    text = kernels.kernel_path(FILE).read_text(encoding="utf-8")
    lines = text.split("\n")
    out, skip = [], False
    for n, line in enumerate(lines):
        if line.startswith('extern "C" __global__'):
            head = line + " " + (lines[n + 1] if n + 1 < len(lines) else "")
            name = re.search(r"void\s+(?:__launch_bounds__\([^)]*\)\s*)?(\w+)\s*\(", head)
            skip = name is None or name.group(1) != kernel
        out.append("" if skip else line)
        if skip and line == "}":
            skip = False
    text = "\n".join(out)
    if plain and kernel == KERNELS["v2"]:
        for old, new in SWIZZLES:
            if text.count(old) != 1:
                raise RuntimeError(f"{FILE}: ekspresi swizzle {old!r} tidak ditemukan tepat sekali; "
                                   "perbarui SWIZZLES di atensi.explorers.bank.")
            text = text.replace(old, new)
    return text


def _line_of(piece):
    from .. import kernels

    lines = kernels.kernel_path(FILE).read_text(encoding="utf-8").split("\n")
    found = [n + 1 for n, line in enumerate(lines) if piece in line]
    if len(found) != 1:
        raise RuntimeError(f"{FILE}: baris {piece!r} tidak ditemukan tepat sekali.")
    return found[0]


@functools.lru_cache(maxsize=4)
def replay(version, plain):
    """Run one block of the kernel in the profiler; (output error, requests of warp 0)."""
    from .. import cudacpu

    kernel = KERNELS[version]
    options = ("-DFUSED_SKEW=0",) if plain and version == "v1" else ()
    module = cudacpu.RawModule(code=_source(kernel, plain), path=f"kernels/{FILE}", options=options)
    fn = module.get_function(kernel)
    rng = np.random.default_rng(SEED)
    Q, K, V = (rng.standard_normal((1, T, D_K)).astype(np.float32) for _ in range(3))
    O = np.zeros_like(Q)
    args = (Q, K, V, O, np.int32(T), np.int32(D_K), np.int32(1), np.float32(D_K ** -0.5), np.int32(0))
    shared = 0
    if version == "v2":
        args += (np.int32(1),)  # rows start on 16-byte boundaries: float4 loads allowed
        shared = V2_SHARED
        fn.max_dynamic_shared_size_bytes = shared
    with cudacpu.profile(warp=((0, 0, 0), 0)) as prof:
        fn((1, 1, 1), (128, 1, 1), args, shared_mem=shared)
    error = float(np.max(np.abs(O - reference.attention(Q, K, V, causal=False))))
    return error, tuple(prof.requests)


def request(version, array, plain):
    """The first request of warp 0 at the chosen site (``WarpRequest``) and the site's .cu line."""
    piece, space, _ = SITES[(version, array)]
    line = _line_of(piece)
    _error, requests = replay(version, plain)
    # g++ may put an unrolled read on the line of its loop header: take the nearest line.
    kind = [r for r in requests if r.space == space and not r.store and abs(r.line - line) <= 2]
    if not kind:
        raise RuntimeError(f"Tidak ada akses {space} di dekat baris {line} {FILE}.")
    best = min(abs(r.line - line) for r in kind)
    return next(r for r in kind if abs(r.line - line) == best), line


def state(version, array, plain):
    """Angka satu permintaan warp: bank atau sektor setiap lane dan hitungannya."""
    version = _val.check_choice(version, VERSIONS, "version")
    array = _val.check_choice(array, ARRAYS, "array")
    plain = _val.check_flag(plain, "plain")
    r, line = request(version, array, plain)
    error, _ = replay(version, plain)
    values = {"version": version, "array": array, "plain": plain, "line": line,
              "space": r.space, "size": r.size, "lanes": r.lanes, "error": error,
              "addresses": r.addresses}
    if r.space == "shared":
        phases = r.phases()
        values.update(wavefronts=r.wavefronts, ideal=r.ideal, degree=max(w for _, w in phases),
                      phases=[w for _, w in phases], keys=r.banks,
                      distinct=len({a for a in r.addresses if a is not None}))
    else:
        used = {a + b for a in r.addresses if a is not None for b in range(r.size)}
        values.update(sectors=r.sector_count, ideal=-(-len(used) // 32),
                      keys=_sector_ids(r.sectors))
    return r, values


def _sector_ids(sectors):
    """Sectors numbered in the order the lanes first touch them (0, 1, 2, ...)."""
    ids = {}
    return tuple(None if s is None else ids.setdefault(s, len(ids)) for s in sectors)


def _flagged(r):
    """Lanes that share a bank with a different word in their phase (they queue)."""
    flagged = [False] * 32
    if r.space != "shared":
        return flagged
    for lanes, _w in r.phases():
        words = {}
        for lane in lanes:
            words.setdefault(r.addresses[lane] // 4 % 32, set()).add(r.addresses[lane] // 4)
        for lane in lanes:
            flagged[lane] = len(words[r.addresses[lane] // 4 % 32]) > 1
    return flagged


def readout(v):
    """HTML bacaan, dengan hitungan dalam kata."""
    _, _, what = SITES[(v["version"], v["array"])]
    if v["plain"] and v["version"] == "v2":
        what = what.replace("c4 ^ lc", "c4")  # the index as this variant reads it
    where = f"<code>{what}</code>, {FILE} baris {v['line']}"
    label = ("<p><i>Dihitung dari jalannya kernel di emulator (atensi.cudacpu.profile), "
             "bukan diukur di GPU.</i></p>")
    if v["space"] == "global":
        waste = v["sectors"] * 32
        return (f"<p>{where}: setiap lane membaca {v['size']} bita. <b>{id_int(v['sectors'])} sektor"
                f"</b> 32 bita per permintaan; {id_int(v['lanes'] * v['size'])} bita yang dipakai muat "
                f"di {id_int(v['ideal'])} sektor. Yang diangkut {id_int(waste)} bita.</p>" + label)
    phases = len(v["phases"])
    lanes_per = 32 // phases
    if v["wavefronts"] == v["ideal"]:
        verdict = "tanpa konflik"
    else:
        verdict = f"konflik {id_int(v['degree'])} arah"
    shape = (f"{v['size']} bita per lane: {id_int(phases)} fase × {id_int(lanes_per)} lane"
             if phases > 1 else f"{v['size']} bita per lane: satu fase 32 lane")
    return (f"<p>{where}. {shape}; {id_int(v['distinct'])} alamat berbeda.</p>"
            f"<p><b>{id_int(v['wavefronts'])} gelombang</b> (ideal {id_int(v['ideal'])}): "
            f"<b>{verdict}</b>.</p>" + label)


def render(version, array, plain):
    r, values = state(version, array, plain)
    keys = values["keys"]
    if r.space == "shared":
        # A lane reading n bytes touches n / 4 banks in a row: "4–7" for a float4.
        span = max(r.size, 4) // 4
        texts = ["–" if k is None else f"b{k}" if span == 1 else f"{k}–{k + span - 1}" for k in keys]
        # One note per phase, on the grid row where the phase starts (8 lanes a row).
        per = 32 // len(values["phases"])
        rows = [""] * 4
        for phase, waves in enumerate(values["phases"]):
            rows[phase * per // 8] = f"{waves} gelombang"
        title = f"fused {version}: bank yang disentuh setiap lane"
    else:
        texts = ["–" if k is None else f"s{k}" for k in keys]
        rows = [f"{len({k for k in keys[8 * i:8 * i + 8]})} sektor" for i in range(4)]
        title = f"fused {version}: sektor 32 bita setiap lane"
    fig = bank_plots.warp_lanes(keys, texts, rows, title=title, flagged=_flagged(r))
    return fig, values, readout(values)


EXPLORER = Explorer(
    name=NAME, title="Bank dan sektor satu warp",
    alt="32 lane satu warp kernel fused: bank atau sektor yang disentuh setiap lane, dan hitungannya",
    controls=(Choice("version", "versi", VERSIONS, shown="fused {}", buttons=True),
              Choice("array", "larik", ARRAYS, shown=lambda a: {"Q": "Q / Qs", "K": "Ks / Kt"}[a],
                     buttons=True),
              Toggle("plain", "tanpa geseran/swizzle")),
    render=render, defaults={"version": "v2", "array": "K", "plain": False})

explorer, live, static = faces(EXPLORER)
