#!/usr/bin/env bash
# Pemeriksaan kernel di mesin dengan GPU NVIDIA, dalam satu panggilan ≤ 10 menit.
#
#   bash scripts/gpu_check.sh            (hasil di $OUT, atau ./gpu_results)
#
# Python: bila `python3` mesin ini bisa `import cupy` (mesin GPU yang sudah
# terpasang CuPy, tanpa jaringan), python3 itu yang dipakai dengan
# PYTHONPATH=src dan TIDAK ADA yang dipasang. Hanya bila tidak, dibuat venv
# dan dipasang requirements-gpu.txt + requirements-dev.txt lewat pip (butuh
# jaringan; ATENSI_SKIP_INSTALL=1 melewatinya).
#
# Langkah, satu fungsi check_* per langkah, dalam urutan nilainya: kebenaran
# dulu, lalu angka utama, lalu sanitizer. Setiap langkah punya batas waktu
# (untuk cache kernel yang masih kosong); jumlah batas ditambah GRACE per langkah
# (timeout -k) dan PACKING (ringkasan akhir) ≤ BUDGET = 540 s, jadi ≥ 60 s di bawah
# batas 600 s satu perintah. Langkah yang melewati batasnya dihentikan dan dicatat
# "DIPOTONG <nama>". Setiap langkah menulis hasilnya begitu selesai (results.txt,
# JSON-nya, logs.tar.gz dikemas ulang), jadi lari yang terpotong tetap membawa
# pulang yang sudah diukur:
#   check_info        versi Python/CuPy/CUDA, GPU, pustaka CUDA yang dimuat, daftar
#                     kernel dari registri (python -m atensi.kernels --daftar)
#   check_facts       fakta.json: kartu, clock (atribut perangkat dan nvidia-smi),
#                     bandwidth salinan device-ke-device, dan roofline tiap kernel
#                     dengan bandwidth terukur itu (scripts/gpu_headline_bench.py --fakta)
#   check_cupy        kernel elementwise CuPy (NVRTC) dan cuBLAS
#   check_tests       pytest terpilih: hanya yang tidak terlihat emulator (ukuran besar,
#                     termasuk satu panggilan fused dengan B·H·T·d_k > 2³¹; pipeline
#                     cp.async fused v2; aturan penerimaan FlashAttention di CuPy,
#                     tests/test_flash_attn.py). ATENSI_REQUIRE_GPU=1: tanpa GPU = gagal,
#                     dan anggaran CPU tests/budgets.py tidak berlaku
#   check_tensorcore  scripts/tensorcore_gpu.py: galat fused v3 TF32/3xTF32 di T = 1024
#                     dan 4096 melawan float64, dengan batas dari model pembulatan
#                     akumulasi terpotong (truncation); satu baris per kernel
#   check_headline    B=8, H=12, T=1024/4096, d_k=64, kausal: fused v1, v2 ±split,
#                     fused v3 TF32 dan 3xTF32, rantai v2, cuBLAS + softmax CuPy,
#                     torch SDPA. Yang diukur peluncurnya (tanpa pemeriksaan masukan
#                     API), pemanasan ≥ 100 ms, 20 ulangan event CUDA bergantian dengan
#                     torch SDPA; clock SM dan kartu dicatat per baris
#   check_ncu         (bila ncu ada) Nsight Compute pada fused v2 d64, v3 TF32 dan v3
#                     3xTF32 di (8, 12, 1024, 64): metrik yang diramalkan emulator,
#                     terukur dan ramalan berdampingan di ncu.json
#   check_bench       python -m atensi.bench --quick --device gpu (baris GPU saja)
#   check_sanitizers  compute-sanitizer memcheck, racecheck, synccheck (bila alatnya
#                     ada), hanya kernel atensi (--kernel-regex dari registri), pada
#                     fused v2 d64, v2 split + combine, kernel backward, dan fused v3
#                     3xTF32 (T = 130, d_k = 64, split 1 dan 3)
# Langkah baru: tulis satu fungsi check_<nama> dan panggil di bagian akhir.
# Di $OUT hanya ada: results.txt, bench_gpu.json, bench_headline.json, fakta.json,
# ncu.json, logs.tar.gz.
#
# Variabel: OUT (folder hasil), ATENSI_VENV (bawaan .venv, jalur cadangan),
# ATENSI_SKIP_INSTALL=1, ATENSI_PYTEST_SITE (site-packages tempat meminjam
# pytest murni-Python bila python3 mesin tidak punya), ATENSI_GPU_CHECK_DRY_RUN=1
# (hanya tampilkan perintah; untuk uji tanpa GPU).
set -u

cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
RESULTS_DIR="${OUT:-$ROOT/gpu_results}"
mkdir -p "$RESULTS_DIR"
RESULTS="$RESULTS_DIR/results.txt"
BENCH_JSON="$RESULTS_DIR/bench_gpu.json"
HEADLINE_JSON="$RESULTS_DIR/bench_headline.json"
FACTS_JSON="$RESULTS_DIR/fakta.json"
NCU_JSON="$RESULTS_DIR/ncu.json"
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/atensi-gpu-check.XXXXXX")
: >"$RESULTS"
# Placeholders until their step writes them: a cut run still returns all four files.
echo '{"schema": null, "rows": [], "error": "bench tidak berjalan atau gagal; lihat results.txt"}' >"$BENCH_JSON"
echo '{"schema": null, "rows": [], "error": "tidak berjalan atau gagal; lihat results.txt"}' >"$HEADLINE_JSON"
echo '{"schema": null, "error": "tidak berjalan atau gagal; lihat results.txt"}' >"$FACTS_JSON"
echo '{"schema": null, "rows": [], "error": "ncu tidak berjalan (tidak ada, atau gagal); lihat results.txt"}' >"$NCU_JSON"
FAILED=0
DRY="${ATENSI_GPU_CHECK_DRY_RUN:-0}"
BUDGET=540 # seconds for the whole script: 600 s per command, less a 60 s margin
GRACE=5    # seconds timeout -k waits after TERM before KILL, counted for every step
PACKING=15 # seconds for the summary at the end (the logs are packed after every step)
PLANNED=$PACKING # the script's own estimate of its longest run: limits + grace + packing
CUT=""     # steps stopped at their time limit
HAVE_TIMEOUT=0
command -v timeout >/dev/null 2>&1 && HAVE_TIMEOUT=1

note() { echo "$1" | tee -a "$RESULTS"; }

# step NAME LIMIT_S COMMAND...: run with a time limit, log to NAME.log, record OK/GAGAL.
step() {
    local name=$1 limit=$2
    shift 2
    # Installing (fallback path, a user's machine) is outside the device budget.
    case $name in venv | install) ;; *) PLANNED=$((PLANNED + limit + GRACE)) ;; esac
    if [ "$PLANNED" -gt "$BUDGET" ]; then
        note "LEWATI $name (anggaran waktu $BUDGET s habis)"
        return 0
    fi
    # ATENSI_GPU_CHECK_MAX_STEP: a smaller limit for every step (tests of the cut-off).
    if [ -n "${ATENSI_GPU_CHECK_MAX_STEP:-}" ] && [ "$limit" -gt "$ATENSI_GPU_CHECK_MAX_STEP" ]; then
        limit=$ATENSI_GPU_CHECK_MAX_STEP
    fi
    local shown="$*"
    shown=${shown//$'\n'/ }
    # A dry run lists every command whole (tests read it); a real run keeps results.txt short.
    [ "$DRY" = 1 ] || [ ${#shown} -le 200 ] || shown="${shown:0:200}..."
    echo "== $name (≤ $limit s): $shown"
    if [ "$DRY" = 1 ]; then
        note "KERING $name (≤ $limit s): $shown"
        return 0
    fi
    local start=$SECONDS code
    if [ "$HAVE_TIMEOUT" = 1 ]; then
        timeout -k "$GRACE" "$limit" "$@" >"$LOGS/$name.log" 2>&1
    else
        "$@" >"$LOGS/$name.log" 2>&1
    fi
    code=$?
    local took=$((SECONDS - start))
    if [ $code -eq 0 ]; then
        note "OK     $name (${took} s)"
    else
        if [ $code -eq 124 ] || [ $code -eq 137 ]; then
            note "DIPOTONG $name: dihentikan di batas $limit s"
            CUT="$CUT $name"
            code="$code, lewat batas $limit s"
        fi
        note "GAGAL  $name (kode $code, ${took} s, lihat $name.log di logs.tar.gz)"
        tail -n 8 "$LOGS/$name.log"
        FAILED=$((FAILED + 1))
    fi
    pack_logs
    return 0
}

# Every log so far into $OUT at once: a run cut from outside keeps what it measured.
pack_logs() {
    tar -czf "$LOGS.tar.gz" -C "$LOGS" . 2>/dev/null && mv -f "$LOGS.tar.gz" "$RESULTS_DIR/logs.tar.gz"
}

skip() { note "LEWATI $1 ($2)"; }

finish() {
    note "Perkiraan waktu terlama (batas langkah + $GRACE s per langkah + $PACKING s ringkasan): $PLANNED s dari $BUDGET s; berjalan ${SECONDS} s."
    [ -n "$CUT" ] && note "Langkah yang dipotong karena batas waktu:$CUT"
    pack_logs
    rm -rf "$LOGS"
    echo
    echo "================ Ringkasan gpu_check ($RESULTS_DIR) ================"
    grep -v '^  ' "$RESULTS" | head -n 24
    if [ "$DRY" != 1 ] && [ -n "${PY:-}" ] && [ -s "$BENCH_JSON" ]; then
        PYTHONPATH="$PYPATH" "$PY" - "$BENCH_JSON" <<'EOF' 2>/dev/null | head -n 14
import sys
from atensi.bench import report
r = report.load_results(sys.argv[1])
rows = [x for x in (r or {}).get("rows", []) if x["device"] == "gpu"]
if rows:
    print(report.caption(r, "gpu"))
    big = max(x["B"] for x in rows)
    print(report.format_table([x for x in rows if x["B"] == big], "gpu"))
    for k, v in report.summary(r).items():
        if v is not None and k.startswith("gpu"):
            print(f"{k}: {v:.3g}")
EOF
        # The expected numbers are data (results/targets.json), not library constants.
        PYTHONPATH="$PYPATH" "$PY" scripts/check_targets.py "$BENCH_JSON" 2>/dev/null | grep -v "tidak diukur" | head -n 8
        PYTHONPATH="$PYPATH" "$PY" - "$HEADLINE_JSON" <<'EOF' 2>/dev/null | head -n 16
import json, sys
r = json.load(open(sys.argv[1]))
for x in r.get("rows", []):
    if "ms" in x:
        share = f"{100 * x['fp32_peak_share']:.1f} % puncak FP32" if x.get("fp32_peak_share") else ""
        torch = f" {x['vs_torch']:.2f}x torch" if x.get("vs_torch") else ""
        sm = (x.get("clocks") or {}).get("sm_clock_mhz")
        clock = f" SM {sm:.0f} MHz" if sm else ""
        print(f"T={x['T']:5d} {x['name'][:36]:36s} {x['ms']:9.3f} ms {x['tflops']:6.2f} TFLOP/s {share}{torch}{clock}")
    else:
        print(f"T={x['T']:5d} {x['name'][:44]:44s} GAGAL {x.get('error', '')[:60]}")
EOF
    fi
    echo "$FAILED langkah gagal. Berkas: results.txt, bench_gpu.json, bench_headline.json, fakta.json, ncu.json, logs.tar.gz"
    [ "$FAILED" -eq 0 ]
    exit $?
}

# --- Python: the machine's own when it has CuPy, a venv only as a fallback ----
PYPATH="$ROOT/src${PYTHONPATH:+:$PYTHONPATH}"
if python3 -c "import cupy" >/dev/null 2>&1; then
    PY=$(command -v python3)
    note "Python: $PY (sudah punya CuPy; tidak ada yang dipasang)"
    # pytest and hypothesis are pure Python: borrow any the machine lacks.
    SHIM=""
    for pkg in pytest:_pytest,pytest,py.py pluggy:pluggy iniconfig:iniconfig \
        packaging:packaging hypothesis:hypothesis sortedcontainers:sortedcontainers \
        attr:attr,attrs yaml:yaml; do
        mod=${pkg%%:*}
        python3 -c "import $mod" >/dev/null 2>&1 && continue
        site=""
        for cand in ${ATENSI_PYTEST_SITE:-} "$ROOT"/.venv/lib/python3*/site-packages; do
            if [ -e "$cand/$mod" ]; then
                site=$cand
                break
            fi
        done
        if [ -z "$site" ]; then
            note "  python3 tidak punya '$mod' dan tidak ada salinan untuk dipinjam"
            continue
        fi
        SHIM=${SHIM:-$LOGS/pyshim}
        mkdir -p "$SHIM"
        IFS=, read -r -a parts <<<"${pkg#*:}"
        for part in "${parts[@]}"; do
            [ -e "$site/$part" ] && ln -sf "$site/$part" "$SHIM/$part"
        done
        note "  '$mod' dipinjam dari $site"
    done
    [ -n "$SHIM" ] && PYPATH="$PYPATH:$SHIM"
else
    VENV="${ATENSI_VENV:-.venv}"
    note "Python: python3 mesin ini tidak punya CuPy; memakai venv $VENV (jalur cadangan)"
    if [ ! -x "$VENV/bin/python" ]; then
        step venv 60 python3 -m venv "$VENV"
    fi
    PY="$VENV/bin/python"
    if [ "${ATENSI_SKIP_INSTALL:-0}" != 1 ]; then
        # Needs the network; without it pip fails fast and the check stops here.
        step install 240 "$PY" -m pip install -q --timeout 15 --retries 1 \
            -r requirements-gpu.txt -r requirements-dev.txt
        if grep -q '^GAGAL  install' "$RESULTS"; then
            note "pip gagal (tidak ada jaringan?): pasang CuPy untuk python3 mesin ini, lihat requirements-gpu.txt"
            finish
        fi
    else
        skip install "ATENSI_SKIP_INSTALL=1"
    fi
fi
export PYTHONPATH="$PYPATH"

# The card, named before anything runs (a dry run names it too).
CARD=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null | head -n 1)
note "Kartu: ${CARD:-tidak diketahui (nvidia-smi tidak menjawab)}"

# --- Steps: one function each ------------------------------------------------------------
check_info() {
    step info 20 "$PY" -c "
import sys, cupy
from atensi import kernels
print('python', sys.version.split()[0], 'cupy', cupy.__version__)
from atensi import cuda_wheels; print(cuda_wheels.preload())
print('backend:', kernels.available_backends(), kernels.loading.gpu_status()[1])
assert kernels.gpu_available(), kernels.loading.gpu_status()[1]
print(kernels.registry.table())  # every kernel the checks below launch
from atensi.bench.measure import gpu_info
print(gpu_info())
"
    if grep -q '^GAGAL  info' "$RESULTS"; then
        note "CuPy tidak melihat GPU: langkah GPU lain tidak dijalankan (lihat info.log)"
        finish
    fi
}

# The card, its clocks, a device-to-device copy for its bandwidth, and the roofline
# on that bandwidth (not another card's table value).
check_facts() {
    step facts 20 "$PY" scripts/gpu_headline_bench.py --fakta "$FACTS_JSON"
}

check_cupy() {
    step cupy 10 "$PY" -c "
from atensi import kernels; kernels.gpu_available()
import cupy as cp
x = cp.ones((4, 4), cp.float32)
s = float((cp.exp(x - 1) @ x).sum()); print(s); assert s == 64.0"
}

check_tests() {
    # What the emulator cannot see: the large shapes (int32 indices past 2³¹, grids
    # past 65535), the cp.async pipeline, and FlashAttention's acceptance rule on the
    # real kernels. The small cases run on the emulator in every `make test`.
    # ATENSI_REQUIRE_GPU=1 also switches off the CPU budgets (tests/budgets.py).
    step pytest-gpu 120 env ATENSI_REQUIRE_GPU=1 "$PY" -m pytest -q -m gpu -rs -p no:cacheprovider \
        tests/test_kernels_gpu.py::test_fused_large_shape tests/test_kernels_gpu.py::test_fused_past_2_31_elements \
        tests/test_kernels_gpu.py::test_chain_more_than_2_31_elements tests/test_flash_attn.py \
        tests/test_gpu_script.py
    [ -f "$LOGS/pytest-gpu.log" ] && grep -E '(passed|failed|error|skipped)' "$LOGS/pytest-gpu.log" |
        tail -n 1 | sed 's/^/  /' >>"$RESULTS"
    return 0
}

# Tensor cores: fused v3's error at the headline shapes against float64, and the
# bound the truncation-accumulation model gives; one line per kernel and shape.
check_tensorcore() {
    step tensorcore-v3 45 "$PY" scripts/tensorcore_gpu.py
    [ -f "$LOGS/tensorcore-v3.log" ] && grep -E '^(v3|v2|torch|  GAGAL)' "$LOGS/tensorcore-v3.log" |
        sed 's/^/  /' >>"$RESULTS"
    return 0
}

check_headline() {
    step headline 60 "$PY" scripts/gpu_headline_bench.py "$HEADLINE_JSON"
}

# Nsight Compute, when the machine has it: measured beside the emulator's prediction.
check_ncu() {
    local ncu
    if ! ncu=$(find_tool ncu); then
        skip ncu "alat tidak ditemukan di mesin ini"
        return 0
    fi
    note "ncu: $ncu"
    step ncu 50 "$PY" scripts/gpu_headline_bench.py --ncu "$ncu" "$NCU_JSON"
}

check_bench() {
    step bench 30 "$PY" -m atensi.bench --quick --device gpu --json "$BENCH_JSON"
}

# find_tool NAME: a CUDA tool on PATH or in the usual CUDA folders.
find_tool() {
    local candidate
    for candidate in "$(command -v "$1" 2>/dev/null)" \
        "${CUDA_HOME:-/usr/local/cuda}/bin/$1" \
        "/usr/local/cuda/$1/$1" \
        /usr/local/cuda-*/bin/"$1" \
        /opt/nvidia/nsight-compute/*/"$1"; do
        if [ -n "$candidate" ] && [ -x "$candidate" ]; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

# Small shapes: racecheck is 10-100x slower than a plain run. No memory pool:
# every array is its own allocation, so memcheck sees the exact end of each.
# Fused v3 (3xTF32, hand-written PTX, per-warp shared-memory hand-offs) with
# and without split-K: T = 130 leaves ragged query and key tiles, and 3 splits
# of the first query tile's two key tiles leave one range empty.
SANITIZED_TARGETS="
import numpy as np
from atensi import kernels
kernels.gpu_available()  # loads the CUDA libraries from the pip wheels when needed
import cupy as cp
cp.cuda.set_allocator(None)
rng = np.random.default_rng(21)
Q, K, V, dO = (cp.asarray(rng.standard_normal((2, 130, 64)).astype(np.float32)) for _ in range(4))
kernels.attention(Q, K, V, impl='fused-v2', splits=1, backend='cupy')  # v2 d64
kernels.attention(Q, K, V, impl='fused-v2', splits=3, backend='cupy')  # split + combine
kernels.attention_backward(Q, K, V, dO, backend='cupy')  # backward kernels
for splits in (1, 3):  # v3 3xTF32 d64, plain and split-K + combine
    kernels.attention(Q, K, V, impl='fused-v3', precision='3xtf32', splits=splits, backend='cupy')
cp.cuda.Device().synchronize()
print('OK')
"

check_sanitizers() {
    local sanitizer tool
    if ! sanitizer=$(find_tool compute-sanitizer); then
        skip compute-sanitizer "alat tidak ditemukan di mesin ini"
        return 0
    fi
    note "compute-sanitizer: $sanitizer"
    # Only atensi's own kernels (the registry's names; kns= matches the whole name
    # against the regex): CuPy's copies, fills and reductions are not checked here.
    local names
    names=$("$PY" -c "from atensi.kernels import registry; print('|'.join(k.name for k in registry.KERNELS))" 2>/dev/null)
    [ -n "$names" ] || names="attention_[a-z0-9_]*|scores_[a-z0-9_]*|softmax_[a-z0-9_]*|weighted_sum_[a-z0-9_]*|causal_mask_[a-z0-9_]*|rope_[a-z0-9_]*"
    for tool in memcheck racecheck synccheck; do
        step "$tool" 30 "$sanitizer" --tool "$tool" --error-exitcode 99 \
            --kernel-regex "kns=^($names)\$" "$PY" -c "$SANITIZED_TARGETS"
    done
}

# In order of value: correctness, the facts and headline numbers, the profile, then
# the sanitizers.
check_info
check_facts
check_cupy
check_tests
check_tensorcore
check_headline
check_ncu
check_bench
check_sanitizers
finish
