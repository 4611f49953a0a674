"""ATENSI_* variables: a bad value is refused by name, never ignored or read as "no limit"."""

import pytest

from atensi import environment
from atensi.cudacpu import RawModule, build, module
from atensi.kernels import limits


@pytest.mark.parametrize("value", ["nan", "1e400", "inf", "-1", "0", "banyak"])
def test_a_cpu_budget_that_is_not_a_finite_positive_number_is_refused(monkeypatch, value):
    monkeypatch.setenv("ATENSI_CPU_BUDGET", value)
    with pytest.raises(ValueError, match=f"ATENSI_CPU_BUDGET='{value}' tidak sah.*unset"):
        limits.check_cpu_work(1e30, "Atensi ini", "cpu")


def test_a_cpu_budget_from_the_environment_is_named_in_the_refusal(monkeypatch):
    monkeypatch.setenv("ATENSI_CPU_BUDGET", "1e3")
    with pytest.raises(ValueError, match="batasnya .* \\(dari variabel lingkungan ATENSI_CPU_BUDGET"):
        limits.check_cpu_work(1e6, "Atensi ini", "cpu")
    monkeypatch.setenv("ATENSI_CPU_BUDGET", "")  # empty: the default
    assert limits.cpu_budget() == limits.CPU_BUDGET


@pytest.mark.parametrize("value", ["banyak", "0", "-5", "1.5"])
def test_a_bad_thread_limit_is_refused_not_ignored(monkeypatch, value):
    monkeypatch.setenv("ATENSI_CUDACPU_MAX_THREADS", value)
    with pytest.raises(ValueError, match="ATENSI_CUDACPU_MAX_THREADS.*bilangan bulat >= 1"):
        module.check_launch("k", (1,), (32,))


def test_a_thread_limit_is_obeyed(monkeypatch):
    monkeypatch.setenv("ATENSI_CUDACPU_MAX_THREADS", "64")
    module.check_launch("k", (2,), (32,))
    with pytest.raises(ValueError, match="batas 64"):
        module.check_launch("k", (3,), (32,))


@pytest.mark.parametrize("name, value", [("ATENSI_CUDACPU_MODE", "fiber"),
                                         ("ATENSI_CUDACPU_SANITIZE", "adress")])
def test_a_mode_or_sanitizer_from_the_environment_is_named(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=f"{name}='{value}' tidak sah.*salah satu dari"):
        module.resolve_mode(None, None)


def test_a_bad_seed_is_named(monkeypatch):
    monkeypatch.setenv("ATENSI_CUDACPU_SEED", "-1")
    with pytest.raises(ValueError, match="ATENSI_CUDACPU_SEED='-1' tidak sah"):
        RawModule('extern "C" __global__ void k(float* x) {}', path="k.cu")


def test_a_missing_compiler_says_it_came_from_the_environment(monkeypatch):
    monkeypatch.setenv("ATENSI_CXX", "g++-tidak-ada")
    with pytest.raises(RuntimeError, match="'g\\+\\+-tidak-ada' \\(dari variabel lingkungan ATENSI_CXX\\)"):
        build.compiler()


def test_the_readers_accept_what_they_should():
    assert environment.positive_number("ATENSI_TIDAK_ADA", 5.0) == 5.0
    assert environment.integer("ATENSI_TIDAK_ADA", 3) == 3
    assert environment.choice("ATENSI_TIDAK_ADA", ("a",)) is None


def test_a_command_that_is_no_compiler_is_refused_naming_the_variable(monkeypatch):
    monkeypatch.setenv("ATENSI_CXX", "/bin/false")
    with pytest.raises(RuntimeError, match="ATENSI_CXX='/bin/false' tidak menunjuk ke kompilator C\\+\\+"
                                           ".*unset ATENSI_CXX"):
        RawModule('extern "C" __global__ void k(float* x) {}', path="k.cu")


def test_a_sanitizer_from_the_environment_is_named_when_its_runtime_is_missing(monkeypatch):
    monkeypatch.setenv("ATENSI_CUDACPU_SANITIZE", "address")
    monkeypatch.setattr(build, "build", lambda *a, **k: pytest.fail("dikompilasi sebelum ditolak"))
    with pytest.raises(RuntimeError, match="dari variabel lingkungan ATENSI_CUDACPU_SANITIZE=address"
                                           ".*unset ATENSI_CUDACPU_SANITIZE"):
        RawModule('extern "C" __global__ void k(float* x) {}', path="k.cu")


@pytest.mark.parametrize("make", ["missing", "file"])
def test_a_kernel_folder_from_the_environment_is_named(monkeypatch, tmp_path, make):
    from atensi.kernels import loading

    target = tmp_path / "kernels"
    if make == "file":
        target.write_text("bukan folder")
    monkeypatch.setenv("ATENSI_KERNELS_DIR", str(target))
    with pytest.raises(FileNotFoundError, match=f"ATENSI_KERNELS_DIR='{target}' tidak menunjuk ke folder"
                                                ".*unset ATENSI_KERNELS_DIR"):
        loading.kernel_path("softmax.cu")
    (tmp_path / "kosong").mkdir()
    monkeypatch.setenv("ATENSI_KERNELS_DIR", str(tmp_path / "kosong"))
    with pytest.raises(FileNotFoundError, match="folder dari variabel lingkungan ATENSI_KERNELS_DIR"):
        loading.kernel_path("softmax.cu")
