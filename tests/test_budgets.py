"""The per-file CPU budget of the test suite: what it counts and what it names."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import budgets

BURN = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end:\n    pass\n"


def test_a_live_child_and_a_reaped_child_are_both_counted():
    start = budgets.process_tree_cpu()
    child = subprocess.Popen(
        [sys.executable, "-c", BURN + "print('selesai', flush=True)\ntime.sleep(30)\n"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "selesai"  # burnt 0,3 s, now asleep
        live = budgets._live_descendants_cpu(budgets.os.getpid())
        assert live >= 0.25, live
    finally:
        child.kill()
        child.wait()
    subprocess.run([sys.executable, "-c", BURN], check=True)
    assert budgets.process_tree_cpu() - start >= 0.5


def test_shared_work_is_counted_under_its_own_line():
    budgets._shared.clear()
    with budgets.shared_work("buku dibangun"):
        subprocess.run([sys.executable, "-c", BURN], check=True)
        with budgets.shared_work("bab dijalankan"):  # inside: already counted once
            pass
    assert budgets._shared["buku dibangun"] >= 0.25
    assert "bab dijalankan" not in budgets._shared
    budgets._shared.clear()


def test_over_budget_warns_and_over_twice_fails(monkeypatch):
    monkeypatch.setattr(budgets, "BUDGETS", {"tests/a.py": 10.0, "tests/b.py": 10.0, "tests/c.py": 10.0})
    warned, failed = budgets.over_budget({"tests/a.py": 9.0, "tests/b.py": 15.0, "tests/c.py": 25.0})
    assert warned == ["tests/c.py", "tests/b.py"]
    assert failed == ["tests/c.py"]
    unlisted = {"tests/baru.py": budgets.FAIL_FACTOR * budgets.DEFAULT_BUDGET + 1}
    assert budgets.over_budget(unlisted) == (["tests/baru.py"], ["tests/baru.py"])


def test_every_budget_names_a_test_file_or_a_shared_line():
    root = Path(__file__).resolve().parents[1]
    stale = [name for name in budgets.BUDGETS
             if name not in (budgets.SHARED_CHAPTERS, budgets.SHARED_BUILD)
             and not (root / name).is_file()]
    assert stale == []


def test_a_gpu_run_reports_but_does_not_enforce_the_cpu_budgets():
    """Under ATENSI_REQUIRE_GPU=1 a file far over its budget does not fail the run."""
    root = Path(__file__).resolve().parents[1]
    code = ("import budgets, pytest\n"
            "budgets._totals['tests/test_kernels_gpu.py'] = 10 * budgets.DEFAULT_BUDGET\n"
            "class S:\n"
            "    class config: pass\n"
            "    exitstatus = pytest.ExitCode.OK\n"
            "budgets.pytest_sessionfinish(S, pytest.ExitCode.OK)\n"
            "print(int(S.exitstatus))\n")
    env = {"PYTHONPATH": str(root / "tests"), "PATH": "/usr/bin:/bin"}
    def status(**extra):
        out = subprocess.run([sys.executable, "-c", code], env={**env, **extra},
                             capture_output=True, text=True, check=True).stdout
        return int(out.strip().splitlines()[-1])
    assert status() == 1  # a CPU run fails on it
    assert status(ATENSI_REQUIRE_GPU="1") == 0
