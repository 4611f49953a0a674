"""Run CUDA C kernels on the CPU, with no GPU and no CUDA toolkit (only g++).

Usage (the call shape of ``cupy.RawModule`` / ``cupy.RawKernel``)::

    import numpy as np
    from atensi.cudacpu import RawModule

    mod = RawModule(path="kernels/softmax.cu")           # or RawModule(code=text, path="kernels/softmax.cu")
    k = mod.get_function("softmax_v1_shared")            # an extern "C" __global__ function
    k((T,), (256,), (S, A, np.int32(T)), shared_mem=0)   # grid, block, args tuple

* ``args``: NumPy arrays (C-contiguous, dtype matching the C pointer type,
  e.g. ``const float*`` -> float32; writable unless the pointer is const) and
  NumPy scalars matching the C type (``int`` -> ``np.int32``, ``float`` ->
  ``np.float32``, ``unsigned`` -> ``np.uint32``, ``long long`` -> ``np.int64``,
  ``double`` -> ``np.float64``). Bare Python int/float raise TypeError (CuPy
  would silently send 64-bit/double). The kernel writes into the arrays in place.
* ``grid``/``block``: int or tuple of up to 3 ints; GPU limits are enforced
  (LaunchConfigError). ``shared_mem``: bytes of ``extern __shared__``
  memory, at most ``k.max_dynamic_shared_size_bytes`` (48 KiB unless raised).
* ``mode="fibers"`` (default): blocks run in turn, a block's threads are
  fibers on one CPU thread, switched only at ``__syncthreads`` and warp
  functions -- deterministic; a barrier not reached by all threads of the
  block (or a warp function not reached by all lanes of the warp) raises
  BarrierDeadlockError naming kernel, blockIdx, threadIdx and the .cu line.
  ``mode="threads"``: one OS thread per CUDA thread (real concurrency, also
  detects deadlocks, but slow: a few ms per ``__syncthreads`` -- keep it small).
  Threads of different blocks never run concurrently in either mode, so a race
  *between blocks* on global memory is not detected.
* Compile errors raise CudaCpuError with g++'s text, pointing at the .cu
  file:line (the ``path`` given). Libraries are cached in
  ``$ATENSI_CACHE/cudacpu`` (default ``~/.cache/atensi/cudacpu``); the folder
  and every library are checked to be private (this user's, 0700) before a
  library is loaded, else a private temporary folder is used (see ``build``).
* Ctrl-C stops a launch between blocks (KeyboardInterrupt; the output is then
  incomplete). A launch of more than 2³¹ CUDA threads is refused
  (``ATENSI_CUDACPU_MAX_THREADS``), and a kernel whose local arrays do not fit
  a fiber's 256 KiB stack is refused when it is compiled.
* Supported in kernels: ``__global__ __device__ __forceinline__ __restrict__
  __shared__`` (static arrays and ``extern __shared__ T s[];``), ``dim3``,
  ``threadIdx blockIdx blockDim gridDim warpSize``, ``__syncthreads``,
  ``__shfl_sync/_up/_down/_xor`` (full mask), ``__ballot_sync __any_sync
  __all_sync __syncwarp``, ``atomicAdd`` etc., ``min/max``, the CUDA math
  intrinsics (``__expf rsqrtf __fdividef`` ...), ``INFINITY``
  (``#ifndef INFINITY`` guards are harmless), ``__int_as_float``, ``printf``.
  The macro ``__CUDACPU__`` is defined.

Sanitizers need their runtime preloaded (LD_PRELOAD), so they run in a child
process; loading a sanitized module here raises CudaCpuError saying so::

    from atensi.cudacpu import run_in_subprocess, run_python_in_subprocess
    res = run_in_subprocess(path="kernels/softmax.cu", kernel="softmax_v1_shared",
                            grid=(T,), block=(256,), args=(S, A, np.int32(T)),
                            sanitize="address")   # or "thread"; mode= as above
    res.check()   # SanitizerError carrying res.report unless clean; res.arrays: args after the launch

    # Any script: each RawModule(...) created there without explicit
    # mode=/sanitize= gets them (via ATENSI_CUDACPU_SANITIZE / _MODE).
    res = run_python_in_subprocess("from atensi import kernels; ...", sanitize="thread")
    res.check()

``sanitize="thread"`` alone runs real OS threads (``mode="threads"``, slow:
keep grids small). With ``mode="fibers"`` it is 5-10x faster and deterministic:
every CUDA thread is a ThreadSanitizer fiber ordered only by the barriers, so a
missing ``__syncthreads`` is reported as a data race just the same.
AddressSanitizer catches out-of-bounds accesses to argument arrays (each is
copied into an exactly-sized heap buffer for the launch), to ``__shared__``
arrays and to ``extern __shared__`` memory past ``shared_mem`` bytes.
Uninitialised ``extern __shared__`` memory reads as NaN (bytes 0xff).
"""

from .errors import BarrierDeadlockError, CudaCpuError, LaunchConfigError, SanitizerError
from .module import RawKernel, RawModule, build_library, raw_kernel
from .sanitizer import SubprocessResult, run_in_subprocess, run_python_in_subprocess, sanitizer_env

__all__ = [
    "BarrierDeadlockError",
    "CudaCpuError",
    "LaunchConfigError",
    "RawKernel",
    "RawModule",
    "SanitizerError",
    "SubprocessResult",
    "build_library",
    "raw_kernel",
    "run_in_subprocess",
    "run_python_in_subprocess",
    "sanitizer_env",
]
