"""Berkas bobot model (``.npz``): satu format, ditulis dan dibaca di sini.

Satu tugas: tata letak berkas bobot yang ditulis ``TinyGPT.save`` dan dibaca
``TinyGPT.load`` (``atensi.model``), dan pemeriksaannya saat dibaca. Isinya::

    format          bilangan bulat: versi tata letak ini (FORMAT)
    config          teks JSON: ukuran model (atensi.model.Config)
    chars           kosakata: satu teks (model karakter) atau array teks (model kata)
    info            teks JSON: catatan pelatihan (objek)
    param/<nama>    bobot float32, satu array per parameter
    curve/<nama>    kurva latihan (boleh tidak ada)

Berkas dibaca tanpa mempercayai isinya: setiap anggota arsip diperiksa
(kunci, bentuk, dtype, ukuran yang diakui) sebelum ada yang dibuka, karena
berkas beberapa MiB bisa berisi "bom zip" puluhan GiB, dan anggota yang
terenkripsi atau dikompresi dengan metode lain (AES) ditolak dengan pesan.
"""

from __future__ import annotations

import io
import json
import math
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from . import files, memory, model_checks

FORMAT = 1  # version of the .npz layout written by write()
REMAKE = "Buat ulang dengan: python -m atensi.train"

_META_KEYS = ("format", "config", "chars", "info")
# What write() stores for each: an int, three texts (a word vocabulary: a 1-D text array).
_META_KINDS = {"format": ("iu", (0,)), "config": ("U", (0,)), "chars": ("U", (0, 1)),
               "info": ("U", (0,))}
_META_BYTES = 1 << 20     # config, vocabulary, info: small texts
_CURVE_BYTES = 64 << 20   # every curve/... member together
_HEADER_BYTES = 4096      # the .npy header of one member
# What np.savez writes (stored or deflate); zipfile also reads bzip2 and lzma.
_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
_AES = 99  # the compression number WinZip's AES encryption writes


@dataclass
class Contents:
    """What a weights file holds, checked: ``config`` as the model made it."""

    config: object
    chars: str | tuple
    params: dict
    curve: dict
    info: dict
    path: Path


def path_of(path, name: str = "path") -> Path:
    """``path`` as a Path with ``~`` expanded (a folder literally named ``~`` is a trap)."""
    return files.as_path(path, name).expanduser()


def write(path, *, params: dict, config: dict, chars, curve: dict | None = None,
          info: dict | None = None) -> Path:
    """Write a weights file: ``params`` as float32, ``config`` (a JSON object), the
    vocabulary, the training curve and ``info``. The old file stays whole until the
    new one is on disk. Returns the path written (``~`` expanded)."""
    path = path_of(path)
    files.check_output_path(path, "path", ".npz")  # before any work
    info = model_checks.check_json_object(info, "info")
    try:
        json.dumps(info or {}, allow_nan=False)
    except ValueError:
        raise ValueError("Argumen 'info' berisi NaN atau inf, yang bukan JSON sah dan tidak bisa "
                         "dibaca ulang. Ganti nilai itu dengan angka hingga atau None.") from None
    if not isinstance(params, dict) or not params:
        raise TypeError(f"Argumen 'params' harus dict nama -> array yang tidak kosong, tetapi "
                        f"yang diterima {type(params).__name__}. Pakai model.params.")
    data = {}
    for k, v in params.items():
        try:
            data[f"param/{k}"] = np.asarray(v.get() if hasattr(v, "get") else v, dtype=np.float32)
        except (TypeError, ValueError):
            raise TypeError(f"Argumen 'params': parameter '{k}' harus array angka, tetapi yang "
                            f"diterima {type(v).__name__}. Pakai model.params.") from None
    for k, v in (curve or {}).items():
        data[f"curve/{k}"] = np.asarray(v)
    data["format"] = np.array(FORMAT)
    data["config"] = np.array(json.dumps(config))
    data["chars"] = np.array(chars)
    data["info"] = np.array(json.dumps(info or {}, ensure_ascii=False))
    # Packed in memory first (a few MiB): zipfile writing straight to a full device
    # leaves a half archive and English noise behind; files.write_bytes says it in Indonesian.
    packed = io.BytesIO()
    np.savez_compressed(packed, **data)
    files.write_bytes(path, packed.getvalue())
    return path


def read(path, make: Callable[[dict], tuple[object, dict]], remake: str = REMAKE) -> Contents:
    """Read and check a weights file.

    ``make(config_dict)`` returns ``(config, {parameter name: shape})`` and raises
    TypeError or ValueError for a config it does not accept. ``remake`` is the
    sentence that says how to make the file again.
    """
    path = path_of(path)
    if path.is_dir():
        raise IsADirectoryError(
            f"Argumen 'path' = '{path}' adalah folder, bukan berkas bobot. Sebutkan berkas "
            f".npz-nya, misalnya {path / 'model_kecil.npz'}.")
    if path.exists() and not path.is_file():
        raise ValueError(
            f"Argumen 'path' = '{path}' bukan berkas biasa (perangkat, FIFO atau soket), "
            "jadi tidak bisa dibaca sebagai berkas bobot. Sebutkan berkas .npz-nya.")
    if not path.is_file():
        raise FileNotFoundError(
            f"Berkas bobot '{path}' tidak ditemukan. {remake} (menulis "
            "results/model_kecil.npz), atau ambil berkas itu dari repositori buku."
        )
    try:
        data, config, shapes = _read_members(path, make, remake)
    except (zipfile.BadZipFile, EOFError, OSError, zlib.error, KeyError) as err:
        why = {zipfile.BadZipFile: "bukan arsip zip yang utuh", EOFError: "berakhir terlalu cepat",
               zlib.error: "isi terkompresinya rusak",
               KeyError: f"anggota {err} tidak ada"}.get(type(err))
        why = why or f"tidak bisa dibaca: {getattr(err, 'strerror', None) or err}"
        raise ValueError(
            f"Berkas bobot '{path}' rusak atau terpotong ({why}). "
            f"Hapus berkas itu, lalu {remake[0].lower() + remake[1:]}."
        ) from err
    # A character vocabulary is stored as one string, a word vocabulary as a list.
    chars = str(data["chars"]) if data["chars"].ndim == 0 else tuple(data["chars"].tolist())
    params = {k[len("param/"):]: v for k, v in data.items() if k.startswith("param/")}
    for name in shapes:
        if not np.isfinite(params[name]).all():
            raise ValueError(f"Parameter '{name}' di berkas bobot '{path}' berisi NaN atau "
                             f"inf. {remake}.")
    try:
        info = json.loads(str(data["info"])) if "info" in data else {}
    except ValueError:
        info = None
    if not isinstance(info, dict):
        raise ValueError(f"'info' di berkas bobot '{path}' bukan objek JSON. {remake}.")
    return Contents(config=config, chars=chars,
                    params={k: params[k].astype(np.float32) for k in shapes},
                    curve={k[len("curve/"):]: v for k, v in data.items() if k.startswith("curve/")},
                    info=info, path=path)


def _npy_header(archive: zipfile.ZipFile, member: str):
    """(shape, dtype, declared size) of one .npy member, read without its data."""
    try:
        with archive.open(member) as f:
            version = np.lib.format.read_magic(f)
            read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                           else np.lib.format.read_array_header_2_0)
            shape, _, dtype = read_header(f)
    except ValueError as err:  # not a .npy header
        raise zipfile.BadZipFile(f"{member}: {err}") from None
    return tuple(shape), dtype, archive.getinfo(member).file_size


def _check_entries(archive: zipfile.ZipFile, path: Path, remake: str) -> None:
    """Refuse encrypted members, and members packed with a method zipfile cannot read
    (WinZip's AES, say), before one is opened: Python would say so in English."""
    for entry in archive.infolist():
        if entry.flag_bits & 0x1 or entry.compress_type == _AES:
            raise ValueError(
                f"Berkas bobot '{path}' berisi anggota terenkripsi ('{entry.filename}', dikunci "
                "kata sandi): berkas bobot atensi tidak pernah dienkripsi, jadi berkas ini dibuat "
                f"atau dikemas ulang oleh program lain. Pakai berkas aslinya, atau {remake[0].lower()}"
                f"{remake[1:]}."
            )
        if entry.compress_type not in _METHODS:
            raise ValueError(
                f"Berkas bobot '{path}': anggota '{entry.filename}' dikompresi dengan metode "
                f"nomor {entry.compress_type}, yang tidak bisa dibaca (yang bisa: tanpa kompresi, "
                "deflate, bzip2, lzma; np.savez memakai deflate). Berkas itu dikemas ulang oleh "
                f"program lain. Pakai berkas aslinya, atau {remake[0].lower()}{remake[1:]}."
            )


def _read_members(path: Path, make, remake: str):
    """The members of a weights file, checked before any of them is decompressed:
    known keys only, the shapes and dtypes its config implies, declared sizes within
    the parameter bytes (a few MiB can hold a zip bomb of many GiB)."""
    problem = f"Berkas bobot '{path}'"
    try:
        archive = np.load(path, allow_pickle=False)
    except ValueError as err:  # neither .npz nor .npy (NumPy would try pickle)
        raise zipfile.BadZipFile(str(err)) from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise ValueError(f"{problem} bukan arsip .npz (satu array .npy saja). {remake}.")
    with archive as f:
        _check_entries(f.zip, path, remake)
        keys = list(f.files)
        unknown = [k for k in keys if k not in _META_KEYS
                   and not k.startswith(("param/", "curve/"))]
        for key in _META_KEYS[:3]:
            if key not in keys:
                raise ValueError(
                    f"Berkas '{path}' bukan berkas bobot atensi.model (kunci '{key}' tidak ada). "
                    f"Periksa nama berkasnya. {remake}.")
        if unknown:
            raise ValueError(f"{problem} berisi kunci yang tidak dikenal: "
                             f"{', '.join(unknown[:4])}. {remake}.")
        twice = sorted({k for k in keys if keys.count(k) > 1})
        if twice:
            raise ValueError(f"{problem} berisi dua array atau lebih bernama "
                             f"{', '.join(twice[:4])}: tidak jelas mana yang dimaksud. Berkas itu "
                             f"rusak atau disunting. {remake}.")
        headers = {k: _npy_header(f.zip, k + ".npy") for k in keys}
        _check_headers(headers, problem, remake)
        if int(f["format"]) != FORMAT:
            raise ValueError(
                f"Berkas bobot '{path}' berformat {int(f['format'])}, sedangkan pustaka ini "
                f"membaca format {FORMAT}. {remake}."
            )
        try:
            config, expected = make(json.loads(str(f["config"])))
        except (TypeError, ValueError) as err:
            raise ValueError(
                f"Config di berkas bobot '{path}' tidak cocok dengan atensi.model.Config ({err}). "
                f"{remake}."
            ) from err
        _check_params(headers, expected, path, remake)
        memory.check_output_bytes(float(sum(h[2] for h in headers.values())),
                                  f"Isi berkas bobot '{path}'", "Pakai model yang lebih kecil.")
        data = {k: f[k] for k in keys}
    return data, config, expected


def _check_headers(headers: dict, problem: str, remake: str) -> None:
    """Declared sizes and the kinds of the metadata members, from their headers alone."""
    for k, (shape, dtype, size) in headers.items():
        # NumPy allocates what the header declares before reading: a damaged header
        # would ask for terabytes.
        if dtype.hasobject or math.prod(shape) * dtype.itemsize > size:
            raise ValueError(f"{problem}: '{k}' mengaku berisi {shape} {dtype}, lebih dari "
                             f"{size} bita yang ada di arsip. Berkas itu rusak. {remake}.")
    for key in _META_KEYS:
        if key not in headers:
            continue
        shape, dtype, size = headers[key]
        if size > _META_BYTES:
            raise ValueError(f"{problem}: '{key}' berukuran {size} bita, terlalu "
                             f"besar untuk teks. {remake}.")
        kinds, ndims = _META_KINDS[key]
        if dtype.kind not in kinds or len(shape) not in ndims:
            what = "satu bilangan bulat" if key == "format" else "teks"
            raise ValueError(f"{problem}: '{key}' harus {what}, tetapi berisi array "
                             f"{dtype} berbentuk {shape}. Berkas itu rusak. {remake}.")
    curve_bytes = sum(size for k, (_, _, size) in headers.items() if k.startswith("curve/"))
    if curve_bytes > _CURVE_BYTES:
        raise ValueError(f"{problem}: kurva latihan berukuran {curve_bytes} bita, jauh lebih "
                         f"dari yang ditulis atensi.train. {remake}.")


def _check_params(headers: dict, expected: dict, path: Path, remake: str) -> None:
    """The parameters the config implies, with their shapes, as floats, of honest sizes."""
    params = {k[len("param/"):]: v for k, v in headers.items() if k.startswith("param/")}
    missing = sorted(set(expected) - set(params))
    extra = sorted(set(params) - set(expected))
    wrong = sorted(k for k in set(expected) & set(params) if params[k][0] != expected[k])
    floats = sorted(k for k in set(expected) & set(params)
                    if params[k][1].kind != "f" or params[k][1].itemsize > 8)
    if missing or extra or wrong or floats:
        detail = "; ".join(s for s in (
            f"tidak ada {', '.join(missing[:4])}" if missing else "",
            f"berlebih {', '.join(extra[:4])}" if extra else "",
            ", ".join(f"{k} berbentuk {params[k][0]}, seharusnya {expected[k]}"
                      for k in wrong[:3]),
            ", ".join(f"{k} bertipe {params[k][1]}, seharusnya float" for k in floats[:3]),
        ) if s)
        raise ValueError(f"Bobot di berkas '{path}' tidak cocok dengan config-nya: {detail}. "
                         f"{remake}.")
    for k, (shape, dtype, size) in params.items():
        if size > math.prod(shape) * dtype.itemsize + _HEADER_BYTES:
            raise ValueError(f"Berkas bobot '{path}': 'param/{k}' mengaku berukuran {size} bita, "
                             f"lebih dari bentuknya {shape}. Berkas itu rusak. {remake}.")
