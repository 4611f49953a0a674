"""``python -m atensi.bench``: lihat :mod:`atensi.bench.cli`."""

import sys

from atensi.bench.cli import _main

sys.exit(_main())
