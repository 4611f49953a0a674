"""memory.available_memory: the smallest of the machine, RLIMIT_AS and cgroup limits."""

import subprocess
import sys
import textwrap

import pytest

from atensi import memory


def test_address_space_limit_is_respected():
    """Under ulimit -v 4 GiB, a 6,7 GiB attention is refused in Indonesian before any
    work (it ran 71 s, then NumPy's English MemoryError)."""
    code = textwrap.dedent("""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, resource.RLIM_INFINITY))
        import numpy as np
        from atensi import kernels, memory
        print(memory.available_memory() / 2**30)
        try:
            kernels.attention(*(np.zeros((30000, 64), np.float32),) * 3, backend="cpu")
        except MemoryError as err:
            print("DITOLAK", err)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    free, line = proc.stdout.splitlines()[:2]
    assert float(free) < 4
    assert line.startswith("DITOLAK") and "butuh sekitar" in line and "impl='fused-v1'" in line


def _fake_cgroup(tmp_path, monkeypatch, files):
    proc = tmp_path / "proc" / "self"
    proc.mkdir(parents=True)
    (proc / "cgroup").write_text("0::/kotak/tugas\n")
    (tmp_path / "proc" / "meminfo").write_text("MemAvailable:   67108864 kB\n")  # 64 GiB
    root = tmp_path / "cgroup"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    monkeypatch.setattr(memory, "PROC_SELF", proc)
    monkeypatch.setattr(memory, "CGROUP_ROOT", root)


def test_cgroup_v2_limit_counts_the_parents_and_the_reclaimable_cache(tmp_path, monkeypatch):
    gib = 2**30
    _fake_cgroup(tmp_path, monkeypatch, {
        "kotak/tugas/memory.max": "max\n",
        "kotak/tugas/memory.current": f"{3 * gib}\n",
        "kotak/memory.max": f"{4 * gib}\n",
        "kotak/memory.current": f"{3 * gib}\n",
        "kotak/memory.stat": f"anon 1\ninactive_file {gib // 2}\n",
    })
    assert memory.available_memory() == pytest.approx(1.5 * gib)
    with pytest.raises(MemoryError, match="butuh sekitar 2 GiB.*tersedia sekitar 1,5 GiB"):
        memory.check_output_bytes(2.0 * gib, "Uji", "Kecilkan T.")


def test_cgroup_v1_limit(tmp_path, monkeypatch):
    gib = 2**30
    _fake_cgroup(tmp_path, monkeypatch, {
        "memory/memory.limit_in_bytes": f"{2 * gib}\n",
        "memory/memory.usage_in_bytes": f"{gib}\n",
    })
    assert memory.available_memory() == pytest.approx(gib)


def test_no_limit_means_the_machine(tmp_path, monkeypatch):
    _fake_cgroup(tmp_path, monkeypatch, {
        "memory/memory.limit_in_bytes": "9223372036854771712\n",
        "memory/memory.usage_in_bytes": "1000\n",
        "kotak/tugas/memory.max": "max\n",
        "kotak/tugas/memory.current": "1000\n",
    })
    assert memory.available_memory() == 64 * 2**30
