"""Run CUDA C kernels on the CPU, with no GPU and no CUDA toolkit (only g++).

Which bug each mode catches or misses, and the differences from a GPU that
remain (FTZ, fast intrinsics, FMA contraction, > 2³¹ threads): README.md
beside this file (``src/atensi/cudacpu/README.md``).

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
  ``mode="shuffle"``: fibers, but between barriers the runnable threads resume
  in a random order seeded by ``RawModule(..., seed=)`` (default
  ``ATENSI_CUDACPU_SEED`` or 0; same seed, same order). Code that assumes the
  lanes of a warp run in lockstep, or that thread t-1 ran before thread t,
  gives seed-dependent (usually NaN, see below) results. The blocks, too,
  run in a seeded permutation of their order, so a kernel whose "last block"
  combines the others' partials without an atomic counter goes wrong.
  Threads of different blocks never run concurrently in any mode; a race
  *between blocks* on global memory is reported by ThreadSanitizer with
  ``mode="fibers"``, where no happens-before joins one block to the next.
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
  ``__shfl_sync/_up/_down/_xor`` (mask = every lane the warp has), ``__ballot_sync __any_sync
  __all_sync __syncwarp``, ``atomicAdd`` etc., ``min/max``, the CUDA math
  intrinsics (``__expf rsqrtf __fdividef`` ...), ``INFINITY``
  (``#ifndef INFINITY`` guards are harmless), ``__int_as_float``, ``printf``,
  ``float2/float4/int4/...``. The macro ``__CUDACPU__`` is defined.
* Tensor cores: ``nvcuda::wmma`` for TF32 m16n16k8 (``cuda_cpu_wmma.h``,
  no ``#include <mma.h>`` needed), warp-collective like the shuffles, with
  exact ``cvt.rna`` rounding; its NumPy twin is ``atensi.number_formats``.

Where a GPU fails, cudacpu fails too (tests/test_cudacpu_checks.py):

* A write past the end (or before the start) of an array argument raises
  OutOfBoundsWriteError naming the argument and the side, instead of damaging
  the Python heap: without AddressSanitizer every array is copied for the
  launch between guard bytes (``guards.py``), which are compared afterwards.
  ``sanitize="address"`` then gives the .cu line.

* Shared memory starts poisoned: every block begins with all its static
  ``__shared__`` arrays (and the ``extern __shared__`` buffer, at each launch)
  filled with 0xff bytes -- NaN as float, -1 as int -- so a read of an
  element the block never wrote shows up, and nothing carries over from the
  previous block.
* ``__launch_bounds__(N)`` is honoured: a block of more than N threads is
  refused with LaunchConfigError (on a GPU: cudaErrorLaunchOutOfResources,
  "too many resources requested for launch"); ``k.max_threads_per_block``
  reports N, as in CuPy.
* Warp functions see only the lanes that exist. In a partial last warp
  (block size not a multiple of 32) a mask naming lanes beyond the last one,
  e.g. the full mask 0xffffffff, is an error, and so is a shuffle that reads
  from such a lane; a GPU gives undefined values there.
* A ``float2/int2/uint2`` (8 bytes) or ``float4/int4/uint4/double2`` (16
  bytes) copied from or to an address that is not a multiple of its size --
  a vector load or store on a GPU -- is an error naming kernel, thread and
  (for loads) the .cu line, like cudaErrorMisalignedAddress. (Before, x86
  either crashed the interpreter or read the four floats.)
* Under ThreadSanitizer, in both modes, only ``__syncwarp`` and
  ``__syncthreads`` create happens-before between threads of a block;
  shuffles and votes exchange their operands and order no memory, so shared
  memory written before a shuffle and read by another lane after it is
  reported as a data race (``__syncwarp()`` belongs between them).

* ``cp.async`` (sm_80+): code built for the emulator (``#if defined(__CUDACPU__)``)
  calls ``cudacpu_cp_async(dst, src, cp_size, src_size)``,
  ``cudacpu_cp_async_commit()`` and ``cudacpu_cp_async_wait(n)``. A copy
  fills its destination with 0xff bytes (NaN) and is queued; commit closes a
  group; ``wait(n)`` completes every committed group but the newest n. A read
  of a stage still in flight reads NaN. Fused v2's pipeline runs this way.
* Alignment of every access: every sanitizer build (ASan, TSan) has
  UndefinedBehaviorSanitizer's ``-fsanitize=alignment``; a misaligned load,
  store or member access (an 8-byte scalar through a cast, a float4 through a
  reference) stops the kernel with its .cu line. A default build gets it with
  ``options=("-fsanitize=alignment",)`` (2-5x slower, so not by default).
* Resources (``resources.py``): with NVRTC importable, a module is also
  compiled for the modelled GPU (``options=("-arch=sm_80",)``, default sm_90),
  once, at the first launch that could be refused (more than 256 threads, or
  near the shared-memory limit), and a launch needing more than 64K registers
  per block, or more static + dynamic shared memory than the architecture
  allows, is refused (LaunchConfigError) as the GPU would refuse it.

Floating point -- what still differs from a GPU:

* FMA contraction. nvcc/NVRTC contract ``a * b + c`` into one fused
  multiply-add by default (``--fmad=true``: one rounding); g++ here does not
  (``-std=c++20`` means ``-ffp-contract=off``, and x86-64 without ``-mfma``
  has no FMA instruction), so sums of products can differ in the last bits.
  ``RawModule(..., options=("-ffp-contract=fast",))`` builds with
  ``-ffp-contract=fast -mfma`` (``-mfma`` only when this CPU has FMA, see
  ``build.cpu_has_fma()``), which rounds like the GPU's default; which
  products g++ and the GPU compiler fuse can still differ.
* Denormals (FTZ). CuPy compiles with ``-ftz=true``: on the GPU values below
  about 1,2e-38 become 0 in many float32 operations. cudacpu keeps IEEE
  denormals (gradual underflow).
* Fast intrinsics. ``__expf __logf __sinf __fdividef __powf`` ... are the
  exact libm functions here; on a GPU they are hardware approximations with a
  few ulp of error (``__fdividef`` returns 0 for huge divisors), and
  ``--use_fast_math`` (ignored here) turns ``expf`` etc. into them.
  ``rsqrtf`` is ``1 / sqrtf`` here, an approximation on the GPU. So compare a
  kernel with NumPy to a tolerance, never bit for bit across backends.

Profiler: every launch inside ``with atensi.cudacpu.profile() as prof:`` is
counted as Nsight Compute counts it (``prof.kernels[name]``: metric -> value,
``prof.sites``: per .cu line): shared-memory wavefronts and bank conflicts,
global sectors per request, FFMA/MUFU, barriers, shuffles, branch uniformity.
The model (phases of 64/128-bit accesses, what is and is not counted) is in
``profiling.py`` and ``cuda_cpu_profile.h``.

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
Uninitialised ``extern __shared__`` and static ``__shared__`` memory reads as
NaN (bytes 0xff). One AddressSanitizer run of the fused d128 kernel at a
ragged shape (T = 70, d_k = 65) is a test (test_cudacpu_checks.py).
"""

from .errors import (BarrierDeadlockError, CudaCpuError, LaunchConfigError, OutOfBoundsWriteError,
                     SanitizerError)
from .module import RawKernel, RawModule, build_library, raw_kernel
from .profiling import Profile, profile
from .sanitizer import SubprocessResult, run_in_subprocess, run_python_in_subprocess, sanitizer_env

__all__ = [
    "BarrierDeadlockError",
    "CudaCpuError",
    "LaunchConfigError",
    "OutOfBoundsWriteError",
    "Profile",
    "RawKernel",
    "RawModule",
    "SanitizerError",
    "SubprocessResult",
    "build_library",
    "profile",
    "raw_kernel",
    "run_in_subprocess",
    "run_python_in_subprocess",
    "sanitizer_env",
]
