"""Penjelajah interaktif: hidup di Jupyter, kembaran statis di buku.

``framework`` memegang kerangkanya (kontrol yang dinyatakan sekali, wajah
hidup ipywidgets, kembaran statis, pilihan lewat ``ATENSI_BOOK``); setiap
penjelajah adalah satu modul dengan ``explorer(mode=None, **awal)``,
``live(**awal)`` dan ``static(**awal)``::

    from atensi.explorers import sharpness
    sharpness.explorer()   # hidup di Jupyter, statis saat buku dibangun

Modul: ``sharpness`` (ketajaman softmax terhadap d_k), ``mask`` (empat jenis
mask), ``row`` (baris demi baris, suhu), ``rope`` (posisi berputar),
``attention_maps`` (peta atensi model yang sudah dilatih), ``playground``
(taman bermain 2-D, anywidget), ``dia`` (model rujukan *dia*, dijalankan di
halaman). JavaScript dan CSS-nya berkas paket di folder ini: ``static.js``/``static.css``
(kembaran statis), ``playground.js``/``.css``, ``dia.js``/``.css``.
"""
