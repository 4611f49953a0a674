"""CI plumbing: `.ci/run` installs what is missing (after `apt-get update`), then
runs `make test` (or the make targets it is given); under CI=true a missing
browser fails instead of skipping. The Pages job's step list is run for real:
`make book`, `make pdf`, `make zip`, in its order, into a folder of its own."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import zipfile

import pytest
import yaml

import conftest
from chapter_runs import BOOK_REPOSITORY
from conftest import ROOT

STUB = """#!/bin/sh
echo "{name} $*" >> "{log}"
"""
# sudo as a test sees it: recorded, then the command it was given.
SUDO = """#!/bin/sh
echo "sudo $*" >> "{log}"
exec "$@"
"""
# apt-get that records and, when asked to install chromium, "installs" it.
APT_INSTALLS_CHROMIUM = """#!/bin/sh
echo "apt-get $*" >> "{log}"
case " $* " in *" chromium "*) printf '#!/bin/sh\\n' > "{chromium}"; chmod +x "{chromium}" ;; esac
"""


def script(path, text: str):
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def test_ci_run_updates_apt_before_installing_the_browser(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    chromium = tmp_path / "chromium"
    script(bin_dir / "make", STUB.format(log=log, name="make"))  # recorded, not run
    script(bin_dir / "sudo", STUB.format(log=log, name="sudo"))
    script(bin_dir / "apt-get", APT_INSTALLS_CHROMIUM.format(log=log, chromium=chromium))
    script(bin_dir / "id", "#!/bin/sh\necho 0\n")  # as root: no sudo
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", ATENSI_CHROMIUM=str(chromium))
    env.pop("ATENSI_MATH_FONT", None)
    proc = subprocess.run(["bash", str(ROOT / ".ci" / "run")], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = log.read_text(encoding="utf-8").splitlines()
    assert calls == ["apt-get update", "apt-get install -y --no-install-recommends chromium",
                     "make test"]


@pytest.mark.parametrize("args, make", [([], "make test"), (["book", "pdf", "zip"], "make book pdf zip")])
def test_ci_run_installs_nothing_when_everything_is_there(tmp_path, args, make):
    if not os.path.exists(conftest.CHROMIUM):
        pytest.skip("Chromium tidak terpasang di mesin ini")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    for name in ("apt-get", "sudo", "make"):
        script(bin_dir / name, STUB.format(log=log, name=name))
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    env.pop("ATENSI_CHROMIUM", None)
    env.pop("ATENSI_MATH_FONT", None)
    proc = subprocess.run(["bash", str(ROOT / ".ci" / "run"), *args], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert log.read_text(encoding="utf-8").splitlines() == [make]


# --- make on a machine without the system packages ---------------------------------
#
# A PATH of its own holds only the tools the case keeps; node, g++, git, the
# math font and Chromium are missing unless the case lists them. apt-get and
# sudo are stubs that record their arguments and install nothing, so after the
# "install" the packages are still missing and make must stop there. The venv
# and the build go to the test's folder, where nothing may appear.

KEPT = ("bash", "sh", "make", "find", "env", "cat", "mkdir", "rm", "touch", "dirname")


def bare_machine(tmp_path, *, keep=(), root=False, sudo=True, apt=True, venv_module=True):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    log.touch()
    for name in KEPT + tuple(keep):
        found = shutil.which(name)
        assert found, name
        (bin_dir / name).symlink_to(found)
    script(bin_dir / "id", f"#!/bin/sh\necho {0 if root else 1000}\n")
    if apt:
        script(bin_dir / "apt-get", STUB.format(log=log, name="apt-get"))
    if sudo:
        script(bin_dir / "sudo", SUDO.format(log=log))
    python = script(tmp_path / "python3", f"#!/bin/sh\nexit {0 if venv_module else 1}\n")
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "LANG": "C.UTF-8",
           "ATENSI_CHROMIUM": str(tmp_path / "tidak-ada" / "chromium"),
           "ATENSI_MATH_FONT": str(tmp_path / "tidak-ada" / "latinmodern-math.otf")}
    return env, log, python


def run_make(tmp_path, env, python, *targets):
    out = tmp_path / "keluaran"
    proc = subprocess.run(["make", "-C", str(ROOT), f"VENV={tmp_path / 'venv'}", f"OUTPUT={out}",
                           f"PYTHON={python}", *targets],
                          env=env, capture_output=True, text=True, timeout=60)
    # Stopped before any work: no virtual environment, no build folder.
    assert not (tmp_path / "venv").exists() and not out.exists(), proc.stdout + proc.stderr
    return proc


@pytest.mark.parametrize("target, keep, packages", [
    ("book", ("node", "g++"), ["fonts-lmodern"]),
    ("book", ("g++",), ["nodejs", "fonts-lmodern"]),
    ("pdf", ("node", "g++"), ["fonts-lmodern", "chromium"]),
    ("test", ("node",), ["g++", "fonts-lmodern", "chromium", "git"]),
])
def test_make_installs_what_its_target_needs_through_sudo_then_stops_if_still_missing(
        tmp_path, target, keep, packages):
    env, log, python = bare_machine(tmp_path, keep=keep)
    proc = run_make(tmp_path, env, python, target)
    assert proc.returncode != 0
    calls = log.read_text(encoding="utf-8").splitlines()
    install = f"apt-get install -y --no-install-recommends {' '.join(packages)}"
    assert calls == ["sudo apt-get update", "apt-get update",
                     f"sudo {install}", install], proc.stdout + proc.stderr
    assert "lewat sudo (mungkin diminta kata sandi)" in proc.stdout
    assert "masih belum ada" in proc.stderr and f"jalankan lagi: make {target}" in proc.stderr


def test_make_as_root_installs_without_sudo(tmp_path):
    env, log, python = bare_machine(tmp_path, keep=("g++", "node", "git"), root=True, sudo=False)
    proc = run_make(tmp_path, env, python, "test")
    assert proc.returncode != 0
    assert log.read_text(encoding="utf-8").splitlines() == [
        "apt-get update", "apt-get install -y --no-install-recommends fonts-lmodern chromium"]


def test_make_without_root_or_sudo_stops_first_with_the_one_command(tmp_path):
    env, log, python = bare_machine(tmp_path, keep=("g++",), sudo=False)
    proc = run_make(tmp_path, env, python, "book")
    assert proc.returncode != 0
    assert log.read_text(encoding="utf-8") == ""  # nothing attempted
    assert ("Paket sistem untuk 'make book' belum terpasang: nodejs fonts-lmodern." in proc.stderr)
    assert ("apt-get update && apt-get install -y --no-install-recommends nodejs fonts-lmodern"
            in proc.stderr)
    assert "Belum ada yang dibangun." in proc.stderr


def test_make_zip_on_a_distribution_without_apt_names_what_to_install(tmp_path):
    env, log, python = bare_machine(tmp_path, apt=False, venv_module=False)
    proc = run_make(tmp_path, env, python, "zip")
    assert proc.returncode != 0
    assert log.read_text(encoding="utf-8") == ""
    assert "belum terpasang: python3-venv." in proc.stderr
    assert "tidak memakai apt-get" in proc.stderr


def test_make_check_looks_for_no_system_package(tmp_path):
    """The contributor's loop on a machine without node, g++ or the font: no apt, no sudo."""
    env, log, python = bare_machine(tmp_path)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    script(venv / "bin" / "python", "#!/bin/sh\n")
    script(venv / "bin" / "pytest", STUB.format(log=log, name="pytest"))
    for stamp in (".terpasang", ".terpasang-dev"):
        (venv / stamp).touch()
    proc = subprocess.run(["make", "-C", str(ROOT), f"VENV={venv}", f"PYTHON={python}", "check"],
                          env=env, capture_output=True, text=True, timeout=60)
    # No package step ran (it would have stopped here, with no apt and no sudo):
    # only the fast tier of pytest.
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert log.read_text(encoding="utf-8").splitlines() == [
        f"pytest -q -n auto --dist loadfile {FAST_TIER.replace(chr(34), '')}"]


def test_system_package_script_refuses_an_unknown_target():
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "paket_sistem.sh"), "buku"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "target 'buku' tidak dikenal" in proc.stderr


@pytest.mark.parametrize("ci, required, outcome", [("true", "", pytest.fail.Exception),
                                                  ("", "1", pytest.fail.Exception),
                                                  ("", "", pytest.skip.Exception)])
def test_missing_browser_fails_under_ci_and_make_test_and_skips_otherwise(monkeypatch, ci, required,
                                                                         outcome):
    monkeypatch.setenv("CI", ci)
    monkeypatch.setenv("ATENSI_BROWSER_REQUIRED", required)
    with pytest.raises(outcome, match="chromium"):
        conftest._browser_missing("Chromium tidak ada di /usr/bin/chromium.")


FAST_TIER = '-m "not slow and not book and not browser and not gpu"'


def make_recipe(target: str) -> list[str]:
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    # The rule line, not a target-specific variable (``test: export X := 1``).
    start = next(n for n, line in enumerate(lines)
                 if line.startswith(f"{target}:") and lines[n + 1].startswith("\t"))
    recipe = []
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        recipe.append(line.strip())
    return recipe


def test_readme_commands_are_the_make_targets_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    # Contributors meet the fast loop first; CI runs everything.
    contributors = readme.split("## Berkontribusi", 1)[1]
    assert contributors.index("make check") < contributors.index("make test")
    assert "make check" in contributing
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "targets=(test)" in ci and 'make "${targets[@]}"' in ci
    # make test runs every test, make check the fast tier only; both on every core.
    (test,) = make_recipe("test")
    assert test.startswith("$(VENV)/bin/pytest") and " -m " not in test
    # ... and a browser test that cannot start fails it (tests/conftest.py).
    assert "test: export ATENSI_BROWSER_REQUIRED := 1" in (ROOT / "Makefile").read_text(encoding="utf-8")
    if " -n " in test:
        # The book's tests wait for one build (tests/scheduling.py).
        assert "--dist loadgroup" in test
    (check,) = make_recipe("check")
    assert check.startswith("$(VENV)/bin/pytest") and check.endswith(FAST_TIER)
    if " -n " in check:
        # Workers split files, never a module's fixtures.
        assert "--dist loadfile" in check
        dev = (ROOT / "requirements-dev.txt").read_text(encoding="utf-8")
        assert "pytest-xdist==" in dev


WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"
PDF_PAGES_PER_CHAPTER = 12  # 409 pages for 17 pages of the book; far fewer means pages went missing


def pages_job_commands() -> list[str]:
    """The shell steps of the publish job, in its order."""
    return [command for command, _ in pages_job_steps()]


# As GitHub fills them in the publish job; the repository the test books are
# built for, so this build reuses the session's execution cache.
GITHUB_CONTEXT = {"github.repository": BOOK_REPOSITORY["ATENSI_REPOSITORY"],
                  "github.ref_name": BOOK_REPOSITORY["ATENSI_BRANCH"]}


def pages_job_steps() -> list[tuple[str, dict[str, str]]]:
    """Each shell step of the publish job with its ``env:``, the
    ``${{ github.* }}`` expressions filled in from ``GITHUB_CONTEXT`` (an
    expression it does not know fails the test)."""
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))

    def filled(value: str) -> str:
        return re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: GITHUB_CONTEXT[m[1]], str(value))

    return [(step["run"], {name: filled(value) for name, value in step.get("env", {}).items()})
            for step in workflow["jobs"]["publish"]["steps"] if "run" in step]


@pytest.mark.book
@pytest.mark.slow
def test_pages_job_builds_the_site_then_the_pdf_then_the_zip(book_build, tmp_path):
    commands = pages_job_commands()
    # The build, then a step that only warns when the committed notebooks'
    # setup cell does not point at the repository being published.
    assert commands[0] == "bash .ci/run book pdf zip"
    assert len(commands) == 2 and "scripts/sync_notebooks.py --check" in commands[1]
    # A folder of its own, holding only the session's execution cache (made by
    # this library, hence the stamp), so no chapter runs a second time.
    build = tmp_path / "_build"
    shutil.copytree(book_build.output_root / "_build" / ".jupyter_cache", build / ".jupyter_cache")
    (build / ".pustaka-terakhir").touch()
    for command, step_env in pages_job_steps():
        env = dict(os.environ, CI="true", OUTPUT=str(tmp_path), **step_env)
        proc = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=1800)
        assert proc.returncode == 0, f"{command}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    html = build / "html"
    assert (html / "index.html").is_file()
    pdf = (build / "pdf" / "atensi.pdf").read_bytes()
    pages = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
    assert pages >= PDF_PAGES_PER_CHAPTER * len(conftest.toc_pages()), pages
    assert (html / "unduh" / "atensi.pdf").read_bytes() == pdf  # the copy the site links to
    archive = zipfile.ZipFile(html / "unduh" / "atensi-luring.zip")
    names = archive.namelist()
    assert "atensi/index.html" in names
    assert all(f"atensi/{page}.html" in names for page in conftest.toc_pages())
    # The zip holds the PDF, not itself, and Pendahuluan links to that copy.
    assert [name for name in names if name.startswith("atensi/unduh/")] == ["atensi/unduh/atensi.pdf"]
    assert archive.read("atensi/unduh/atensi.pdf") == pdf
    intro = archive.read("atensi/chapters/pendahuluan.html").decode("utf-8")
    assert 'href="../unduh/atensi.pdf"' in intro and "unduh/atensi-luring.zip" not in intro
    # Online, the same page links both downloads at the address the job publishes to.
    online = (html / "chapters" / "pendahuluan.html").read_text(encoding="utf-8")
    owner, name = GITHUB_CONTEXT["github.repository"].split("/")
    site = f"https://{owner.lower()}.github.io/{name}/unduh/"
    assert f'href="{site}atensi.pdf"' in online and f'href="{site}atensi-luring.zip"' in online
