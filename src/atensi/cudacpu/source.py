"""Turn a .cu text into a C++ translation unit for g++.

Three jobs, all keeping the .cu line numbers (so g++ and the sanitizers
point at the .cu line through ``#line``):

* find the ``__global__`` kernels and their parameter names;
* rewrite ``extern __shared__ T s[];`` (not valid C++) into a pointer at the
  header's dynamic shared-memory buffer, and ``static __shared__`` into
  ``__shared__`` (the header already makes it ``static``); move alignment
  written after ``__shared__`` (``__shared__ __align__(32) float x[N];``,
  valid CUDA) in front of it, where C++ lets ``alignas`` apply to the variable;
* append one trampoline per kernel that takes ``void** args`` the way
  ``cuLaunchKernel`` does, plus a function that reports the parameter types.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import CudaCpuError

TRAMPOLINE_FILE = "<cudacpu-trampolin>"


@dataclass(frozen=True)
class KernelDecl:
    name: str
    param_names: tuple[str, ...]
    extern_c: bool
    line: int
    max_threads: str | None = None  # first argument of __launch_bounds__, as written


def _blank(text: str, pattern: re.Pattern) -> str:
    """Replace every match by spaces, keeping newlines (so offsets stay)."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRINGS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
_PREPROC = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)

_BOUNDS = r"__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)"
_KERNEL = re.compile(
    r"\b__global__\s+(?:" + _BOUNDS + r"\s*)?void\s+"
    r"(?:" + _BOUNDS + r"\s*)?([A-Za-z_]\w*)\s*\("
)
_BOUNDS_ARGS = re.compile(r"__launch_bounds__\s*\(")
_EXTERN_C_BLOCK = re.compile(r'\bextern\s+"C"\s*\{')
_EXTERN_C_DECL = re.compile(r'\bextern\s+"C"(?:\s+\w+)*$')
_ATTR = r"(?:__shared__|volatile|__align__\s*\(\s*\w+\s*\)|alignas\s*\(\s*\w+\s*\))"
_EXTERN_SHARED = re.compile(
    r"\bextern\s+((?:" + _ATTR + r"\s+)+)([A-Za-z_][\w\s:<>,*]*?)\s*\b([A-Za-z_]\w*)\s*\[\s*\]\s*;"
)
_ALIGN = r"(?:__align__|alignas)\s*\(\s*\w+\s*\)"
_STATIC_SHARED = re.compile(r"\bstatic(?=\s+(?:" + _ALIGN + r"\s*)*__shared__\b)")
_SHARED_THEN_ALIGN = re.compile(r"\b__shared__((?:\s*" + _ALIGN + r")+)")


def _matching(text: str, start: int, open_ch: str, close_ch: str) -> int:
    """Index of the bracket closing the one at ``start`` (-1 if none)."""
    depth = 0
    for i in range(start, len(text)):
        ch = text[i]
        if ch == open_ch:
            depth += 1
        elif ch == close_ch:
            depth -= 1
            if depth == 0:
                return i
    return -1


def _param_names(params: str) -> tuple[str, ...]:
    if not params.strip() or params.strip() == "void":
        return ()
    names, depth, cur = [], 0, ""
    for ch in params + ",":
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        if ch == "," and depth == 0:
            part = re.sub(r"\[[^\]]*\]\s*$", "", cur.strip())
            found = re.findall(r"[A-Za-z_]\w*", part)
            names.append(found[-1] if found else f"arg{len(names)}")
            cur = ""
        else:
            cur += ch
    return tuple(names)


def find_kernels(code: str) -> dict[str, KernelDecl]:
    """The ``__global__`` functions of ``code``, in source order."""
    no_comments = _blank(code, _COMMENTS)
    plain = _blank(_blank(no_comments, _STRINGS), _PREPROC)
    c_spans = []
    for m in _EXTERN_C_BLOCK.finditer(no_comments):
        end = _matching(plain, m.end() - 1, "{", "}")
        c_spans.append((m.end(), end if end >= 0 else len(plain)))
    kernels: dict[str, KernelDecl] = {}
    for m in _KERNEL.finditer(plain):
        name = m.group(1)
        head_start = max(plain.rfind(";", 0, m.start()), plain.rfind("}", 0, m.start()),
                         plain.rfind("{", 0, m.start())) + 1
        head = no_comments[head_start:m.start()]
        if re.search(r"\btemplate\s*<", head):
            continue  # a template kernel has no single address to launch
        close = _matching(plain, m.end() - 1, "(", ")")
        params = plain[m.end():close] if close >= 0 else ""
        extern_c = bool(_EXTERN_C_DECL.search(head.rstrip())
                        or any(a <= m.start() < b for a, b in c_spans))
        decl = KernelDecl(name, _param_names(params), extern_c, code.count("\n", 0, m.start()) + 1,
                          _launch_bounds(plain, head_start, m.end()))
        if name not in kernels or (params.strip() and not kernels[name].param_names):
            kernels[name] = decl
    return kernels


def _launch_bounds(plain: str, start: int, end: int) -> str | None:
    """The maxThreadsPerBlock expression of a ``__launch_bounds__`` in plain[start:end]."""
    b = _BOUNDS_ARGS.search(plain, start, end)
    if b is None:
        return None
    close = _matching(plain, b.end() - 1, "(", ")")
    if close < 0:
        return None
    args = plain[b.end():close]
    depth = 0
    for i, ch in enumerate(args):
        depth += ch in "(<["
        depth -= ch in ")>]"
        if ch == "," and depth == 0:
            args = args[:i]
            break
    return " ".join(args.split()) or None


_SHARED = re.compile(r"\b__shared__\b")


def _declared_names(decl: str) -> list[str]:
    """Names declared by ``decl`` (the text after ``__shared__`` up to ``;``)."""
    parts, depth, cur = [], 0, ""
    for ch in decl + ",":
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    names = []
    for part in parts:
        part = re.sub(r"\[.*$", "", part.split("=")[0], flags=re.S).strip()
        found = re.findall(r"[A-Za-z_]\w*", part)
        if found:
            names.append(found[-1])
    return names


def _in_function(plain: str, pos: int) -> bool:
    """Is ``pos`` inside a function body (some enclosing ``{`` follows a ``)``)?"""
    depth, i = 0, pos - 1
    while i >= 0:
        ch = plain[i]
        if ch == "}":
            depth += 1
        elif ch == "{":
            if depth:
                depth -= 1
            elif plain[:i].rstrip().endswith(")") or re.search(r"\)\s*(?:const\s*)?$", plain[:i]):
                return True
        i -= 1
    return False


def _rename_declarators(decl: str, names: list[str]) -> str:
    """``decl`` with each declared name prefixed by ``cudacpu_shvar_``."""
    out, depth, cur, k = [], 0, "", 0
    for ch in decl + ",":
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            head = re.split(r"[\[=]", cur, maxsplit=1)[0]
            if k < len(names):
                at = head.rfind(names[k])
                if at >= 0:
                    cur = cur[:at] + "cudacpu_shvar_" + cur[at:]
                    k += 1
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return ",".join(out)


def _register_static_shared(code: str, plain: str) -> str:
    """Follow each static ``__shared__`` declaration (at any scope) with a
    ``static const ::cudacpu::SharedReg`` on the same line, so the runtime can
    poison the variable at every block start (see cuda_cpu.h).

    Inside a function the variable is renamed ``cudacpu_shvar_<name>`` and
    ``<name>`` becomes a reference from ``::cudacpu::shared_ref``: the variable
    itself in a normal build, fresh memory for every block under
    ThreadSanitizer (so nothing of one block's accesses is seen by the next)."""
    out, last, count = [], 0, 0
    for m in _SHARED.finditer(plain):
        before = plain[max(0, m.start() - 200):m.start()]
        if re.search(r"\bextern\s+(?:\w+\s+|\w+\s*\([^)]*\)\s*)*$", before):
            continue
        end = m.end()
        depth = 0
        while end < len(plain):
            ch = plain[end]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif ch == ";" and depth == 0:
                break
            end += 1
        if end >= len(plain):
            continue
        names = _declared_names(plain[m.end():end])
        local = bool(names) and _in_function(plain, m.start())
        decl = code[m.end():end]
        if local:
            decl = _rename_declarators(decl, names)
        regs = []
        for name in names:
            var = f"cudacpu_shvar_{name}" if local else name
            regs.append(f" static const ::cudacpu::SharedReg cudacpu_shared_reg_{count}_{name}"
                        f"{{&{var}, sizeof({var})}};")
            if local:
                regs.append(f" auto& {name} = ::cudacpu::shared_ref({var}, {count}u);")
            count += 1
        out.append(code[last:m.end()])
        out.append(decl + ";")
        out.append("".join(regs))
        last = end + 1
    out.append(code[last:])
    return "".join(out)


def _align_before_shared(code: str, plain: str) -> str:
    """``__shared__ __align__(n)`` as ``__align__(n) __shared__``, on the same lines.

    The header defines ``__shared__`` as ``static`` and ``__align__(n)`` as
    ``alignas(n)``: ``static alignas(n) float x`` puts the alignment on the
    type, which g++ ignores with an error, while ``alignas(n) static float x``
    aligns the variable, as CUDA does for both orders.
    """
    out, last = [], 0
    for m in _SHARED_THEN_ALIGN.finditer(plain):
        attrs = code[m.start(1):m.end(1)]
        out.append(code[last:m.start()])
        out.append(" ".join(attrs.split()) + " __shared__" + "\n" * attrs.count("\n"))
        last = m.end()
    out.append(code[last:])
    return "".join(out)


def _rewrite_extern_shared(code: str, plain: str) -> str:
    out, last = [], 0
    for m in _EXTERN_SHARED.finditer(plain):
        if "__shared__" not in m.group(1):
            continue
        volatile = "volatile " if "volatile" in m.group(1) else ""
        ctype = volatile + " ".join(m.group(2).split())
        name = m.group(3)
        # In a function: per-block memory under ThreadSanitizer (see _register_static_shared).
        base = "::cudacpu::dyn_smem()" if _in_function(plain, m.start()) else "::cudacpu::g_dyn_smem"
        repl = f"{ctype}* const {name} = reinterpret_cast<{ctype}*>({base});"
        repl += "\n" * m.group(0).count("\n")  # keep the following line numbers
        out.append(code[last:m.start()])
        out.append(repl)
        last = m.end()
    out.append(code[last:])
    return "".join(out)


BOM = "\ufeff"  # editors on Windows start UTF-8 files with it; NVRTC and nvcc skip it


def read_cu(path, name: str = "path") -> str:
    """The text of a .cu file: UTF-8 whatever the locale, a leading BOM dropped.

    A folder, a missing file, or bytes that are not UTF-8 (a Latin-1 "é", a
    binary file) are refused in Indonesian, naming the file, and for bytes the
    line, column and byte value.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"Argumen '{name}' harus path berkas .cu (str atau pathlib.Path), bukan "
                        f"{type(path).__name__}.")
    path = Path(path).expanduser()
    if path.is_dir():
        raise IsADirectoryError(
            f"Argumen '{name}' = '{path}' adalah folder. Sebutkan satu berkas .cu di dalamnya, "
            f"misalnya '{path / 'softmax.cu'}'.")
    if path.exists() and not path.is_file():
        raise ValueError(f"Argumen '{name}' = '{path}' bukan berkas biasa (perangkat, FIFO atau "
                         "soket). Sebutkan berkas .cu-nya.")
    if not path.is_file():
        raise FileNotFoundError(f"Berkas .cu '{path}' (argumen '{name}') tidak ditemukan. Periksa "
                                "nama dan foldernya.")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise OSError(err.errno, f"Berkas .cu '{path}' tidak bisa dibaca: {err.strerror}.") from None
    return decode_cu(data, str(path))


def decode_cu(data: bytes, shown: str) -> str:
    """``data`` (the bytes of .cu file ``shown``) as text; see :func:`read_cu`."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise ValueError(
            f"Berkas .cu '{shown}' bukan teks UTF-8: baris {line}, kolom {column} berisi bita "
            f"0x{data[err.start]:02X}, yang tidak sah di UTF-8 (berkas itu disimpan dengan "
            "pengodean lain, misalnya Latin-1, atau bukan berkas teks). Simpan ulang berkasnya "
            "sebagai UTF-8 (di editor: Save with Encoding -> UTF-8), atau ganti karakter itu."
        ) from None
    return text.removeprefix(BOM)


def _display_name(path: str) -> str:
    return path.replace("\\", "/").replace('"', "'")


def _max_threads(k: KernelDecl) -> str:
    if k.max_threads is None:
        return "::cudacpu::kMaxThreads"
    return f"static_cast<unsigned>({k.max_threads})"


def translation_unit(code: str, path: str, kernels: dict[str, KernelDecl]) -> str:
    """The C++ text that g++ compiles for ``code``."""
    if "\0" in code:
        raise CudaCpuError(f"Kode sumber {path} berisi karakter NUL.")
    code = code.removeprefix(BOM)  # g++ would read it as stray bytes in the line after #line
    code = _align_before_shared(code, _blank(_blank(code, _COMMENTS), _STRINGS))
    plain = _blank(_blank(code, _COMMENTS), _STRINGS)
    body = _rewrite_extern_shared(code, plain)
    body = _STATIC_SHARED.sub(lambda m: " " * len(m.group(0)), body)
    body = _register_static_shared(body, _blank(_blank(_blank(body, _COMMENTS), _STRINGS), _PREPROC))
    lines = ['#include "cuda_cpu.h"', f'#line 1 "{_display_name(path)}"', body.rstrip("\n"), "",
             f'#line 1 "{TRAMPOLINE_FILE}"']
    for k in kernels.values():
        lines += [
            f'CUDACPU_EXPORT int cudacpu_launch__{k.name}(const unsigned* cfg, unsigned long long smem, void** a) {{',
            f'  return ::cudacpu::launch("{k.name}", [](void** p) {{ ::cudacpu::invoke(&::{k.name}, p); }}, cfg, smem, a,',
            f"                           {_max_threads(k)});",
            "}",
            f"CUDACPU_EXPORT unsigned cudacpu_max_threads__{k.name}() {{ return {_max_threads(k)}; }}",
            f"CUDACPU_EXPORT const char* cudacpu_signature__{k.name}() {{ return ::cudacpu::signature(&::{k.name}); }}",
        ]
    return "\n".join(lines) + "\n"
