"""Biaya attention, diukur: ``python -m atensi.bench [--quick] [--json PATH]``.

Setiap baris tabel adalah satu cara menghitung attention kausal yang sama
(12 *head*, d_k = 64, seperti ANDREA-120M) pada satu bentuk (B, T):

    waktu median      median beberapa putaran hangat (CPU: time.perf_counter;
                      GPU: cupyx.profiler.benchmark, dengan event CUDA)
    GFLOP/s           FLOP berguna / waktu, FLOP = 4·B·H·T²·d_k, dibagi dua
                      untuk attention kausal (separuh skor ada di masa depan);
                      baris GPU yang waktunya < 5 × biaya peluncuran kernel
                      ditandai "latensi" (angkanya mengukur latensi, bukan laju)
    memori puncak     byte yang dialokasikan selama satu panggilan, termasuk
                      keluaran (CPU: tracemalloc; GPU: memory hook CuPy, atau
                      statistik memori PyTorch untuk baris PyTorch)
    rasio             waktu / waktu tercepat pada bentuk (B, T) yang sama

Setiap metode diperiksa lebih dulu terhadap pembanding pada bentuk itu
(galat relatif maksimum dicatat di ``max_rel_err``), baru kemudian diukur.

Fungsi untuk bab dan skrip:
    run(preset="quick", device="auto")   → dict hasil (mesin, tanggal, baris)
    format_table(hasil, device="cpu")    → tabel teks (atau markdown=True)
    summary(hasil)                       → angka-angka target
    save_results(hasil, path), load_results(path) → dict atau None
    caption(hasil, device="gpu")         → keterangan mesin dan tanggal

Isi paket, satu tugas per modul (semua nama di atas juga ada di sini):

    methods     metode yang diukur (METHODS), preset (PRESETS), flops
    machine     mesin pengukuran (CPU, GPU, versi pustaka)
    timing      waktu median dan memori puncak satu panggilan, CPU dan GPU
    measure     run: semua metode pada semua bentuk, diperiksa lalu diukur
    results     berkas hasil JSON (save_results, load_results)
    tables      format_table dan caption
    targets     summary, angka kompilasi dan emulasi, backward
    cli         python -m atensi.bench

Yang dibaca saat dipanggil diganti di modul pemiliknya, misalnya
``monkeypatch.setattr(bench.measure, "run", f)`` untuk ``_main``.
"""


from __future__ import annotations

from atensi.bench import (  # noqa: F401
    cli, machine, measure, methods, results, tables, targets, timing,
)
from atensi.bench.cli import _json_path_problem, _main  # noqa: F401
from atensi.bench.machine import (  # noqa: F401
    _blas_name,
    _cpu_name,
    _fp32_lanes,
    _gpu_info,
    _gpu_ready,
    machine_info,
)
from atensi.bench.measure import (  # noqa: F401
    MAX_REL_ERR,
    TORCH_REL_ERR,
    _cases,
    _gpu_fits,
    _inputs,
    _measure_case,
    _rel_err,
    run,
)
from atensi.bench.methods import (  # noqa: F401
    ANDREA_T,
    D_K,
    METHODS,
    PRESETS,
    H,
    Method,
    Preset,
    _callable,
    _chain,
    _fused,
    _torch,
    _torch_gpu_ok,
    flops,
)
from atensi.bench.results import (  # noqa: F401
    GPU_RESULTS,
    SCHEMA,
    _rows,
    load_results,
    save_results,
)
from atensi.bench.tables import (  # noqa: F401
    COLUMNS,
    FP32_COLUMN,
    _cells,
    _fmt_ms,
    _fmt_time,
    caption,
    format_table,
)
from atensi.bench.targets import (  # noqa: F401
    _backward_lines,
    _engine_lines,
    _find,
    _summary_lines,
    backward_targets,
    engine_targets,
    summary,
)
from atensi.bench.timing import (  # noqa: F401
    GPU_LAUNCHES,
    LATENCY_FACTOR,
    _launch_floor,
    _peak_cpu,
    _peak_gpu,
    _time_cpu,
    _time_gpu,
)
