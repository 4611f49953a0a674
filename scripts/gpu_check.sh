#!/usr/bin/env bash
# Pemeriksaan kernel di mesin dengan GPU NVIDIA (driver CUDA 12).
#
#   bash scripts/gpu_check.sh
#
# Langkah: venv + requirements-gpu/dev, nvidia-smi, uji singkat CuPy (kernel
# elementwise lewat NVRTC, cuBLAS), uji GPU (pytest -m gpu),
# compute-sanitizer memcheck dan racecheck per berkas kernel (bila alatnya ada),
# lalu `python -m atensi.bench --quick`. Langkah yang gagal dicatat dan
# langkah berikutnya tetap dijalankan. Log dan results.txt ada di $OUT bila
# diset, selain itu di ./gpu_results.
#
# Variabel: ATENSI_VENV (bawaan .venv), ATENSI_SKIP_INSTALL=1 (tanpa pip),
# PYTHON (bawaan python3, untuk membuat venv).
set -u

cd "$(dirname "$0")/.." || exit 1
RESULTS_DIR="${OUT:-$PWD/gpu_results}"
mkdir -p "$RESULTS_DIR"
RESULTS="$RESULTS_DIR/results.txt"
: >"$RESULTS"
FAILED=0

# step NAME COMMAND...: run, log to $RESULTS_DIR/NAME.log, record OK/GAGAL.
step() {
    local name=$1
    shift
    echo "== $name: $*"
    local start=$SECONDS
    "$@" >"$RESULTS_DIR/$name.log" 2>&1
    local code=$?
    local took=$((SECONDS - start))
    if [ $code -eq 0 ]; then
        echo "OK     $name (${took} s)" | tee -a "$RESULTS"
    else
        echo "GAGAL  $name (kode $code, ${took} s, lihat $name.log)" | tee -a "$RESULTS"
        tail -n 20 "$RESULTS_DIR/$name.log"
        FAILED=$((FAILED + 1))
    fi
    return 0
}

skip() {
    echo "LEWATI $1 ($2)" | tee -a "$RESULTS"
}

# --- Python environment ------------------------------------------------------
VENV="${ATENSI_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
    step venv "${PYTHON:-python3}" -m venv "$VENV"
fi
PY="$VENV/bin/python"
if [ "${ATENSI_SKIP_INSTALL:-0}" != 1 ]; then
    step install "$PY" -m pip install -q -r requirements-gpu.txt -r requirements-dev.txt
else
    skip install "ATENSI_SKIP_INSTALL=1"
fi

if command -v nvidia-smi >/dev/null 2>&1; then
    step nvidia-smi nvidia-smi
else
    skip nvidia-smi "perintah nvidia-smi tidak ada"
fi
step backends "$PY" -c "from atensi import kernels; print(kernels.available_backends()); assert kernels.gpu_available(), kernels._gpu_status()[1]"
# CuPy's own kernels (NVRTC + CUDA Runtime headers) and cuBLAS, before the tests:
# without a CUDA toolkit both come from the wheels in requirements-gpu.txt.
step cupy "$PY" -c "from atensi import kernels; kernels.gpu_available(); import cupy as cp; x = cp.ones((4, 4), cp.float32); s = float((cp.exp(x - 1) @ x).sum()); print(s); assert s == 64.0"

# --- Tests -------------------------------------------------------------------
step pytest-gpu env ATENSI_REQUIRE_GPU=1 "$PY" -m pytest -q -m gpu -rs tests/test_kernels_gpu.py tests/test_fused.py tests/test_blocked.py tests/test_bench.py

# --- compute-sanitizer ---------------------------------------------------------
SANITIZER=""
for candidate in "$(command -v compute-sanitizer 2>/dev/null)" \
    "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" \
    /usr/local/cuda/compute-sanitizer/compute-sanitizer \
    /usr/local/cuda-*/bin/compute-sanitizer; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
        SANITIZER=$candidate
        break
    fi
done

KERNEL_FILES="scores causal_mask softmax weighted_sum attention_fused"
if [ -z "$SANITIZER" ]; then
    skip compute-sanitizer "alat tidak ditemukan (ada di CUDA Toolkit; setel CUDA_HOME)"
else
    echo "compute-sanitizer: $SANITIZER"
    for file in $KERNEL_FILES; do
        [ -f "kernels/$file.cu" ] || { skip "sanitizer-$file" "kernels/$file.cu tidak ada"; continue; }
        for tool in memcheck racecheck; do
            # --error-exitcode: any report fails the step; the driver itself
            # exits 1 on a wrong result and 3 when the kernel is not written yet.
            # kns=: only this file's kernels (their names start with the file
            # name) are checked, not CuPy's own copy/reduction kernels.
            step "$tool-$file" "$SANITIZER" --tool "$tool" --error-exitcode 99 \
                --kernel-name "kns=$file" \
                "$PY" scripts/kernel_driver.py "$file" --backend cupy
        done
    done
fi

# --- Benchmark -----------------------------------------------------------------
if "$PY" -c "import atensi.bench" >/dev/null 2>&1; then
    step bench "$PY" -m atensi.bench --quick --json "$RESULTS_DIR/bench_gpu.json"
else
    skip bench "modul atensi.bench belum ada"
fi

echo
echo "Ringkasan ($RESULTS):"
cat "$RESULTS"
echo "$FAILED langkah gagal."
[ "$FAILED" -eq 0 ]
