"""Peluncuran kernel: nama kernel, ukuran *grid*/*block*, dan peluncurnya.

Peluncur ``launch_scores``, ``launch_causal_mask``, ``launch_softmax``,
``launch_weighted_sum``, ``launch_fused``, ``launch_rope`` dan
``launch_attention`` menerima array backend yang sudah diperiksa (oleh
:mod:`atensi.kernels.api`), menghitung *grid* dan *block* dari entri
:mod:`atensi.kernels.registry`, lalu meluncurkan *kernel* dari
``loading.get_function``. ``bench`` dan langkah mundur memakainya langsung.

``MAX_GRID_X`` dan ``MAX_GRID_YZ`` dibaca di setiap peluncuran: tes boleh
menurunkannya (``monkeypatch.setattr(kernels.launch, "MAX_GRID_YZ", 2)``)
untuk memeriksa bahwa perulangan *kernel* atas *head* dan baris mencakup
semuanya.
"""

from __future__ import annotations

import numpy as np

from atensi import hardware
from atensi import validation as _v
from atensi.kernels import arrays, limits, loading, registry

# Launch limits of CUDA grids. Read at every launch, so a test can lower them
# to check that the kernels' loops over heads/rows cover everything.
MAX_GRID_X = hardware.MAX_GRID_DIM[0]
MAX_GRID_YZ = hardware.MAX_GRID_DIM[1]

# attention(impl=...): the chain's (scores and softmax version, causal softmax
# variant, weighted_sum version), or the fused kernel's version.
CHAINS = {"chain-v1": ("v1", False, "v1"), "chain-v2": ("v2", False, "v1"),
          "chain-v3": ("v2", True, "v2")}
FUSED = {f"fused-{version}": version for version in registry.versions("fused")}
IMPLS = tuple(CHAINS) + tuple(FUSED)
# The fused impls that have a split-K pass (attention(..., splits=)), and those
# with tensor-core operand formats (attention(..., precision=)).
SPLIT_IMPLS = tuple(impl for impl, version in FUSED.items()
                    if any(k.split for k in registry.of_step("fused", version)))
PRECISION_IMPLS = tuple(impl for impl, version in FUSED.items()
                        if any(k.precision for k in registry.of_step("fused", version)))
PRECISIONS = tuple(dict.fromkeys(k.precision for impl in PRECISION_IMPLS
                                 for k in registry.of_step("fused", FUSED[impl])))
DEFAULT_PRECISION = "3xtf32"  # float32 accuracy unless TF32 is asked for
FUSED_MAX_SPLITS = hardware.MAX_GRID_DIM[2]  # grid.z
# The SM count the automatic split models on the CPU emulator: an H200's.
MODEL_SM_COUNT = hardware.H200.sm_count
FUSED_BLOCKS_PER_SM = 2  # split until there are this many blocks per SM


def fused_max_d_k(version: str) -> int:
    """Largest d_k of fused ``version`` ("v1", "v2", "v3"), from the registry."""
    return max(k.max_d_k for k in registry.of_step("fused", version))


def fused_kernel(version: str, d_k: int, precision: str = DEFAULT_PRECISION, *,
                 split: bool = False) -> registry.Kernel:
    """The kernel fused ``version`` launches for ``d_k`` (``split``: its split-K pass)."""
    return registry.for_step("fused", version, d_k=d_k, precision=precision, split=split)


def fused_family(version: str, precision: str = DEFAULT_PRECISION) -> str:
    """The per-width kernels ``<family>_dD`` fused ``version`` launches."""
    return fused_kernel(version, 1, precision).family


def _max_T(step: str) -> int:
    """Largest T every kernel of ``step`` allows: grid.y = ceil(T / rows per block) <= 65535."""
    return min((k.rows or k.block[1]) * hardware.MAX_GRID_DIM[1]
               for version in registry.versions(step) for k in registry.of_step(step, version))


MAX_T = {step: _max_T(step) for step in ("scores", "causal_mask", "weighted_sum")}


def check_T_limit(T: int, step: str):
    limits.check_T_limit(T, step, MAX_T[step])


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def scale_factor(d_k: int, scale: bool) -> np.float32:
    # Exactly the engine's 1.0f / sqrtf(d_k): IEEE float32 sqrt and division.
    return np.float32(1.0) / np.sqrt(np.float32(d_k)) if scale else np.float32(1.0)


# --- which GPU runs which kernel (the registry's needs against hardware) ------


class UnsupportedKernelError(RuntimeError):
    """The GPU (real, or modelled by ATENSI_ARCH) cannot launch this kernel."""


def impl_kernels(impl: str, d_k: int, precision: str = DEFAULT_PRECISION) -> tuple:
    """Every kernel ``attention(impl=impl)`` may launch for ``d_k``: its width's
    variants (causal, split-K) and their combine kernel, or the chain's steps."""
    if impl in FUSED:
        width = registry.width_for(min(max(d_k, 1), registry.WIDTHS[-1]))
        found = [k for k in registry.of_step("fused", FUSED[impl])
                 if k.width in (None, width) and k.precision in (None, precision)]
        found += [registry.get(k.combine) for k in found if k.combine]
        return tuple(dict.fromkeys(found))
    version, _, ws_version = CHAINS[impl]
    return (registry.of_step("scores", version) + registry.of_step("causal_mask", "v1")
            + registry.of_step("softmax", version) + registry.of_step("weighted_sum", ws_version))


def impl_runs(impl: str, d_k: int, arch: hardware.Arch, precision: str = DEFAULT_PRECISION) -> bool:
    """``attention(impl=impl)`` at ``d_k`` runs on ``arch``: d_k within the kernel's
    limit, and every kernel it may launch fits the architecture."""
    if impl in FUSED and d_k > fused_max_d_k(FUSED[impl]):
        return False
    return all(registry.runs_on(k, arch) for k in impl_kernels(impl, d_k, precision))


def best_impl(d_k: int, arch: hardware.Arch, *, splits=None, precision=None) -> str:
    """``impl=None``: the newest fused version that runs on ``arch`` at ``d_k`` (with
    ``splits``/``precision`` only those that take them), else the chain ``chain-v2``."""
    for impl in reversed(tuple(FUSED)):
        if (splits is not None and impl not in SPLIT_IMPLS) or (
                precision is not None and impl not in PRECISION_IMPLS):
            continue
        if impl_runs(impl, d_k, arch, precision or DEFAULT_PRECISION):
            return impl
    return "chain-v2"


def _instead(impl: str | None, d_k: int | None, arch: hardware.Arch, precision: str) -> str:
    """What runs on ``arch`` in place of ``impl``: other impls at this d_k."""
    if impl is None or d_k is None:
        return ""
    others = [i for i in IMPLS if i != impl and impl_runs(i, d_k, arch, precision)]
    fused = [i for i in others if i in FUSED] or others[:1]
    return (f"{' atau '.join(f'impl={i!r}' for i in fused[::-1])} (berjalan di GPU ini untuk "
            f"d_k = {d_k}), atau " if fused else "")


def unsupported_message(k: registry.Kernel, where: loading.Target, *, impl: str | None = None,
                        d_k: int | None = None, precision: str = DEFAULT_PRECISION) -> str:
    """The refusal of ``k`` on ``where``: the kernel, the GPU and its
    architecture, what is missing, and what to use instead."""
    lacks = "; ".join(registry.missing(k, where.arch))
    asked = f" (impl={impl!r}, d_k = {d_k})" if impl is not None and d_k is not None else ""
    gpu = where.name if where.modelled else f"{where.name} ({where.arch.name})"
    cpu = ("backend='cpu' (kernel yang sama di emulator CPU)" if not where.modelled else
           "emulator CPU tanpa model GPU (hapus variabel lingkungan ATENSI_ARCH)")
    return (f"Kernel {k.name}{asked} tidak bisa berjalan di {gpu}: butuh {lacks}. "
            f"Pakai {_instead(impl, d_k, where.arch, precision)}{cpu}.")


def first_unsupported(kernels_, backend: str):
    """(kernel, target) of the first of ``kernels_`` the GPU of ``backend`` cannot run; None."""
    where = loading.target(backend)
    return next(((k, where) for k in kernels_ if not registry.runs_on(k, where.arch)), None)


def check_runs(kernels_, backend: str, *, impl: str | None = None, d_k: int | None = None,
               precision: str = DEFAULT_PRECISION) -> None:
    """Refuse, before any launch, a kernel the GPU of ``backend`` cannot run
    (:func:`atensi.kernels.loading.target`; ``ATENSI_ARCH`` on the CPU)."""
    found = first_unsupported(kernels_, backend)
    if found:
        raise UnsupportedKernelError(unsupported_message(*found, impl=impl, d_k=d_k,
                                                         precision=precision))


def fallback_note(k: registry.Kernel, where: loading.Target, what: str) -> str:
    """The one line a chapter shows when ``what`` runs on the CPU because the GPU cannot."""
    gpu = where.name if where.modelled else f"{where.name} ({where.arch.name})"
    return (f"Catatan: {what} tidak bisa berjalan di {gpu} (kernel {k.name} butuh "
            f"{'; '.join(registry.missing(k, where.arch))}), jadi dijalankan di emulator CPU.")


def support_table(archs=None) -> list[dict]:
    """Per GPU a reader owns (:data:`atensi.hardware.CARDS`), what runs on it.

    One dict per card: ``gpu``, ``arch``, ``where``, and per impl the largest
    d_k (32, 64, 128) it runs at, 0 when none, None for no limit (the chain).
    ``archs``: only the cards of these architectures."""
    rows = []
    for card in hardware.CARDS:
        if archs is not None and card.arch.name not in archs:
            continue
        row = {"gpu": card.name, "arch": card.arch.name, "where": card.where}
        for impl in IMPLS:
            if impl in FUSED:
                widths = [w for w in registry.WIDTHS
                          if all(impl_runs(impl, w, card.arch, p) for p in PRECISIONS)]
                row[impl] = max(widths, default=0)
            else:
                row[impl] = None if impl_runs(impl, 1, card.arch) else 0
        rows.append(row)
    return rows


def support_markdown() -> str:
    """:func:`support_table` sebagai tabel Markdown, satu baris per arsitektur.

    Kolomnya: GPU (dengan tempat pembaca menemuinya bila itu Colab),
    arsitektur, rantai kernel, lalu setiap versi *fused* dengan d_k terbesar
    yang berjalan ("tidak": GPU itu tidak bisa menjalankannya sama sekali)."""
    groups: dict = {}
    for row in support_table():
        groups.setdefault(row["arch"], []).append(row)

    def cell(limit):
        return "ya" if limit is None else ("tidak" if limit == 0 else f"d_k ≤ {limit}")

    def chains(rows):
        return cell(None) if all(rows[0][i] is None for i in CHAINS) else "tidak"

    lines = ["| GPU | arsitektur | rantai | " + " | ".join(f"`{i}`" for i in FUSED) + " |",
             "| --- | --- | --- | " + " | ".join("---" for _ in FUSED) + " |"]
    for arch in sorted(groups, key=lambda a: hardware.ARCHS[a].compute_capability):
        rows = groups[arch]
        names = ", ".join(r["gpu"] + (f" ({r['where']})" if "Colab" in r["where"] else "")
                          for r in rows)
        lines.append(f"| {names} | {arch} | {chains(rows)} | "
                     + " | ".join(cell(rows[0][i]) for i in FUSED) + " |")
    return "\n".join(lines)


def _get(k: registry.Kernel, backend: str):
    """The kernel of registry entry ``k``, from the file it names; refused first
    when the GPU of ``backend`` cannot run it."""
    check_runs((k,), backend)
    return loading.get_function(k.file, k.name, backend)


def launch_scores(Qd, Kd, Sd, H, T, d_k, *, scale, causal, version, backend):
    # A version with a causal variant masks while it computes; one without
    # runs the plain kernel, then the mask kernel in place.
    k = (causal and registry.for_step("scores", version, causal=True)
         or registry.for_step("scores", version))
    grid = (ceil_div(T, k.block[0]), ceil_div(T, k.block[1]), min(H, MAX_GRID_YZ))
    args = (Qd, Kd, Sd, np.int32(H), np.int32(T), np.int32(d_k), scale_factor(d_k, scale))
    _get(k, backend)(grid, k.block, args)
    if causal and not k.causal:
        launch_causal_mask(Sd, Sd, H, T, backend=backend)
    return Sd


def launch_causal_mask(Sd, Od, H, T, *, backend, version="v1"):
    H = _v.check_int(H, "H", low=1)
    T = _v.check_int(T, "T", low=1)
    for name, x in (("Sd", Sd), ("Od", Od)):
        x = _check_backend_array(x, name, backend, "(..., T, T)", output=name == "Od")
        if x.size != H * T * T or x.shape[-1] != T or (x.ndim > 1 and x.shape[-2] != T):
            raise ValueError(
                f"Argumen '{name}' harus berisi H · T · T = {H} · {T} · {T} angka, bentuk "
                f"(..., {T}, {T}), tetapi yang diterima bentuk {tuple(x.shape)}. Kernel menulis "
                "H · T · T angka; buat keluarannya dengan bentuk S, misalnya np.empty_like(S)."
            )
    _v.check_version(version, dict.fromkeys(registry.versions("causal_mask")))
    k = registry.for_step("causal_mask", version)
    grid = (ceil_div(T, k.block[0]), ceil_div(T, k.block[1]), min(H, MAX_GRID_YZ))
    args = (Sd, Od, np.int32(H), np.int32(T))
    _get(k, backend)(grid, k.block, args)
    return Od


def row_block(n: int, name: str) -> int:
    """Next power of two >= n, from 32 (one warp, as v2 needs) up to the kernel's block."""
    return max(32, min(registry.get(name).block[0], 1 << (n - 1).bit_length()))


def launch_softmax(Sd, Ad, rows, n, *, version, backend, causal=False):
    # causal: rows = H*T, n = T; api.softmax allows it only for a version with
    # a causal variant in the registry.
    k = registry.for_step("softmax", version, causal=causal)
    grid = (min(rows, MAX_GRID_X), 1, 1)
    block = (row_block(n, k.name), 1, 1)
    args = (Sd, Ad, np.int32(rows), np.int32(n))
    _get(k, backend)(grid, block, args)
    return Ad


def launch_weighted_sum(Ad, Vd, Od, H, T, d_k, *, backend, version="v1", causal=False):
    k = registry.for_step("weighted_sum", version, causal=causal)
    if k.rows:  # tiled like a GEMM: a WS_BM x WS_BN tile of O per block
        tile_c, tile_i = k.constants["WS_BN"], k.rows
    else:  # one thread per output: the block is the tile
        tile_c, tile_i = k.block[0], k.block[1]
    grid = (ceil_div(d_k, tile_c), ceil_div(T, tile_i), min(H, MAX_GRID_YZ))
    args = (Ad, Vd, Od, np.int32(H), np.int32(T), np.int32(d_k))
    _get(k, backend)(grid, k.block, args)
    return Od


# --- fused kernels (kernels/attention_fused.cu, kernels/attention_tensorcore.cu) -------


def _with_dynamic_shared(kernel, smem: int):
    # More than 48 KiB of dynamic shared memory must be allowed first
    # (cupy.RawKernel and the emulator alike; a test's spy may lack it).
    if smem and getattr(kernel, "max_dynamic_shared_size_bytes", smem) < smem:
        kernel.max_dynamic_shared_size_bytes = smem
    return kernel


def _aligned16(x) -> bool:
    """The array's data starts on a 16-byte boundary (float4 loads allowed)."""
    ptr = x.data.ptr if _v.kind(x) == "cupy" else x.ctypes.data
    return ptr % 16 == 0


def fused_splits(H: int, T: int, sm_count: int = MODEL_SM_COUNT, version: str = "v2") -> int:
    """Automatic ``splits`` for fused ``version``: how many key ranges per query tile.

    ``H`` counts every leading axis (B·H). 1 when the H · ceil(T / rows)
    blocks already give ``FUSED_BLOCKS_PER_SM`` blocks per SM; otherwise
    enough splits to reach that, at most one per key tile.
    """
    H = _v.check_int(H, "H", low=1)
    T = _v.check_int(T, "T", low=1)
    sm_count = _v.check_int(sm_count, "sm_count", low=1)
    _v.check_version(version, dict.fromkeys(registry.versions("fused")))
    k = fused_kernel(version, 64)
    blocks = H * ceil_div(T, k.rows)
    target = FUSED_BLOCKS_PER_SM * sm_count
    if blocks >= target:
        return 1
    return max(1, min(ceil_div(target, blocks), ceil_div(T, k.key_tile), FUSED_MAX_SPLITS))


def default_splits(version: str, H: int, T: int, sm_count: int = MODEL_SM_COUNT) -> int:
    """``splits=None`` of fused ``version``: :func:`fused_splits` where the registry
    asks for it (``auto_splits`` on an entry of the version), else 1 (no split)."""
    auto = any(k.auto_splits for k in registry.of_step("fused", version))
    return fused_splits(H, T, sm_count, version) if auto else 1


_sm_counts: dict = {}


def _sm_count(backend: str) -> int:
    """SMs of the current CUDA device (cupy); the H200 model on the CPU emulator."""
    if backend != "cupy":
        return MODEL_SM_COUNT
    from cupy.cuda import runtime

    dev = runtime.getDevice()
    if dev not in _sm_counts:  # the attribute exists in CUDA 12 and 13 alike
        _sm_counts[dev] = int(runtime.deviceGetAttribute(
            runtime.cudaDevAttrMultiProcessorCount, dev))
    return _sm_counts[dev]


def _aligned_flag(k: registry.Kernel, d_k: int, *arrays_) -> tuple:
    """The float4 flag of a kernel whose entry has ``aligned_flag`` (after
    ``causal``): 1 only when every row starts 16-byte aligned."""
    if not k.aligned_flag:
        return ()
    return (np.int32(d_k % 4 == 0 and all(_aligned16(x) for x in arrays_)),)


# --- the public launchers check what they are handed (shapes only: no host sync) ---


def _check_backend_array(x, name: str, backend: str, layout: str, *, output: bool = False):
    """float32, C-contiguous, on ``backend``'s side (NumPy for 'cpu', CuPy for 'cupy');
    an ``output`` the kernel writes must be writable."""
    _v.check_array(x, name, min_ndim=1, layout=layout)
    if output and _v.kind(x) == "numpy" and not x.flags.writeable:
        raise ValueError(f"Argumen '{name}' hanya bisa dibaca (read-only), padahal kernel "
                         f"menulis hasilnya ke sana. Berikan salinan yang bisa ditulisi: "
                         f"{name}.copy().")
    want = "cupy" if backend == "cupy" else "numpy"
    if _v.kind(x) != want:
        move = "cupy.asarray(...)" if want == "cupy" else "... .get()"
        raise TypeError(
            f"Argumen '{name}' harus array {'CuPy' if want == 'cupy' else 'NumPy'} untuk "
            f"backend={backend!r}, tetapi yang diterima array "
            f"{'CuPy' if want == 'numpy' else 'NumPy'}. Pindahkan dulu dengan {move}."
        )
    return x


def _check_shape(x, name: str, shape: tuple, layout: str, fix: str) -> None:
    if tuple(x.shape) != tuple(shape):
        raise ValueError(
            f"Argumen '{name}' harus berbentuk {layout} = {tuple(shape)}, tetapi yang diterima "
            f"{tuple(x.shape)}. Kernel membaca dan menulis memori mentah menurut bentuk itu; "
            f"{fix}"
        )


def _check_entry(k, name: str, *, split: bool, how: str) -> registry.Kernel:
    """``k`` is a registry entry (a split-K pass when ``split``)."""
    if not isinstance(k, registry.Kernel):
        raise TypeError(
            f"Argumen '{name}' harus entri registri kernel (atensi.kernels.registry.Kernel), "
            f"tetapi yang diterima {k!r} ({type(k).__name__}). Ambil dengan {how}."
        )
    if split and not k.split:
        raise ValueError(
            f"Argumen '{name}' harus lintasan split-K (entri dengan split=True), tetapi yang "
            f"diterima kernel {k.name}. Ambil dengan {how}."
        )
    return k


def launch_partials(k: registry.Kernel, Qd, Kd, Vd, splits, *, causal, scale, backend):
    """Split-K pass ``k`` (a registry entry with ``split``): ``(Op, ML)`` for
    ``splits`` key ranges per query tile.

    ``Op`` (splits, H, T, d_k): o of each range, not divided by l;
    ``ML`` (splits, H, T, 2): (m, l) per row, m in log2 units (Q is
    prescaled by log2 e). Empty ranges hold m = -inf, l = 0, o = 0.
    """
    how = "launch.fused_kernel('v2', d_k, split=True)"
    k = _check_entry(k, "k", split=True, how=how)
    causal, scale = _v.check_flag(causal, "causal"), _v.check_flag(scale, "scale")
    Qd = _check_backend_array(Qd, "Qd", backend, "(..., T, d_k)")
    if Qd.ndim < 2:
        raise ValueError(f"Argumen 'Qd' harus berbentuk (..., T, d_k), tetapi yang diterima "
                         f"{tuple(Qd.shape)}. Tambahkan sumbu: Qd[None, :].")
    for name, x in (("Kd", Kd), ("Vd", Vd)):
        _check_shape(_check_backend_array(x, name, backend, "(..., T, d_k)"), name, Qd.shape,
                     "(..., T, d_k) sama dengan Qd", "K dan V yang lebih pendek dibaca melewati "
                     "ujungnya. Samakan bentuk Qd, Kd dan Vd.")
    if backend == "cpu":
        # NaN in Q, K or V would come back as a row of zeros (the running
        # maximum never takes it); on the emulator the scan costs nothing
        # next to the launch. CuPy arrays are left unread: no host sync here.
        for name, x in (("Qd", Qd), ("Kd", Kd), ("Vd", Vd)):
            _v.check_finite(x, name)
    T, d_k = Qd.shape[-2], Qd.shape[-1]
    if k.width is not None and d_k > k.width:
        raise ValueError(
            f"d_k = {d_k} (sumbu terakhir 'Qd') melebihi lebar kernel {k.name} (D = {k.width}). "
            f"Pakai k = launch.fused_kernel({k.version!r}, {d_k}, split=True)."
        )
    splits = _v.check_int(splits, "splits", low=1, high=FUSED_MAX_SPLITS)
    check_runs((k, registry.get(k.combine)) if k.combine else (k,), backend)
    H = _v.leading(Qd.shape)
    Op = arrays.empty((splits, H, T, d_k), backend)
    ML = arrays.empty((splits, H, T, 2), backend)
    grid = (ceil_div(T, k.rows), min(H, MAX_GRID_YZ), splits)
    args = (Qd, Kd, Vd, Op, ML, np.int32(T), np.int32(d_k), np.int32(H),
            scale_factor(d_k, scale), np.int32(bool(causal)))
    args += _aligned_flag(k, d_k, Qd, Kd, Vd, Op)
    kernel = _with_dynamic_shared(_get(k, backend), k.dynamic_shared)
    kernel(grid, k.block, args + (np.int32(splits),), shared_mem=k.dynamic_shared)
    return Op, ML


def launch_combine(name: str, Op, ML, Od, *, backend):
    """Combine kernel ``name``: O = sum_s exp2(m_s - m) o_s / sum_s exp2(m_s - m) l_s, per row."""
    combines = tuple(dict.fromkeys(e.combine for e in registry.KERNELS if e.combine))
    if not isinstance(name, str) or name not in combines:
        raise ValueError(
            f"Argumen 'name' harus nama kernel penggabung ({', '.join(map(repr, combines))}), "
            f"tetapi yang diterima {name!r}. Pakai k.combine dari entri split-K."
        )
    Op = _check_backend_array(Op, "Op", backend, "(splits, H, T, d_k)")
    if Op.ndim != 4:
        raise ValueError(
            f"Argumen 'Op' harus berdimensi 4 dengan bentuk (splits, H, T, d_k), tetapi yang "
            f"diterima berdimensi {Op.ndim} dengan bentuk {tuple(Op.shape)}. Pakai Op dari "
            "launch_partials apa adanya."
        )
    splits, H, T, d_k = Op.shape
    _check_shape(_check_backend_array(ML, "ML", backend, "(splits, H, T, 2)"), "ML",
                 (splits, H, T, 2), "(splits, H, T, 2)",
                 "pakai ML dari panggilan launch_partials yang sama dengan Op.")
    Od = _check_backend_array(Od, "Od", backend, "(..., T, d_k)", output=True)
    if Od.ndim < 2 or Od.shape[-2:] != (T, d_k) or _v.leading(Od.shape) != H:
        raise ValueError(
            f"Argumen 'Od' harus berbentuk (..., T, d_k) = (..., {T}, {d_k}) dengan {H} baris "
            f"depan (H dari 'Op' {tuple(Op.shape)}), tetapi yang diterima {tuple(Od.shape)}. "
            "Od yang lebih kecil ditulis melewati ujungnya, yang lebih besar hanya terisi "
            "sebagian. Buat dengan bentuk Q, misalnya np.empty(Q.shape, np.float32)."
        )
    k = registry.get(name)
    check_runs((k,), backend)
    n = H * T * d_k
    grid = (max(1, min(ceil_div(n, k.block[0]), MAX_GRID_X)), 1, 1)
    args = (Op, ML, Od, np.int32(T), np.int32(d_k), np.int32(H), np.int32(splits))
    _get(k, backend)(grid, k.block, args)
    return Od


def launch_fused(Qd, Kd, Vd, *, causal, scale, backend, version="v1",
                 splits=None, precision=DEFAULT_PRECISION):
    """Launch fused ``version``: online softmax, no (T, T) array.

    Q, K, V arrive validated and on the backend, shape ``(..., T, d_k)``; the
    output has the same shape, on the same backend. The kernel is the
    registry's for the version, d_k and ``precision`` (the tensor-core
    format; other kernels ignore it). ``splits`` key ranges per query tile
    (None: :func:`default_splits`); splits > 1 runs the version's split-K
    pass, then its ``combine`` kernel, with 4·splits·H·T·(d_k + 2) bytes of
    float32 scratch.
    """
    T, d_k = Qd.shape[-2], Qd.shape[-1]
    H = _v.leading(Qd.shape)
    limits.check_d_k_limit(d_k, fused_max_d_k(version), fused_family(version, precision))
    impl = f"fused-{version}"
    check_runs(impl_kernels(impl, d_k, precision), backend, impl=impl, d_k=d_k,
               precision=precision)
    if splits is None:
        splits = default_splits(version, H, T, _sm_count(backend))
    Od = arrays.empty(Qd.shape, backend)
    if splits > 1:
        k = fused_kernel(version, d_k, precision, split=True)
        Op, ML = launch_partials(k, Qd, Kd, Vd, splits, causal=causal, scale=scale,
                                 backend=backend)
        return launch_combine(k.combine, Op, ML, Od, backend=backend)
    k = fused_kernel(version, d_k, precision)
    grid = (ceil_div(T, k.rows), min(H, MAX_GRID_YZ), 1)
    args = (Qd, Kd, Vd, Od, np.int32(T), np.int32(d_k), np.int32(H),
            scale_factor(d_k, scale), np.int32(bool(causal)))
    args += _aligned_flag(k, d_k, Qd, Kd, Vd, Od)
    kernel = _with_dynamic_shared(_get(k, backend), k.dynamic_shared)
    kernel(grid, k.block, args, shared_mem=k.dynamic_shared)
    return Od


def launch_attention(Qd, Kd, Vd, *, impl, causal, scale, backend, splits=None,
                     precision=DEFAULT_PRECISION):
    """One head with pipeline ``impl`` (see :data:`IMPLS`) on validated backend arrays."""
    if impl in FUSED:
        return launch_fused(Qd, Kd, Vd, causal=causal, scale=scale, backend=backend,
                            version=FUSED[impl], splits=splits, precision=precision)
    version, causal_softmax, ws_version = CHAINS[impl]
    T, d_k = Qd.shape[-2], Qd.shape[-1]
    H = _v.leading(Qd.shape)
    # Every array before the first launch: a MemoryError then comes before any
    # emulated work, not after minutes of it.
    Sd = arrays.empty(Qd.shape[:-1] + (T,), backend)
    Ad = arrays.empty(Sd.shape, backend)
    Od = arrays.empty(Vd.shape, backend)
    launch_scores(Qd, Kd, Sd, H, T, d_k, scale=scale, causal=causal, version=version,
                  backend=backend)
    launch_softmax(Sd, Ad, H * T, T, version=version, backend=backend,
                   causal=causal and causal_softmax)
    launch_weighted_sum(Ad, Vd, Od, H, T, d_k, backend=backend, version=ws_version,
                        causal=causal and ws_version == "v2")
    return Od


# --- RoPE (kernels/rope.cu) ----------------------------------------------------


def launch_rope(Xd, Od, rows, T, d_k, *, offset, base, backend, version="v1"):
    """Rotate every (row, pair) of ``Xd`` (rows = H·T rows of d_k) into ``Od``."""
    k = registry.for_step("rope", version)  # one thread per (row, pair); the kernel loops past the grid
    pairs = rows * (d_k // 2)
    grid = (max(1, min(ceil_div(pairs, k.block[0]), MAX_GRID_X)), 1, 1)
    args = (Xd, Od, np.int32(rows), np.int32(T), np.int32(d_k), np.int32(offset),
            np.float32(base))
    _get(k, backend)(grid, k.block, args)
    return Od
