"""``python -m atensi.bench``: lihat :mod:`atensi.bench.cli`."""

from atensi.arguments import run_command
from atensi.bench.cli import main

run_command(main, "python -m atensi.bench")
