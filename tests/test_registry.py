"""atensi.kernels.registry: one entry per __global__, and the .cu files agree with it.

This is the one place that reads the ``#ifndef`` defaults of the .cu files: the
value compiled is the registry's (passed as -D), and the default must be the
same so that a .cu compiled on its own tells the truth.
"""

import dataclasses
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import _kernel_cases as kc
from atensi import kernels
from atensi.cudacpu import source
from atensi.kernels import cli, loading, registry

_DEFAULT = re.compile(r"^#ifndef (\w+)\n#define \1 (\S+)[^\n]*\n#endif", re.MULTILINE)


def _text(file):
    return kernels.kernel_path(file).read_text(encoding="utf-8")


def test_every_kernel_file_is_in_the_registry():
    assert sorted(registry.files()) == sorted(p.name for p in kernels.kernels_dir().glob("*.cu"))
    assert set(registry.CONSTANTS) == set(registry.files())


@pytest.mark.parametrize("file", registry.files())
def test_one_entry_per_global(file):
    """The emulator's parser finds the same __global__ functions as the registry lists."""
    found = list(source.find_kernels(_text(file)))
    listed = [k.name for k in registry.kernels_in(file)]
    assert sorted(found) == sorted(listed)
    assert len(set(listed)) == len(listed)


@pytest.mark.parametrize("file", registry.files())
def test_ifndef_defaults_equal_the_registry(file):
    text = _text(file)
    defaults = {name: value for name, value in _DEFAULT.findall(text)}
    for name, value in registry.CONSTANTS[file].items():
        assert name in defaults, f"{file}: {name} harus berbentuk #ifndef/#define/#endif"
        assert defaults[name] == str(value), (file, name, defaults[name], value)
        # Only the guarded form: no second, unguarded #define of the same name.
        assert len(re.findall(rf"^#define {name}\b", text, re.MULTILINE)) == 1, (file, name)


@pytest.mark.parametrize("file", registry.files())
def test_dynamic_shared_memory_is_asked_for_exactly_where_a_kernel_declares_it(file):
    """A kernel whose body declares ``extern __shared__`` gets no bytes at all
    unless its launch asks for them, and the CPU emulator cannot see that
    (it always hands out a full buffer): the registry entry must carry the size.
    A kernel with only static shared memory asks for none."""
    text = _text(file)
    for k in registry.kernels_in(file):
        body = re.search(rf"\b{k.name}\([^)]*\)\s*\{{(.*?)^\}}", text, re.S | re.M)
        assert body, k.name
        declares = "extern __shared__" in body.group(1)
        assert (k.dynamic_shared > 0) == declares, (k.name, k.dynamic_shared)


def test_defines_are_the_constants():
    assert registry.defines("scores.cu") == ("-DSCORES_TILE=16",)
    assert registry.defines("rope.cu") == ()
    assert registry.defines("not_in_registry.cu") == ()
    fused = registry.defines("attention_fused.cu")
    assert "-DFV2_BQ=64" in fused and "-DFUSED_THREADS=128" in fused


def test_get_function_compiles_with_the_registry_defines(monkeypatch):
    """Both backends receive the file's -D options (here the emulator's RawModule)."""
    from atensi import cudacpu

    seen = []

    class Module:
        def __init__(self, code, path, options=()):
            seen.append((path, tuple(options)))

        def get_function(self, name):
            return name

    monkeypatch.setattr(cudacpu, "RawModule", Module)
    monkeypatch.delenv("ATENSI_ARCH", raising=False)
    monkeypatch.setattr(loading, "_modules", {})
    monkeypatch.setattr(loading, "_functions", {})
    assert loading.get_function("weighted_sum.cu", "weighted_sum_v2_tiled", "cpu") == \
        "weighted_sum_v2_tiled"
    # ... and the emulator the architecture it models (ATENSI_ARCH, default sm_90).
    assert seen == [("kernels/weighted_sum.cu", registry.defines("weighted_sum.cu") + ("-arch=sm_90",))]
    assert "-DWS_THREADS=256" in seen[0][1]


def test_a_define_changes_what_the_kernel_computes():
    """-D really overrides the #ifndef default: scores v2 with a smaller tile
    (block shape to match) still matches NumPy."""
    from atensi import cudacpu

    if "cpu" not in kernels.available_backends():
        pytest.skip("butuh g++")
    rng = np.random.default_rng(3)
    T, d_k = 13, 5
    Q, K = (rng.standard_normal((T, d_k)).astype(np.float32) for _ in range(2))
    want = (Q.astype(np.float64) @ K.T.astype(np.float64)).astype(np.float32)
    module = cudacpu.RawModule(_text("scores.cu"), path="kernels/scores.cu",
                               options=("-DSCORES_TILE=8",))
    S = np.zeros((T, T), np.float32)
    args = (Q, K, S, np.int32(1), np.int32(T), np.int32(d_k), np.float32(1.0))
    module.get_function("scores_v2_tiled")((2, 2, 1), (8, 8, 1), args)
    np.testing.assert_allclose(S, want, rtol=1e-5, atol=1e-5)


def test_entries_hold_their_facts():
    assert registry.get("scores_v2_tiled").block == (16, 16, 1)
    assert registry.get("weighted_sum_v1").block == (32, 8, 1)
    fused = registry.get("attention_fused_d128")
    assert (fused.width, fused.rows, fused.threads, fused.max_d_k) == (128, 32, 128, 128)
    assert registry.variant("attention_fused_v2", 65).name == "attention_fused_v2_d128"
    assert registry.variant("attention_tensorcore_split_tf32", 1).name == \
        "attention_tensorcore_split_tf32_d32"
    assert registry.get("attention_fused_d64").constants is registry.CONSTANTS["attention_fused.cu"]


def test_unknown_kernel_is_named_in_indonesian():
    with pytest.raises(KeyError, match=r"Kernel 'softmax_v9' tidak ada di registri.*softmax_v2_warp"):
        registry.get("softmax_v9")


def test_list_command(capsys):
    assert cli.main(["--daftar"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(registry.KERNELS)
    assert lines[0].split()[:2] == ["rope.cu", "rope_v1"]
    assert any("attention_fused_v2_d128" in ln and "106496 byte shared dinamis" in ln for ln in lines)


def test_public_names_only():
    """atensi.kernels exports public names; every one of them exists."""
    assert all(not name.startswith("_") for name in kernels.__all__)
    assert all(hasattr(kernels, name) for name in kernels.__all__)
    public = {n for n in vars(kernels) if not n.startswith("_")}
    submodules = {"api", "arrays", "backward", "cli", "compiling", "launch", "limits", "loading",
                  "registry", "sass", "profil", "annotations"}
    assert public - submodules == set(kernels.__all__) - {"registry"}
    # The chains, then one fused impl per fused version of the registry; at least these.
    assert kernels.IMPLS == tuple(kernels.launch.CHAINS) + tuple(
        f"fused-{version}" for version in registry.versions("fused"))
    assert set(kernels.IMPLS) >= {"chain-v1", "chain-v2", "chain-v3", "fused-v1", "fused-v2",
                                  "fused-v3"}


def test_each_step_version_has_one_kernel_per_width_and_variant():
    stepped = [k for k in registry.KERNELS if k.step]
    assert all(k.version for k in stepped)
    assert all(k.step or not (k.version or k.causal) for k in registry.KERNELS)
    keys = [(k.step, k.version, k.causal, k.split, k.width, k.precision) for k in stepped]
    assert len(set(keys)) == len(keys)
    for k in stepped:
        if k.causal or k.split:  # a causal variant or a split pass always has its plain kernel
            assert registry.for_step(k.step, k.version, d_k=k.width, precision=k.precision)
        # A split pass names the kernel that combines its partials, which no version runs alone.
        assert bool(k.split) == bool(k.combine)
        assert not k.combine or registry.get(k.combine).step is None
    assert {k.step for k in stepped} >= {"rope", "scores", "causal_mask", "softmax",
                                         "weighted_sum", "fused"}


def _starts_with(versions, first):
    """The book's versions come first, in book order; a new version may follow."""
    return versions[:len(first)] == first


def test_launchers_find_their_kernel_by_step_and_version():
    assert _starts_with(registry.versions("softmax"), ("v1", "v2"))
    assert _starts_with(registry.versions("fused"), ("v1", "v2", "v3"))
    assert "v2" in registry.versions("softmax", causal=True)
    assert "v1" not in registry.versions("scores", causal=True)
    assert registry.for_step("softmax", "v2", causal=True).name == "softmax_v2_warp_causal"
    assert registry.for_step("scores", "v1", causal=True) is None
    with pytest.raises(ValueError, match=r"Argumen 'version' harus salah satu dari 'v1', 'v2'"):
        registry.for_step("weighted_sum", "bukan-versi")
    assert registry.for_step("fused", "v2", d_k=65).name == "attention_fused_v2_d128"
    assert registry.for_step("fused", "v3", d_k=3, precision="tf32").name == \
        "attention_tensorcore_tf32_d32"
    assert registry.get("attention_tensorcore_tf32_d32").family == "attention_tensorcore_tf32"
    assert kernels.launch.FUSED == {f"fused-{v}": v for v in registry.versions("fused")}
    assert kernels.launch.FUSED.items() >= {"fused-v1": "v1", "fused-v2": "v2",
                                            "fused-v3": "v3"}.items()


def _add_entries(monkeypatch, *extra):
    """The registry with ``extra`` entries, as if they were written in ``_entries()``."""
    entries = registry._entries
    monkeypatch.setattr(registry, "_entries", lambda: entries() + extra)
    monkeypatch.setattr(registry, "KERNELS", registry.KERNELS + extra)
    monkeypatch.setattr(registry, "_BY_NAME", {**registry._BY_NAME, **{k.name: k for k in extra}})


def test_a_new_registry_entry_is_a_new_version_of_its_step(monkeypatch):
    """One Kernel(...) entry makes softmax(version=<new>) valid and launch that kernel."""
    new = kc.unknown_version("softmax")
    extra = registry.Kernel("softmax.cu", f"softmax_{new}_example", (128, 1, 1),
                            step="softmax", version=new)
    _add_entries(monkeypatch, extra)
    launched = []

    def spy(file, name, backend):
        return lambda grid, block, args, shared_mem=0: launched.append((file, name, block))

    monkeypatch.setattr(loading, "get_function", spy)
    S = np.zeros((2, 300), np.float32)
    kernels.softmax(S, version=new, backend="cpu")
    assert launched == [("softmax.cu", f"softmax_{new}_example", (128, 1, 1))]
    with pytest.raises(ValueError, match=r"causal=True\) hanya ada untuk version='v2'"):
        kernels.softmax(np.zeros((3, 3), np.float32), version=new, causal=True, backend="cpu")


def test_a_new_version_needs_only_its_kernel_and_one_registry_entry(monkeypatch, tmp_path):
    """The recipe in CONTRIBUTING.md, done for real in a copy of kernels/: softmax.cu
    gets a copy of softmax_v2_warp under a new name, the registry one Kernel(...)
    entry, and nothing else is edited. The version is then accepted by
    kernels.softmax, runs on the CPU emulator against float64, is launched by
    name, is in the versions every test parametrizes over, and the registry's own
    checks of the .cu files still hold."""
    if "cpu" not in kernels.available_backends():
        pytest.skip("butuh g++")
    new = kc.unknown_version("softmax")
    name = f"softmax_{new}_copy"
    folder = tmp_path / "kernels"
    shutil.copytree(kernels.kernels_dir(), folder)
    text = (folder / "softmax.cu").read_text(encoding="utf-8")
    kernel = re.search(r'^extern "C" __global__ void softmax_v2_warp\(.*?^\}$', text, re.S | re.M)
    (folder / "softmax.cu").write_text(
        text + "\n" + kernel.group(0).replace("softmax_v2_warp(", f"{name}(", 1) + "\n",
        encoding="utf-8")
    monkeypatch.setenv("ATENSI_KERNELS_DIR", str(folder))
    monkeypatch.setattr(loading, "_modules", {})
    monkeypatch.setattr(loading, "_functions", {})
    _add_entries(monkeypatch, dataclasses.replace(registry.get("softmax_v2_warp"), name=name,
                                                  version=new))

    assert registry.versions("softmax")[-1] == new  # what the parametrizations read
    assert new not in registry.versions("softmax", causal=True)
    assert name in kc.chain_kernels()  # what the grid-loop tests expect to see launched
    launches = kc.spy_launches(monkeypatch)
    for case in (((), 1, 3), ((2, 3), 33, 3), ((), 129, 64)):
        kc.check_softmax(case, "cpu", version=new)
    kc.check_softmax_rows(3, 1025, "cpu", version=new)
    assert {launched for launched, _, _ in launches} == {name}
    with pytest.raises(ValueError, match=rf"causal=True\) hanya ada untuk version='v2'.*"
                                         rf"version={new!r}"):
        kernels.softmax(np.zeros((3, 3), np.float32), version=new, causal=True, backend="cpu")

    # The registry's checks of the files and the entries, unchanged.
    test_every_kernel_file_is_in_the_registry()
    test_one_entry_per_global("softmax.cu")
    test_ifndef_defaults_equal_the_registry("softmax.cu")
    test_the_defaults_are_accepted("softmax.cu")
    test_each_step_version_has_one_kernel_per_width_and_variant()
    test_launchers_find_their_kernel_by_step_and_version()
    test_public_names_only()


def test_fused_v2_micro_tile_is_the_array_the_cu_declares():
    """The micro-tile is an array bound in the .cu (not a -D constant): the
    registry's value must be the shape of the scores every lane declares."""
    rows, keys = registry.FV2_MICRO_TILE
    text = _text("attention_fused.cu")
    assert re.findall(r"float s\[(\d+)\]\[(\d+)\];", text) == [(str(rows), str(keys))]
    assert f"ubin mikro {rows} x {keys}" in text
    v2 = [k for k in registry.KERNELS if k.family in ("attention_fused_v2", "attention_fused_v2_split")]
    assert len(v2) == 2 * len(registry.WIDTHS)
    assert all(k.micro_tile == (rows, keys) for k in v2)


# --- constant sets: checked before any compile --------------------------------------


def _with(monkeypatch, file, **values):
    monkeypatch.setitem(registry.CONSTANTS, file, {**registry.CONSTANTS[file], **values})


@pytest.mark.parametrize("file, name, value, problem", [
    ("attention_tensorcore.cu", "TC_BQ", 32, r"4 warp x 16 baris.*TC_BQ = 64"),
    ("softmax.cu", "SOFTMAX_MAX_BLOCK", 128, r"SOFTMAX_MAX_BLOCK >= 256, block terbesar"),
    ("softmax.cu", "SOFTMAX_MAX_BLOCK", 96, r"pangkat dua dari 32 sampai 1024"),
    ("attention_backward.cu", "BACKWARD_MAX_BLOCK", 128, r"BACKWARD_MAX_BLOCK >= 256"),
    ("weighted_sum.cu", "WS_BK", 32, r"WS_BK = 16"),
    ("attention_fused.cu", "FUSED_SKEW", 2, r"FUSED_SKEW kelipatan 4"),
    ("attention_fused.cu", "FV2_BK", 64, r"FV2_BK = 32"),
    ("attention_fused.cu", "FUSED_BK", 64, r"48 KiB"),
    ("scores.cu", "SCORES_TILE", 33, r"SCORES_TILE 1\.\.32"),
])
def test_a_constant_that_breaks_a_lane_layout_is_refused(monkeypatch, file, name, value, problem):
    _with(monkeypatch, file, **{name: value})
    with pytest.raises(ValueError, match=rf"Konstanta kernels/{file} \(.*{name} = {value}.*\) tidak bisa "
                                         rf"dipakai: syaratnya .*{problem}.*Pakai nilai bawaan"):
        registry.defines(file)


def test_entries_made_from_other_constants_are_refused(monkeypatch):
    """FUSED_THREADS sets fused v1's rows per block: changed after import, the
    entries the launchers read still hold the old rows."""
    assert registry.get("attention_fused_d128").rows == registry.CONSTANTS["attention_fused.cu"]["FUSED_THREADS"] // 4
    _with(monkeypatch, "attention_fused.cu", FUSED_THREADS=256)
    with pytest.raises(ValueError, match=r"entri registri attention_fused_d32 \(block \(128, 1, 1\), 64 baris\) "
                                         r"dibuat dari konstanta lain.*Ubah CONSTANTS"):
        registry.defines("attention_fused.cu")
    _with(monkeypatch, "scores.cu", SCORES_TILE=8)  # valid in the .cu, but the blocks are 16 x 16
    with pytest.raises(ValueError, match=r"entri registri scores_v1_naive"):
        registry.defines("scores.cu")


@pytest.mark.parametrize("values, problem", [({"TC_BK": "32"}, r"TC_BK harus bilangan bulat"),
                                             ({"TC_BK": True}, r"TC_BK harus bilangan bulat"),
                                             ({"TC_WARPS": 4}, r"nama konstantanya harus")])
def test_constants_must_be_the_files_names_and_ints(monkeypatch, values, problem):
    _with(monkeypatch, "attention_tensorcore.cu", **values)
    with pytest.raises(ValueError, match=problem):
        registry.defines("attention_tensorcore.cu")


@pytest.mark.parametrize("file, values", [
    ("softmax.cu", {"SOFTMAX_MAX_BLOCK": 512}), ("softmax.cu", {"SOFTMAX_MAX_BLOCK": 256}),
    ("attention_backward.cu", {"BACKWARD_MAX_BLOCK": 256}),
    ("attention_fused.cu", {"FUSED_SKEW": 8, "FUSED_BK": 16}),
])
def test_other_constants_that_keep_the_layouts_are_accepted(monkeypatch, file, values):
    _with(monkeypatch, file, **values)
    assert set(registry.defines(file)) >= {f"-D{n}={v}" for n, v in values.items()}


@pytest.mark.parametrize("file", registry.files())
def test_the_defaults_are_accepted(file):
    registry.check_constants(file)
    assert len(registry.defines(file)) == len(registry.DEFAULTS[file])


def test_get_function_refuses_before_compiling(monkeypatch):
    from atensi import cudacpu

    def no_compile(*args, **kwargs):
        raise AssertionError("dikompilasi")

    monkeypatch.setattr(cudacpu, "RawModule", no_compile)
    monkeypatch.setattr(loading, "_modules", {})
    monkeypatch.setattr(loading, "_functions", {})
    _with(monkeypatch, "attention_tensorcore.cu", TC_BQ=32)
    with pytest.raises(ValueError, match=r"TC_BQ = 32"):
        loading.get_function("attention_tensorcore.cu", "attention_tensorcore_3xtf32_d64", "cpu")


@pytest.mark.slow
@pytest.mark.parametrize("file, define, message", [
    ("attention_tensorcore.cu", "TC_BQ=32", "TC_BQ = 64"),
    ("softmax.cu", "SOFTMAX_MAX_BLOCK=96", "SOFTMAX_MAX_BLOCK harus pangkat dua"),
    ("attention_backward.cu", "BACKWARD_MAX_BLOCK=48", "BACKWARD_MAX_BLOCK harus kelipatan 32"),
    ("weighted_sum.cu", "WS_BK=32", "WS_BK = 16"),
    ("attention_fused.cu", "FV2_BQ=32", "FV2_BQ = 64"),
    ("attention_fused.cu", "FUSED_SKEW=2", "FUSED_SKEW kelipatan 4"),
    ("scores.cu", "SCORES_TILE=64", "SCORES_TILE harus 1..32"),
])
def test_the_cu_file_refuses_the_same_constants_on_its_own(file, define, message):
    """Compiled without the registry (here by the emulator's g++), the .cu's
    static_assert stops the same values."""
    from atensi.cudacpu import CudaCpuError, RawModule

    if "cpu" not in kernels.available_backends():
        pytest.skip("butuh g++")
    options = [d for d in registry.defines(file) if not d.startswith(f"-D{define.split('=')[0]}=")]
    with pytest.raises(CudaCpuError, match=re.escape(message)):
        RawModule(_text(file), path=f"kernels/{file}", options=(*options, f"-D{define}"))


# The entries of a new fused version: fused v1's three widths under another
# name, as a contributor would write them in _entries() (``{new}`` is the version).
_NEW_FUSED_ENTRIES = '''
    for width, lanes_per_row in ((32, 2), (64, 2), (128, 4)):
        out.append(Kernel("attention_fused.cu", f"attention_fused_{new}_d{{width}}",
                          (fused["FUSED_THREADS"], 1, 1), rows=fused["FUSED_THREADS"] // lanes_per_row,
                          width=width, max_d_k=fused["FUSED_MAX_DK"], model=_fused,
                          step="fused", version="{new}", key_tile=fused["FUSED_BK"],
                          emulated_speed=2.0))
'''


@pytest.mark.slow
def test_a_new_fused_version_needs_only_its_kernel_and_one_registry_entry(tmp_path):
    """The recipe for a fused version, done for real in a copy of the repository:
    attention_fused.cu gets fused v1's three width kernels under new names,
    registry.py's _entries() their Kernel(...) entries, and nothing else is
    edited. In the copy, attention(impl="fused-<new>") is accepted, the
    registry-driven tests collect the new version and pass on the CPU emulator,
    and the registry's own checks of the .cu files still hold."""
    if "cpu" not in kernels.available_backends():
        pytest.skip("butuh g++")
    new = kc.unknown_version("fused")
    root = Path(__file__).resolve().parents[1]
    copy = tmp_path / "repo"
    for part in ("src", "kernels", "tests"):
        shutil.copytree(root / part, copy / part,
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for part in ("pyproject.toml", "_toc.yml"):
        shutil.copy2(root / part, copy / part)

    cu = copy / "kernels" / "attention_fused.cu"
    text = cu.read_text(encoding="utf-8")
    v1 = re.findall(r'^extern "C" __global__ void __launch_bounds__\(FUSED_THREADS, 3\)\n'
                    r'attention_fused_d\d+\(.*?^\}$', text, re.S | re.M)
    assert len(v1) == len(registry.WIDTHS)
    cu.write_text(text + "".join("\n" + k.replace("attention_fused_d", f"attention_fused_{new}_d", 1)
                                 + "\n" for k in v1), encoding="utf-8")
    source = copy / "src" / "atensi" / "kernels" / "registry.py"
    text = source.read_text(encoding="utf-8")
    end = "    return tuple(out)\n"
    assert text.count(end) == 1
    source.write_text(text.replace(end, _NEW_FUSED_ENTRIES.format(new=new) + end),
                      encoding="utf-8")

    env = {key: value for key, value in os.environ.items()
           if key not in ("ATENSI_KERNELS_DIR", "PYTHONPATH")}
    env["PYTHONPATH"] = str(copy / "src")
    # The fused cases of every version; this file's checks of the registry and the
    # .cu files (not the recipe tests themselves); fused v1's NVRTC checks, which
    # must still find exactly v1's kernels next to the new ones.
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA",
         "tests/test_kernels_cpu.py", "tests/test_registry.py", "tests/test_fused.py", "-k",
         "fused_every_version or (test_registry and not needs_only_its_kernel) "
         "or (test_fused and (nvrtc or registry_variants))"],
        cwd=copy, env=env, capture_output=True, text=True, timeout=600)
    log = run.stdout + run.stderr
    assert run.returncode == 0, log[-4000:]
    # The copy's package was the one tested, and it offers the new impl.
    shown = subprocess.run(
        [sys.executable, "-c", "from atensi import kernels; print(kernels.__file__); "
         "print(' '.join(kernels.IMPLS))"],
        cwd=copy, env=env, capture_output=True, text=True, timeout=60, check=True).stdout.split("\n")
    assert shown[0].startswith(str(copy / "src")) and f"fused-{new}" in shown[1].split()
    # The new version was collected by the fused parametrization and passed.
    passed = re.findall(r"^PASSED tests/test_kernels_cpu\.py::test_fused_every_version\[.*-"
                        rf"{new}\]$", log, re.M)
    assert len(passed) == 4, log[-4000:]
    assert re.search(r"^PASSED tests/test_fused\.py::test_registry_variants_match_the_source$",
                     log, re.M), log[-4000:]


# --- queries refuse what is not in the registry, by the argument's name ------------


@pytest.mark.parametrize("step", ["nope", "", None, 3, "Scores"])
def test_versions_of_an_unknown_step_are_refused(step):
    with pytest.raises(ValueError, match=r"Argumen 'step' harus salah satu dari 'rope', 'scores'"):
        registry.versions(step)
    with pytest.raises(ValueError, match=r"Argumen 'step'"):
        registry.emulated_speed(step, "v1")


@pytest.mark.parametrize("d_k", [-5, 0, 129, 200, 1.5, "64", True])
def test_for_step_refuses_a_d_k_no_width_holds(d_k):
    with pytest.raises(ValueError, match=r"Argumen 'd_k' harus bilangan bulat 1 sampai 128"):
        registry.for_step("fused", "v2", d_k=d_k)


def test_for_step_takes_numpy_integers_and_every_width():
    assert registry.for_step("fused", "v2", d_k=np.int64(65)).name == "attention_fused_v2_d128"
    assert [registry.width_for(d) for d in (1, 32, 33, 64, 65, 128)] == [32, 32, 64, 64, 128, 128]


def test_emulated_speed_of_an_unknown_version_is_refused():
    with pytest.raises(ValueError, match=r"Argumen 'version' harus salah satu dari 'v1', 'v2', 'v3'"):
        registry.emulated_speed("fused", "v9")
    assert registry.emulated_speed("fused", "v1") == 2.0


@pytest.mark.parametrize("args, kwargs, error, match", [
    ((-1, 64), {}, ValueError, r"Argumen 'H' harus bilangan bulat >= 1"),
    (("a", 0), {}, TypeError, r"Argumen 'H' harus bilangan bulat \(int\)"),
    ((0, 0), {}, ValueError, r"Argumen 'H' harus bilangan bulat >= 1"),
    ((1, 0), {}, ValueError, r"Argumen 'T' harus bilangan bulat >= 1"),
    ((1, 64), {"version": "v9"}, ValueError, r"Argumen 'version' harus salah satu dari"),
    ((1, 64), {"sm_count": 0}, ValueError, r"Argumen 'sm_count' harus bilangan bulat >= 1"),
])
def test_fused_splits_refuses_what_is_not_a_launch(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        kernels.fused_splits(*args, **kwargs)


def test_an_edited_scores_entry_is_checked_against_the_constants(monkeypatch):
    """Editing the scores_v2_tiled entry in _entries() changes KERNELS and _entries()
    alike: the check must compare with SCORES_TILE, not with a rebuild of itself."""
    edited = tuple(dataclasses.replace(k, block=(16, 8, 1)) if k.name == "scores_v2_tiled" else k
                   for k in registry.KERNELS)
    monkeypatch.setattr(registry, "KERNELS", edited)
    monkeypatch.setattr(registry, "_entries", lambda: edited)
    with pytest.raises(ValueError, match=r"block \(SCORES_TILE, SCORES_TILE, 1\).*"
                                         r"scores_v2_tiled block \(16, 8, 1\)"):
        registry.check_constants("scores.cu")


def test_shared_memory_per_block_is_a_function_of_d_k():
    kib = 1024
    assert [registry.shared_for("fused", "v2", d) for d in (16, 32, 33, 64, 65, 128)] == [
        32 * kib, 32 * kib, 56 * kib, 56 * kib, 104 * kib, 104 * kib]
    assert registry.shared_for("fused", "v3", 100) == 112 * kib
    assert registry.shared_for("fused", "v1", 128) == 36 * kib
    assert registry.shared_for("scores", "v2", 64) == registry.get("scores_v2_tiled").static_shared
    with pytest.raises(ValueError, match=r"Argumen 'd_k' harus bilangan bulat 1 sampai 128"):
        registry.shared_for("fused", "v2", 129)
