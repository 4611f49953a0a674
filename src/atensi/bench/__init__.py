"""Biaya atensi, diukur: ``python -m atensi.bench [--quick] [--json PATH]``.

Tiga modul, satu tugas masing-masing:

    atensi.bench.measure   metode, preset, mesin; ``run`` mengukur semuanya
    atensi.bench.report    berkas hasil JSON, tabel, keterangan, ringkasan
    atensi.bench.cli       baris perintah ``python -m atensi.bench``

Metode "NumPy cepat" ada di :mod:`atensi.bench.cpu_fast`. Perbandingan dengan
PyTorch di CPU dan waktu kompilasi NVRTC adalah skrip
(``scripts/bench_torch_cpu.py``, ``scripts/bench_compile.py``).
"""
