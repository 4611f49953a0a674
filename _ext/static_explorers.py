"""Book builds show the static twins of the explorers, never live ipywidgets.

Sets ``ATENSI_BOOK=1`` in the build process before any notebook runs; the
kernels that execute the chapters inherit it, so every build (make, tests, CI,
by hand) embeds the prerendered explorers (see ``atensi.widgets``). An
``ATENSI_BOOK=0`` already set is respected, to check the opposite.
"""

import os

from atensi.widgets import ENV_VAR


def setup(app):
    os.environ.setdefault(ENV_VAR, "1")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
