"""``python -m atensi.kernels``: lihat :mod:`atensi.kernels.cli`."""

from atensi.arguments import run_command
from atensi.kernels.cli import main

run_command(main, "python -m atensi.kernels")
