"""CPU seconds per test file, held against a budget, so growth is seen in every run.

Each test's CPU time is measured in its worker: the worker process, the
children it has reaped (chapter kernels, compilers, the book build), and the
descendants still alive (the browser), so a cost is counted when it happens.
The work that one test does for the whole session, executing a chapter or
building the book, is counted under its own line ("bab dijalankan", "buku
dibangun") instead of the test that happened to need it first, so a file's
figure does not depend on the order in which the workers ran.

At the end of the run a file over its budget is named in a warning, and a
file over twice its budget fails the run, with a message naming it. This is
CPU time with a wide margin, not a timed assertion on wall-clock speed.

The budgets were measured where the GPU tests skip. Where they run for real
(``ATENSI_REQUIRE_GPU=1``, the GPU step of scripts/gpu_check.sh) a file's
CPU time is mostly waiting on the GPU and compiling for it, so the table is
still printed but nothing is warned about or failed.
"""

from __future__ import annotations

import contextlib
import os
import resource
from collections import defaultdict

import pytest

# CPU seconds per file (and per line of shared work): about 1.5 times the
# larger of two full runs of `make test` on 2-core machines (a quiet CI runner
# and a slower shared one). Every file not listed used under 28 s on the
# runner and under 35 s on the slower machine, and gets DEFAULT_BUDGET.
BUDGETS = {
    "tests/test_a11y.py": 650.0,  # light at two widths, dark at one
    "tests/test_book_browser.py": 290.0,
    "tests/test_kernels_cpu.py": 250.0,
    "bab dijalankan": 200.0,
    "tests/test_chapters_content.py": 200.0,
    "tests/test_cudacpu_checks.py": 190.0,
    "tests/test_lab_browser.py": 185.0,
    # The tampered-weights cases run at 360 and 1280 px (10 pages, about 26 s of them).
    "tests/test_explorers_dia.py": 120.0,
    "tests/test_explorers_browser.py": 100.0,
    # Every page at 360 px for the figures, then once more for the screen budget
    # (21 page loads, about 45 s on a loaded two-core machine).
    "tests/test_phone.py": 160.0,
    "tests/test_explorers_damaged.py": 80.0,
    "tests/test_chapter_clocks.py": 70.0,
    "tests/test_book_build.py": 70.0,
    "tests/test_fused_tensorcore.py": 70.0,
    "tests/test_book_html.py": 65.0,
    "tests/test_ci.py": 65.0,
    "tests/test_explorers.py": 55.0,
    # Every fused kernel of the registry at T = 1023 on the emulator (about 40 s).
    "tests/test_flash_attn.py": 75.0,
    # Dry runs of gpu_check.sh for an H100 and an H200, each collecting the GPU tests.
    "tests/test_gpu_script.py": 60.0,
    # NVRTC for 8 files x 5 architectures (about 60 s with an empty cache), the
    # chapters' kernel calls under 5 modelled GPUs (15 s), and three chapters
    # run whole under sm_61 and sm_86 (60 s).
    "tests/test_arch_matrix.py": 180.0,
    # Four profile builds of one fused kernel each (about 35 s apiece with an empty cache).
    "tests/test_explorers_bank.py": 150.0,
}
DEFAULT_BUDGET = 45.0
FAIL_FACTOR = 2.0
SHARED_CHAPTERS = "bab dijalankan"
SHARED_BUILD = "buku dibangun"
_PROPERTY = "atensi_cpu"
_TICK = os.sysconf("SC_CLK_TCK")


def _read(path: str) -> str:
    # Plain os calls: tests monkeypatch Path.read_text and open() while these hooks run.
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 1 << 16).decode("ascii", "replace")
    finally:
        os.close(fd)


def _children(pid: int) -> list[int]:
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            found += [int(child) for child in _read(f"/proc/{pid}/task/{task}/children").split()]
        except OSError:
            continue
    return found


def _live_descendants_cpu(pid: int) -> float:
    total = 0.0
    stack = _children(pid)
    while stack:
        child = stack.pop()
        try:
            fields = _read(f"/proc/{child}/stat").rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # utime, stime, cutime, cstime: fields 14-17 of proc(5), 12-15 after the name
        total += sum(int(value) for value in fields[11:15]) / _TICK
        stack += _children(child)
    return total


def process_tree_cpu() -> float:
    """CPU seconds used so far by this process, its reaped children and its live descendants."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime
            + _live_descendants_cpu(os.getpid()))


_shared: dict[str, float] = defaultdict(float)  # this worker's shared work, not yet reported
_shared_depth = 0


@contextlib.contextmanager
def shared_work(line: str):
    """Count the CPU time of the block under ``line`` instead of the test running it."""
    global _shared_depth
    if _shared_depth:  # already counted by the enclosing block
        yield
        return
    _shared_depth += 1
    start = process_tree_cpu()
    try:
        yield
    finally:
        _shared_depth -= 1
        _shared[line] += process_tree_cpu() - start


def budget(name: str) -> float:
    return BUDGETS.get(name, DEFAULT_BUDGET)


def enforced() -> bool:
    """False on a GPU run (ATENSI_REQUIRE_GPU=1): the CPU budgets do not describe it."""
    return os.environ.get("ATENSI_REQUIRE_GPU") != "1"


# --- hooks (imported into conftest.py) ----------------------------------------

_mark: dict[str, float] = {}  # test id -> CPU seconds at the end of its last phase


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _mark[item.nodeid] = process_tree_cpu()  # before any fixture is set up


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    now = process_tree_cpu()
    spent = now - _mark.pop(item.nodeid, now)
    if call.when != "teardown":
        _mark[item.nodeid] = now
    shared = dict(_shared)
    _shared.clear()
    lines = [(item.nodeid.split("::")[0], max(spent - sum(shared.values()), 0.0)), *shared.items()]
    report.user_properties.append((_PROPERTY, lines))


_totals: dict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report):
    for key, lines in report.user_properties:
        if key == _PROPERTY:
            for name, seconds in lines:
                _totals[name] += seconds


def over_budget(totals: dict[str, float]) -> tuple[list[str], list[str]]:
    """(names over their budget, names over FAIL_FACTOR times it), largest first."""
    order = sorted(totals, key=totals.get, reverse=True)
    warned = [name for name in order if totals[name] > budget(name)]
    failed = [name for name in warned if totals[name] > FAIL_FACTOR * budget(name)]
    return warned, failed


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    if _is_worker(session.config) or not _totals or not enforced():
        return
    _, failed = over_budget(_totals)
    if failed and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _is_worker(config) or not _totals:
        return
    write = terminalreporter.write_line
    warned, failed = over_budget(_totals)
    terminalreporter.section("waktu CPU per berkas tes (tests/budgets.py)")
    for name in sorted(_totals, key=_totals.get, reverse=True)[:15]:
        write(f"{_totals[name]:8.1f} s CPU  (anggaran {budget(name):6.1f} s)  {name}")
    write(f"{sum(_totals.values()):8.1f} s CPU  semuanya")
    if not enforced():
        write("ATENSI_REQUIRE_GPU=1: tes GPU berjalan sungguhan, jadi anggaran CPU (diukur "
              "saat tes GPU dilewati) tidak dipakai untuk memperingatkan atau menggagalkan.")
        return
    for name in warned:
        if name not in failed:
            write(f"PERINGATAN: {name} memakai {_totals[name]:.1f} s CPU, di atas anggarannya "
                  f"{budget(name):.1f} s (tests/budgets.py).")
    for name in failed:
        write(f"GAGAL: {name} memakai {_totals[name]:.1f} s CPU, lebih dari {FAIL_FACTOR:g} × "
              f"anggarannya {budget(name):.1f} s. Pangkas tesnya, atau naikkan anggarannya di "
              "tests/budgets.py dengan alasannya.", red=True)
