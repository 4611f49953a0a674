"""CI plumbing: `.ci/run` installs what is missing (after `apt-get update`), then
runs `make test` (or the make targets it is given); under CI=true a missing
browser fails instead of skipping. The Pages job's step list is run for real:
`make book`, `make pdf`, `make zip`, in its order, into a folder of its own."""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile

import pytest
import yaml

import conftest
from conftest import ROOT

STUB = """#!/bin/sh
echo "$(basename "$0") $*" >> "{log}"
"""


def test_ci_run_updates_apt_before_installing_the_browser(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    for name in ("apt-get", "sudo", "make"):  # recorded, not run
        stub = bin_dir / name
        stub.write_text(STUB.format(log=log), encoding="utf-8")
        stub.chmod(0o755)
    (bin_dir / "id").write_text("#!/bin/sh\necho 0\n", encoding="utf-8")  # as root: no sudo
    (bin_dir / "id").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}",
               ATENSI_CHROMIUM=str(tmp_path / "tidak-ada" / "chromium"))
    proc = subprocess.run(["bash", str(ROOT / ".ci" / "run")], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    calls = log.read_text(encoding="utf-8").splitlines()
    assert calls[0] == "apt-get update"
    assert calls[1].startswith("apt-get install -y") and calls[1].split()[-1] == "chromium"
    assert calls[-1] == "make test"
    assert not any(call.startswith("sudo") for call in calls)


@pytest.mark.parametrize("args, make", [([], "make test"), (["book", "pdf", "zip"], "make book pdf zip")])
def test_ci_run_installs_nothing_when_everything_is_there(tmp_path, args, make):
    if not os.path.exists(conftest.CHROMIUM):
        pytest.skip("Chromium tidak terpasang di mesin ini")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    for name in ("apt-get", "make"):
        stub = bin_dir / name
        stub.write_text(STUB.format(log=log), encoding="utf-8")
        stub.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    env.pop("ATENSI_CHROMIUM", None)
    proc = subprocess.run(["bash", str(ROOT / ".ci" / "run"), *args], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert log.read_text(encoding="utf-8").splitlines() == [make]


@pytest.mark.parametrize("ci, outcome", [("true", pytest.fail.Exception), ("", pytest.skip.Exception)])
def test_missing_browser_fails_under_ci_and_skips_locally(monkeypatch, ci, outcome):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="chromium"):
        conftest._browser_missing("Chromium tidak ada di /usr/bin/chromium.")


FAST_TIER = '-m "not slow and not book and not browser and not gpu"'


def make_recipe(target: str) -> list[str]:
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(n for n, line in enumerate(lines) if line.startswith(f"{target}:"))
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
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    return [step["run"] for step in workflow["jobs"]["publish"]["steps"] if "run" in step]


@pytest.mark.book
@pytest.mark.slow
def test_pages_job_builds_the_site_then_the_pdf_then_the_zip(book_build, tmp_path):
    commands = pages_job_commands()
    assert commands == ["bash .ci/run book pdf zip"]
    # A folder of its own, holding only the session's execution cache (made by
    # this library, hence the stamp), so no chapter runs a second time.
    build = tmp_path / "_build"
    shutil.copytree(book_build.output_root / "_build" / ".jupyter_cache", build / ".jupyter_cache")
    (build / ".pustaka-terakhir").touch()
    env = dict(os.environ, CI="true", OUTPUT=str(tmp_path))
    for command in commands:
        proc = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=1800)
        assert proc.returncode == 0, f"{command}:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    html = build / "html"
    assert (html / "index.html").is_file()
    pdf = (build / "pdf" / "atensi.pdf").read_bytes()
    pages = pdf.count(b"/Type /Page") - pdf.count(b"/Type /Pages")
    assert pages >= PDF_PAGES_PER_CHAPTER * len(conftest.toc_pages()), pages
    assert (html / "unduh" / "atensi.pdf").read_bytes() == pdf  # the copy the site links to
    names = zipfile.ZipFile(html / "unduh" / "atensi-luring.zip").namelist()
    assert "atensi/index.html" in names
    assert all(f"atensi/{page}.html" in names for page in conftest.toc_pages())
    assert not any(name.startswith("atensi/unduh/") for name in names)
