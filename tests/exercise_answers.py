"""Reading exercise answers out of a chapter, so that a test can run them.

Convention (README, "Berkontribusi"): inside a ``{solution}`` block, every
```` ```python ```` fence is code a reader may paste after the chapter's cells.
It must run there. When the answer's text quotes what the code prints, the
fence ends with the expected output as comments::

    print(np.array_equal(S, S.T))
    # Keluaran:
    # True

Fences in other languages (``cuda``, ``text``) are shown, not run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

_OPEN = re.compile(r"^(`{3,}|:{3,})\{solution\}\s*(\S*)")
_FENCE = re.compile(r"^(`{3,})\s*python\s*$")
_EXPECT = "# Keluaran:"


@dataclass
class Answer:
    label: str  # the exercise the solution answers
    code: str
    expected: list[str] | None  # expected stdout lines, or None when not stated


def _expected(code: str) -> tuple[str, list[str] | None]:
    lines = code.rstrip().splitlines()
    for n, line in enumerate(lines):
        if line.strip() == _EXPECT:
            tail = [l.strip() for l in lines[n + 1 :]]
            if not all(l.startswith("#") for l in tail):
                raise ValueError(f"Setelah '{_EXPECT}' hanya boleh baris komentar:\n{code}")
            return "\n".join(lines[:n]), [l[1:].strip() for l in tail]
    return code, None


def answers(path: Path) -> list[Answer]:
    """Every runnable ``python`` fence inside the chapter's solutions, in order."""
    found: list[Answer] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    n = 0
    while n < len(lines):
        opened = _OPEN.match(lines[n])
        if not opened:
            n += 1
            continue
        closer, label = opened.group(1), opened.group(2)
        n += 1
        while n < len(lines) and lines[n].strip() != closer:
            fence = _FENCE.match(lines[n].strip())
            if fence:
                body = []
                n += 1
                while n < len(lines) and lines[n].strip() != fence.group(1):
                    body.append(lines[n])
                    n += 1
                code, expected = _expected("\n".join(body))
                found.append(Answer(label, code, expected))
            n += 1
        n += 1
    return found


def printed(cell) -> list[str]:
    """What a executed cell printed to stdout, as stripped lines."""
    text = "".join(
        o.get("text", "")
        for o in cell.get("outputs", [])
        if o.get("output_type") == "stream" and o.get("name") == "stdout"
    )
    return [line.strip() for line in text.strip().splitlines()]
