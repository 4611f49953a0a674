"""``python -m atensi.bench``: lihat :mod:`atensi.bench`."""

import sys

from atensi.bench import _main

sys.exit(_main())
