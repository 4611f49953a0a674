"""Turn a .cu text into a C++ translation unit for g++.

Three jobs, all keeping the .cu line numbers (so g++ and the sanitizers
point at the .cu line through ``#line``):

* find the ``__global__`` kernels and their parameter names;
* rewrite ``extern __shared__ T s[];`` (not valid C++) into a pointer at the
  header's dynamic shared-memory buffer, and ``static __shared__`` into
  ``__shared__`` (the header already makes it ``static``);
* append one trampoline per kernel that takes ``void** args`` the way
  ``cuLaunchKernel`` does, plus a function that reports the parameter types.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import CudaCpuError

TRAMPOLINE_FILE = "<cudacpu-trampolin>"


@dataclass(frozen=True)
class KernelDecl:
    name: str
    param_names: tuple[str, ...]
    extern_c: bool
    line: int


def _blank(text: str, pattern: re.Pattern) -> str:
    """Replace every match by spaces, keeping newlines (so offsets stay)."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRINGS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
_PREPROC = re.compile(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", re.M)

_KERNEL = re.compile(
    r"\b__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+"
    r"(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\("
)
_EXTERN_C_BLOCK = re.compile(r'\bextern\s+"C"\s*\{')
_EXTERN_C_DECL = re.compile(r'\bextern\s+"C"(?:\s+\w+)*$')
_ATTR = r"(?:__shared__|volatile|__align__\s*\(\s*\w+\s*\)|alignas\s*\(\s*\w+\s*\))"
_EXTERN_SHARED = re.compile(
    r"\bextern\s+((?:" + _ATTR + r"\s+)+)([A-Za-z_][\w\s:<>,*]*?)\s*\b([A-Za-z_]\w*)\s*\[\s*\]\s*;"
)
_STATIC_SHARED = re.compile(r"\bstatic(?=\s+__shared__\b)")


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
        decl = KernelDecl(name, _param_names(params), extern_c, code.count("\n", 0, m.start()) + 1)
        if name not in kernels or (params.strip() and not kernels[name].param_names):
            kernels[name] = decl
    return kernels


def _rewrite_extern_shared(code: str, plain: str) -> str:
    out, last = [], 0
    for m in _EXTERN_SHARED.finditer(plain):
        if "__shared__" not in m.group(1):
            continue
        volatile = "volatile " if "volatile" in m.group(1) else ""
        ctype = volatile + " ".join(m.group(2).split())
        name = m.group(3)
        repl = f"{ctype}* const {name} = reinterpret_cast<{ctype}*>(::cudacpu::g_dyn_smem);"
        repl += "\n" * m.group(0).count("\n")  # keep the following line numbers
        out.append(code[last:m.start()])
        out.append(repl)
        last = m.end()
    out.append(code[last:])
    return "".join(out)


def _display_name(path: str) -> str:
    return path.replace("\\", "/").replace('"', "'")


def translation_unit(code: str, path: str, kernels: dict[str, KernelDecl]) -> str:
    """The C++ text that g++ compiles for ``code``."""
    if "\0" in code:
        raise CudaCpuError(f"Kode sumber {path} berisi karakter NUL.")
    plain = _blank(_blank(code, _COMMENTS), _STRINGS)
    body = _rewrite_extern_shared(code, plain)
    body = _STATIC_SHARED.sub(lambda m: " " * len(m.group(0)), body)
    lines = ['#include "cuda_cpu.h"', f'#line 1 "{_display_name(path)}"', body.rstrip("\n"), "",
             f'#line 1 "{TRAMPOLINE_FILE}"']
    for k in kernels.values():
        lines += [
            f'CUDACPU_EXPORT int cudacpu_launch__{k.name}(const unsigned* cfg, unsigned long long smem, void** a) {{',
            f'  return ::cudacpu::launch("{k.name}", [](void** p) {{ ::cudacpu::invoke(&::{k.name}, p); }}, cfg, smem, a);',
            "}",
            f"CUDACPU_EXPORT const char* cudacpu_signature__{k.name}() {{ return ::cudacpu::signature(&::{k.name}); }}",
        ]
    return "\n".join(lines) + "\n"
