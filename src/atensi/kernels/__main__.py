"""``python -m atensi.kernels``: lihat :mod:`atensi.kernels.cli`."""

import sys

from atensi.kernels.cli import _main

sys.exit(_main())
