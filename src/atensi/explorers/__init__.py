"""Penjelajah interaktif: hidup di Jupyter, kembaran statis di buku.

``framework`` memegang kerangkanya (kontrol yang dinyatakan sekali, wajah
hidup ipywidgets, kembaran statis, pilihan lewat ``ATENSI_BOOK``); setiap
penjelajah adalah satu modul dengan ``explorer(mode=None, **awal)``,
``live(**awal)`` dan ``static(**awal)``::

    from atensi.explorers import sharpness
    sharpness.explorer()   # hidup di Jupyter, statis saat buku dibangun

Apa yang dijelajahi setiap modul tertulis di docstring modul itu. JavaScript
dan CSS-nya berkas paket di folder ini: ``static.js``/``static.css``
(kembaran statis setiap penjelajah), lalu ``NAMA.js``/``NAMA.css`` milik
penjelajah yang kembarannya menghitung di halaman.

``MODULES`` adalah satu-satunya daftar penjelajah: setiap modul, dengan cara
kembaran statisnya bekerja. Tes buku, peramban dan JupyterLab membaca daftar ini
(bab tempat setiap penjelajah mengajar dibaca dari sel ``NAMA.explorer(...)``
di bab itu), jadi penjelajah baru cukup ditambahkan di sini.
"""

from __future__ import annotations

import importlib

# Every explorer module, in the book's order, and its static twin: "frames"
# (prerendered by the framework, framework.StaticExplorer) or "page" (its own
# JavaScript computes in the page).
MODULES = {
    "sharpness": "frames",
    "mask": "frames",
    "row": "frames",
    "rope": "frames",
    "attention_maps": "frames",
    "playground": "page",
    "dia": "page",
    "bank": "frames",
}


def load(module):
    """Modul penjelajah ``module`` (kunci ``MODULES``), diimpor."""
    if module not in MODULES:
        raise ValueError(f"Penjelajah {module!r} tidak ada di atensi.explorers.MODULES: "
                         f"{', '.join(MODULES)}.")
    return importlib.import_module(f"{__name__}.{module}")
