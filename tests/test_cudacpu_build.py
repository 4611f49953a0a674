"""The cudacpu build cache cannot be squatted, its key is unambiguous,
and a killed compile leaves nothing behind.

The tests cannot change uid: a foreign owner is simulated by replacing
``build._owner_ok``, everything else with real file modes.
"""

import json
import os
import stat
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import pytest

from atensi.cudacpu import CudaCpuError, RawModule, build, module, resources

CODE = 'extern "C" __global__ void one(float* x) { x[threadIdx.x] = VALUE; }'


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache under tmp_path; the process-wide private fallback is reset."""
    monkeypatch.setenv("ATENSI_CACHE", str(tmp_path / "c"))
    monkeypatch.setattr(build, "_private_dir", None, raising=False)
    return tmp_path / "c" / "cudacpu"


def _mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_new_cache_folder_is_private(cache):
    assert build.cache_dir() == cache
    assert _mode(cache) & 0o077 == 0


def _assert_private_fallback(used, planted):
    assert used != planted
    assert used.name.startswith("atensi-cudacpu-") and used.name != f"atensi-cudacpu-{os.getuid()}"
    assert _mode(used) == 0o700 and build._trusted_dir(used) is None


def test_foreign_owned_folder_is_not_used(cache, monkeypatch):
    cache.mkdir(parents=True, mode=0o700)
    real = build._owner_ok
    monkeypatch.setattr(build, "_owner_ok",
                        lambda st: real(st) and not (st.st_ino == os.stat(cache).st_ino))
    with pytest.warns(RuntimeWarning, match="pengguna lain"):
        used = build.cache_dir()
    _assert_private_fallback(used, cache)


def test_world_writable_folder_is_not_used(cache):
    cache.mkdir(parents=True)
    os.chmod(cache, 0o777)
    with pytest.warns(RuntimeWarning, match="ditulisi"):
        used = build.cache_dir()
    _assert_private_fallback(used, cache)


def test_symlinked_folder_is_not_used(cache, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    cache.parent.mkdir(parents=True)
    cache.symlink_to(elsewhere)
    with pytest.warns(RuntimeWarning, match="symlink"):
        used = build.cache_dir()
    _assert_private_fallback(used, cache)


def test_unwritable_cache_never_uses_a_fixed_shared_name(tmp_path, monkeypatch):
    blocked = tmp_path / "a-file"  # cannot hold a folder (unlike a chmod, also as root)
    blocked.write_text("")
    monkeypatch.setenv("ATENSI_CACHE", str(blocked / "x"))
    monkeypatch.setattr(build, "_private_dir", None, raising=False)
    with pytest.warns(RuntimeWarning, match="tidak bisa ditulisi"):
        used = build.cache_dir()
    assert used != os.path.join(tempfile.gettempdir(), f"atensi-cudacpu-{os.getuid()}")
    _assert_private_fallback(used, blocked)


@pytest.mark.slow
def test_planted_world_writable_library_is_not_loaded(cache):
    """A file under the predictable name is never dlopen'ed unless it is ours and private."""
    first = RawModule(CODE, path="one.cu", options=("-DVALUE=1.0f",))
    lib = first.library_path
    assert lib.parent == cache
    planted = cache / "planted.so"
    planted.write_bytes(b"not an ELF file: dlopen would fail loudly")
    os.chmod(planted, 0o666)
    # The planted file takes the cached library's place (its name is public).
    build.forget_library(lib)
    os.replace(planted, lib)
    with pytest.warns(RuntimeWarning, match="ditulisi"):
        again = RawModule(CODE, path="one.cu", options=("-DVALUE=1.0f",))
    assert again.library_path != lib  # rebuilt in a private folder, the planted file untouched
    x = np.zeros(2, np.float32)
    again.get_function("one")((1,), (2,), (x,))
    assert (x == 1).all()
    with pytest.raises(CudaCpuError, match="tidak aman"):
        module._load(lib)


@pytest.mark.slow
def test_library_owned_by_someone_else_is_refused(cache, monkeypatch):
    lib = RawModule(CODE, path="one.cu", options=("-DVALUE=2.0f",)).library_path
    build.forget_library(lib)
    real = build._owner_ok
    monkeypatch.setattr(build, "_owner_ok",
                        lambda st: real(st) and st.st_ino != os.stat(lib).st_ino)
    assert "pengguna lain" in build.trusted_library(lib)
    with pytest.raises(CudaCpuError, match="tidak aman"):
        module._load(lib)


def test_cache_key_separates_flags_unambiguously():
    tu, cxx = "int x;", build.compiler()
    assert build.cache_key(tu, ("-DX=5 -DY=7",), cxx) != build.cache_key(tu, ("-DX=5", "-DY=7"), cxx)
    assert build.cache_key(tu, ("-DA", "B"), cxx) != build.cache_key(tu, ("-DA B",), cxx)


@pytest.mark.slow
def test_edited_include_header_is_recompiled(cache, tmp_path):
    inc = tmp_path / "inc"
    inc.mkdir()
    header = inc / "nilai.h"
    code = ('#include "nilai.h"\n'
            'extern "C" __global__ void val(float* x) { x[threadIdx.x] = NILAI; }')
    header.write_text("#define NILAI 3.0f\n")
    x = np.zeros(2, np.float32)
    RawModule(code, path="val.cu", options=(f"-I{inc}",)).get_function("val")((1,), (2,), (x,))
    assert (x == 3).all()
    header.write_text("#define NILAI 4.0f\n")
    mod = RawModule(code, path="val.cu", options=(f"-I{inc}",))
    assert mod.compiled, "header berubah, tetapi pustaka lama dipakai"
    mod.get_function("val")((1,), (2,), (x,))
    assert (x == 4).all()


@pytest.mark.slow
def test_leftovers_of_a_killed_compile_are_removed(cache):
    cache.mkdir(parents=True, mode=0o700)
    old = cache / "one-abc.so.x1.tmp"
    old_cpp = cache / "one-abc.x2.cpp"
    fresh = cache / "one-def.so.x3.tmp"  # another process may be compiling right now
    for f in (old, old_cpp, fresh):
        f.write_text("")
    hour_ago = time.time() - 2 * build.STALE_TMP_SECONDS
    os.utime(old, (hour_ago, hour_ago))
    os.utime(old_cpp, (hour_ago, hour_ago))
    build.cache_dir()
    assert not old.exists() and not old_cpp.exists() and fresh.exists()
    RawModule(CODE, path="one.cu", options=("-DVALUE=5.0f",))
    left = sorted(p.name for p in cache.iterdir() if p != fresh)
    # no .cpp, .su, .tmp; .lock is the one lock file of the whole cache
    assert all(name.endswith((".so", ".so.sha256")) or name == ".lock" for name in left), left


def test_warning_is_given_once_per_process(cache):
    cache.mkdir(parents=True)
    os.chmod(cache, 0o777)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        first, second = build.cache_dir(), build.cache_dir()
    assert first == second
    assert len([w for w in seen if issubclass(w.category, RuntimeWarning)]) == 1



# ---- a damaged cache heals ------------------------------------------------------------------


def test_a_compiler_that_writes_nothing_is_an_error_not_a_cache_entry(cache, tmp_path, monkeypatch):
    fake = tmp_path / "g++-palsu"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.setenv("ATENSI_CXX", str(fake))
    with pytest.raises(CudaCpuError, match="tidak menulis pustaka.*kosong.*ATENSI_CXX"):
        RawModule(CODE, path="one.cu", options=("-DVALUE=7.0f",))
    assert not list(cache.glob("*.so"))


@pytest.mark.slow
def test_a_damaged_library_in_the_cache_is_compiled_again(cache):
    lib, compiled, _ = module.build_library(CODE, path="one.cu", options=("-DVALUE=3.0f",))
    assert compiled and (lib.parent / (lib.name + ".sha256")).is_file()  # never loaded here
    data = bytearray(lib.read_bytes())
    data[len(data) // 2:] = bytes(len(data) - len(data) // 2)  # the second half lost
    lib.write_bytes(bytes(data))
    again = RawModule(CODE, path="one.cu", options=("-DVALUE=3.0f",))
    assert again.compiled and again.library_path == lib
    x = np.zeros(2, np.float32)
    again.get_function("one")((1,), (2,), (x,))
    assert (x == 3).all()


@pytest.mark.slow
def test_a_library_that_will_not_load_is_rebuilt_once_then_refused(cache, monkeypatch):
    RawModule(CODE, path="one.cu", options=("-DVALUE=4.0f",))
    builds = []
    real = build.build
    monkeypatch.setattr(build, "build", lambda *a, **k: builds.append(1) or real(*a, **k))

    def broken(path):
        raise OSError(f"{path}: invalid ELF header")

    monkeypatch.setattr(module, "_load", broken)
    with pytest.raises(CudaCpuError, match="tidak bisa dimuat.*invalid ELF.*ATENSI_CACHE") as err:
        RawModule(CODE, path="one.cu", options=("-DVALUE=4.0f",))
    assert str(cache) in str(err.value)
    assert len(builds) == 2  # the cached one, then one fresh compile


_FALLBACK = """
import warnings
from atensi.cudacpu import build
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    print(build.cache_dir())
print(seen[0].message)
"""


def test_the_private_fallback_folder_is_removed_when_the_process_ends(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    proc = subprocess.run([sys.executable, "-c", _FALLBACK], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "ATENSI_CACHE": str(blocked / "x")})
    used, message = proc.stdout.splitlines()[:2]
    assert "atensi-cudacpu-" in used and not os.path.exists(used)
    assert "tidak bisa ditulisi" in message and "chmod" not in message  # the cause, not a guess
    assert "dihapus saat proses selesai" in message


@pytest.mark.parametrize("text", ['[1, 2]', '{"one": "ab"}', '{"one": [1]}', '{"one": [-3, 0]}',
                                  '{"one": [true, 0]}', "bukan json", ""])
def test_a_ptxas_report_of_the_wrong_shape_is_removed_and_made_again(cache, monkeypatch, text):
    class FakeNvrtc:
        @staticmethod
        def getVersion():
            return (12, 4)

    monkeypatch.setattr(resources, "_nvrtc", lambda: FakeNvrtc)
    made = []
    monkeypatch.setattr(resources, "_compile", lambda *a: made.append(1) or {
        "one": resources.KernelUse(40, 1024)})
    assert resources.kernel_uses(CODE, "one.cu") == {"one": resources.KernelUse(40, 1024)}
    [report] = cache.glob("ptxas-*.json")
    report.write_text(text)
    assert resources.kernel_uses(CODE, "one.cu") == {"one": resources.KernelUse(40, 1024)}
    assert len(made) == 2 and json.loads(report.read_text()) == {"one": [40, 1024]}
    assert resources.kernel_uses(CODE, "one.cu") == {"one": resources.KernelUse(40, 1024)}
    assert len(made) == 2  # and read from the cache again


@pytest.mark.slow
def test_threads_mode_under_a_process_limit_says_to_use_fibers(cache, monkeypatch):
    kernel = RawModule(CODE, path="one.cu", mode="threads",
                       options=("-DVALUE=6.0f",)).get_function("one")
    x = np.zeros(256, np.float32)

    def no_thread_to_spare(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(module.threading.Thread, "start", no_thread_to_spare)
    kernel((1,), (256,), (x,))  # the launch runs in the calling thread instead
    assert (x == 6).all()
    # What cuda_cpu.h reports when pthread_create fails part-way:
    failed = (3, "Gagal membuat 256 thread CPU (hanya 40 yang berhasil).")
    monkeypatch.setattr(module.RawKernel, "_run", lambda self, *a: failed)
    with pytest.raises(CudaCpuError, match='hanya 40 yang berhasil.*ulimit -u.*mode="fibers"'):
        kernel((1,), (256,), (x,))


# ---- a full disk, and several processes compiling at once ------------------------------------


def test_a_full_disk_under_the_cache_is_an_indonesian_message_and_leaves_nothing(cache, monkeypatch):
    import errno

    real = os.replace

    def full(src, dst, *a, **k):
        if str(dst).startswith(str(cache)):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(src, dst, *a, **k)

    monkeypatch.setenv("ATENSI_CACHE", str(cache.parent))
    monkeypatch.setattr(build.os, "replace", full)
    with pytest.raises(CudaCpuError) as info:
        RawModule(CODE, path="one.cu", options=("-DVALUE=9.0f",))
    msg = str(info.value)
    assert f"folder cache kompilasi {cache}" in msg and "disk penuh" in msg
    assert "ATENSI_CACHE=" in msg and "No space" not in msg
    assert sorted(p.name for p in cache.iterdir()) == [".lock"]  # no .cpp, .tmp, .so, .sha256


def test_four_processes_compiling_into_one_fresh_cache_compile_once_and_leave_one_pair(cache):
    script = ("import sys\nfrom atensi.cudacpu import RawModule\n"
              f"m = RawModule({CODE!r}, path='one.cu', options=('-DVALUE=6.0f',))\n"
              "print(int(m.compiled))\n")
    env = {**os.environ, "ATENSI_CACHE": str(cache.parent)}
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-1500:] for _, err in outs]
    assert sum(int(out) for out, _ in outs) == 1, outs  # the others waited and loaded it
    names = sorted(p.name for p in cache.iterdir())
    assert len(names) == 3 and names[0] == ".lock", names
    assert names[1].endswith(".so") and names[2] == names[1] + ".sha256"
    assert build.damage(cache / names[1]) is None
