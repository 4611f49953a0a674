"""``python -m atensi.bench``: lihat :mod:`atensi.bench`."""

from atensi.arguments import run_command
from atensi.bench import _main

run_command(_main, "python -m atensi.bench")
