"""Check kernel arguments against the C signature and pack them as ``void**``.

The signature comes from the compiled library (``cudacpu_signature__<name>``),
so the C types are the compiler's, not a guess from the source text. Stricter
than CuPy on purpose: CuPy sends a Python int as 64 bits and a Python float as
a double, ignores strides and never checks dtypes -- each is a silent wrong
answer on a GPU, so here each is an error that says what to pass instead.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

_NUMPY = {
    "f4": np.float32, "f8": np.float64,
    "i1": np.int8, "i2": np.int16, "i4": np.int32, "i8": np.int64,
    "u1": np.uint8, "u2": np.uint16, "u4": np.uint32, "u8": np.uint64,
    "b1": np.bool_,
}
_CNAME = {
    "f4": "float", "f8": "double", "i1": "signed char", "i2": "short", "i4": "int",
    "i8": "long long", "u1": "unsigned char", "u2": "unsigned short", "u4": "unsigned int",
    "u8": "unsigned long long", "b1": "bool", "c1": "char", "v": "void",
}


@dataclass(frozen=True)
class Param:
    name: str
    code: str          # "f4", "i4", ... (for pointers: the pointee)
    pointer: bool
    const: bool

    @property
    def ctype(self) -> str:
        base = _CNAME.get(self.code, f"struct {self.code[1:]} byte")
        if not self.pointer:
            return base
        return f"const {base}*" if self.const else f"{base}*"

    def accepts(self, dtype: np.dtype) -> bool:
        if self.code == "v" or self.code.startswith("o"):
            return True
        if self.code == "c1":
            return dtype in (np.dtype(np.int8), np.dtype(np.uint8))
        return dtype == np.dtype(_NUMPY[self.code])


def parse_signature(sig: str, names: tuple[str, ...]) -> tuple[Param, ...]:
    codes = [c for c in sig.split(",") if c] if sig else []
    if len(names) != len(codes):
        names = tuple(f"arg{i}" for i in range(len(codes)))
    params = []
    for name, code in zip(names, codes):
        pointer = code.startswith("p")
        const = code.startswith("pc")
        params.append(Param(name, code[2:] if const else code[1:] if pointer else code, pointer, const))
    return tuple(params)


def _label(i: int, p: Param) -> str:
    return f"Argumen ke-{i + 1} ('{p.name}')"


def _suggest(p: Param, shown: str) -> str:
    np_name = _NUMPY.get(p.code, np.int8).__name__
    return f"np.{np_name}({shown})"


def _check_array(i: int, p: Param, a: np.ndarray, kernel: str) -> None:
    if not p.pointer:
        raise TypeError(
            f"{_label(i, p)} adalah array NumPy, tetapi parameter kernel '{kernel}' berupa skalar "
            f"{p.ctype}. Kirim satu nilai, misalnya {_suggest(p, p.name)}."
        )
    if not p.accepts(a.dtype):
        want = _NUMPY[p.code].__name__ if p.code in _NUMPY else "int8 atau uint8"
        raise TypeError(
            f"{_label(i, p)} harus array {want} (parameter kernel: {p.ctype}), tetapi dtype-nya "
            f"{a.dtype}. Ubah dulu dengan {p.name}.astype(np.{want.split()[0]})."
        )
    if not a.flags.c_contiguous:
        raise ValueError(
            f"{_label(i, p)} bukan array C-contiguous (shape {a.shape}, strides {a.strides}). Kernel "
            f"membaca memori baris demi baris, jadi view hasil transpose/slicing akan terbaca salah. "
            f"Buat salinan dengan np.ascontiguousarray({p.name})."
        )
    if not p.const and not a.flags.writeable:
        raise ValueError(
            f"{_label(i, p)} hanya bisa dibaca (read-only), padahal parameter kernel {p.ctype} boleh "
            f"ditulisi oleh kernel. Berikan salinan yang bisa ditulisi: {p.name}.copy()."
        )


def _scalar_bytes(i: int, p: Param, v, kernel: str) -> np.ndarray:
    if p.pointer:
        raise TypeError(
            f"{_label(i, p)} harus array NumPy (parameter kernel '{kernel}': {p.ctype}), tetapi yang "
            f"diterima {type(v).__name__}."
        )
    if isinstance(v, (bool, int, float)) and not isinstance(v, np.generic):  # np.float64 is a float
        raise TypeError(
            f"{_label(i, p)} adalah {type(v).__name__} Python ({v!r}), padahal kernel '{kernel}' mengharapkan "
            f"{p.ctype}. Kirim {_suggest(p, repr(v))}: CuPy mengirim int Python sebagai 64-bit dan float "
            f"Python sebagai double, sehingga kernel bisa membaca nilai yang salah tanpa pesan apa pun."
        )
    if not isinstance(v, np.generic):
        raise TypeError(
            f"{_label(i, p)} bertipe {type(v).__name__}; parameter kernel '{kernel}' adalah {p.ctype}. "
            f"Kirim skalar NumPy, misalnya {_suggest(p, p.name)}."
        )
    if p.code.startswith("o"):
        raw = np.frombuffer(np.asarray(v).tobytes(), dtype=np.uint8).copy()
        if raw.size != int(p.code[1:]):
            raise TypeError(f"{_label(i, p)}: ukuran {raw.size} byte tidak sama dengan parameter kernel "
                            f"({p.code[1:]} byte).")
        return raw
    if not p.accepts(v.dtype):
        want = _NUMPY[p.code].__name__ if p.code in _NUMPY else "int8"
        raise TypeError(
            f"{_label(i, p)} bertipe numpy.{v.dtype}, tetapi parameter kernel '{kernel}' bertipe "
            f"{p.ctype} ({np.dtype(_NUMPY.get(p.code, np.int8)).itemsize * 8}-bit). Ubah dulu dengan "
            f"np.{want}({p.name})."
        )
    return np.array(v)


@dataclass
class Packed:
    argv: ctypes.Array            # void*[n], each pointing at one argument's bytes
    keep: list                    # buffers that must outlive the launch
    arrays: list                  # (index, Param, array, pointer holder) per array argument


def pack(params: tuple[Param, ...], args, kernel: str) -> Packed:
    if not isinstance(args, (tuple, list)):
        raise TypeError(
            f"'args' untuk kernel '{kernel}' harus tuple (seperti di CuPy), tetapi yang diterima "
            f"{type(args).__name__}. Contoh: kernel(grid, block, (x, y, np.int32(n)))."
        )
    if len(args) != len(params):
        names = ", ".join(p.name for p in params) or "-"
        raise TypeError(
            f"Kernel '{kernel}' punya {len(params)} parameter ({names}), tetapi 'args' berisi "
            f"{len(args)} nilai."
        )
    argv = (ctypes.c_void_p * max(1, len(params)))()
    keep, arrays = [], []
    for i, (p, v) in enumerate(zip(params, args)):
        if isinstance(v, np.ndarray):
            _check_array(i, p, v, kernel)
            holder = np.array([v.ctypes.data], dtype=np.uintp)
            arrays.append((i, p, v, holder))
        elif type(v).__module__.split(".")[0] == "cupy":
            raise TypeError(
                f"{_label(i, p)} adalah array CuPy (di memori GPU); cudacpu menjalankan kernel di CPU "
                f"dan butuh array NumPy. Salin dulu dengan cupy.asnumpy({p.name})."
            )
        else:
            holder = _scalar_bytes(i, p, v, kernel)
        keep.append(holder)
        argv[i] = holder.ctypes.data
    return Packed(argv, keep, arrays)
