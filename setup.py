"""Build hook: the wheel carries the CUDA kernels and the shipped results.

The ``.cu`` files live at the repository root (``kernels/``), where the book's
``literalinclude`` and its readers find them; the trained models, the corpus
and the experiments live in ``results/``. A wheel copies them into
``atensi/kernels/`` and ``atensi/results/`` so that a non-editable install
(``pip install <repo URL>``, as in Colab) runs the kernels and loads the
models too; an editable install reads the repository folders directly
(``kernels_dir()``, ``shipped.results_dir()``). Everything else about the
package is in ``pyproject.toml``.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
KERNEL_SOURCES = ROOT / "kernels"
RESULTS = ROOT / "results"
SHIPPED_RESULTS = ("*.npz", "*.json", "*.txt")  # what the chapters load; not README.md


class build_py_with_kernels(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib, "atensi", "kernels")
        self.mkpath(str(target))
        for source in sorted(KERNEL_SOURCES.glob("*.cu")):
            self.copy_file(str(source), str(target / source.name))
        target = Path(self.build_lib, "atensi", "results")
        self.mkpath(str(target))
        for pattern in SHIPPED_RESULTS:
            for source in sorted(RESULTS.glob(pattern)):
                self.copy_file(str(source), str(target / source.name))


setup(cmdclass={"build_py": build_py_with_kernels})
