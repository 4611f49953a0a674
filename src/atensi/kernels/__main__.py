"""``python -m atensi.kernels``: lihat :mod:`atensi.kernels.cli`."""

import sys

from atensi.kernels.cli import main

sys.exit(main())
