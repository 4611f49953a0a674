"""Build hook: the wheel carries the CUDA kernels that ``atensi.kernels`` loads.

The ``.cu`` files live at the repository root (``kernels/``), where the book's
``literalinclude`` and its readers find them. A wheel copies them into
``atensi/kernels/`` so that a non-editable install (``pip install <repo URL>``)
runs them too; an editable install reads the repository folder directly.
Everything else about the package is in ``pyproject.toml``.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

KERNEL_SOURCES = Path(__file__).resolve().parent / "kernels"


class build_py_with_kernels(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib, "atensi", "kernels")
        self.mkpath(str(target))
        for source in sorted(KERNEL_SOURCES.glob("*.cu")):
            self.copy_file(str(source), str(target / source.name))


setup(cmdclass={"build_py": build_py_with_kernels})
