"""The cudacpu build cache cannot be squatted, its key is unambiguous,
and a killed compile leaves nothing behind.

The tests cannot change uid: a foreign owner is simulated by replacing
``build._owner_ok``, everything else with real file modes.
"""

import os
import stat
import tempfile
import time
import warnings

import numpy as np
import pytest

from atensi.cudacpu import CudaCpuError, RawModule, build, module

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
    module._libs.pop(lib, None)
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
    module._libs.pop(lib, None)
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
    assert all(name.endswith(".so") for name in left), left  # no .cpp, .su or .tmp kept


def test_warning_is_given_once_per_process(cache):
    cache.mkdir(parents=True)
    os.chmod(cache, 0o777)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        first, second = build.cache_dir(), build.cache_dir()
    assert first == second
    assert len([w for w in seen if issubclass(w.category, RuntimeWarning)]) == 1
