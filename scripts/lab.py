"""`make lab`: open the chapters live in JupyterLab, on this computer only.

JupyterLab (requirements-lab.txt) serves its own pages and the ipywidgets
front end from ``.venv``: nothing is fetched from the network, so the sliders
work offline. It listens on 127.0.0.1 only, with a token, and opens
``chapters/``; thanks to jupytext a chapter's ``.md`` opens as a notebook too
(right click → Open With → Notebook), next to its paired ``.ipynb``.

Extra arguments go to ``jupyter lab`` (the browser test passes
``--no-browser --port=... --IdentityProvider.token=...``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"


def command(extra: list[str]) -> list[str]:
    jupyter = Path(sys.executable).parent / "jupyter"
    return [
        str(jupyter), "lab",
        f"--ServerApp.root_dir={CHAPTERS}",
        "--ServerApp.ip=127.0.0.1",
        # No update checks and no news feed: both would go to the internet.
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.news_url=None",
        "--LabApp.extension_manager=readonly",
        # Containers and CI often run as root; Jupyter refuses that by default.
        *(["--allow-root"] if os.geteuid() == 0 else []),
        *extra,
    ]


def main() -> int:
    if not (Path(sys.executable).parent / "jupyter-lab").exists():
        print("JupyterLab belum terpasang. Jalankan: make lab", file=sys.stderr)
        return 1
    # The explorers run live in Jupyter (ATENSI_BOOK=1 is only for book builds).
    os.environ.pop("ATENSI_BOOK", None)
    print("JupyterLab untuk bab-bab atensi; hentikan dengan Ctrl-C.")
    cmd = command(sys.argv[1:])
    os.execv(cmd[0], cmd)


if __name__ == "__main__":
    sys.exit(main())
