// cuda_cpu.h -- run CUDA C kernels on the CPU (atensi.cudacpu).
//
// Included first by the translation unit that source.py generates:
//   #include "cuda_cpu.h"
//   #line 1 "kernels/softmax.cu"
//   <the .cu text, with `extern __shared__ T s[];` rewritten>
//   <one trampoline per __global__ kernel>
// Compiled with exactly one of -DCUDACPU_FIBERS or -DCUDACPU_THREADS
// (mode="shuffle" is fibers plus -DCUDACPU_SHUFFLE: a seeded random order).
//
// Execution model: blocks run one after another (so `__shared__` can be a
// plain `static`). Inside a block:
//   fibers  - every CUDA thread is a fiber on the calling OS thread; a thread
//             runs straight through to its next __syncthreads / warp function,
//             then the next one runs. Deterministic; a barrier that not all
//             threads reach is reported as a deadlock.
//   threads - every CUDA thread is a pthread; barriers use a mutex and
//             condition variables: real concurrency, for ThreadSanitizer too.
// The barrier bookkeeping (BlockSync) is shared by both modes. Under
// ThreadSanitizer in fibers mode each CUDA thread is a TSan fiber and only the
// barriers create happens-before (see CUDACPU_TSAN below).
#pragma once

#if defined(CUDACPU_FIBERS) == defined(CUDACPU_THREADS)
#error "cuda_cpu.h: definisikan tepat satu dari CUDACPU_FIBERS atau CUDACPU_THREADS"
#endif

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <initializer_list>
#include <utility>

#include <source_location>

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(CUDACPU_PROFILE) && !defined(CUDACPU_FIBERS)
#error "cuda_cpu.h: CUDACPU_PROFILE hanya untuk mode fibers"
#endif

// A profile build uses g++'s kernel-address instrumentation for its hooks
// (cuda_cpu_profile.h), not AddressSanitizer's runtime.
#if defined(__SANITIZE_ADDRESS__) && !defined(CUDACPU_PROFILE)
#define CUDACPU_ASAN 1
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if defined(__SANITIZE_THREAD__)
#define CUDACPU_TSAN 1
#include <sanitizer/tsan_interface.h>
// The runtime's own bookkeeping is not what ThreadSanitizer should check:
// in fibers mode its switches deliberately carry no happens-before.
#define CUDACPU_RT __attribute__((no_sanitize("thread")))
#elif defined(CUDACPU_PROFILE)
// The runtime's own accesses and branches are not the kernel's.
#define CUDACPU_RT __attribute__((no_sanitize_address, no_sanitize_coverage))
#else
#define CUDACPU_RT
#endif
#if defined(CUDACPU_PROFILE)
// Not counted as the kernel's accesses (the function records what the GPU does itself).
#define CUDACPU_PROF_OFF __attribute__((no_sanitize_address, no_sanitize_coverage))
// A vector copy is one 8- or 16-byte access: recorded at the caller's address,
// so the copy must stay a call of its own.
#define CUDACPU_PROF_VEC_ATTR __attribute__((noinline, no_sanitize_address, no_sanitize_coverage))
#define CUDACPU_PROF_VEC(p, n, store) \
  ::cudacpu::prof::access(reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)), nullptr, 0, (p), (n), (store))
#define CUDACPU_PROF_COUNT(c) ::cudacpu::prof::count(c)
#else
#define CUDACPU_PROF_OFF
#define CUDACPU_PROF_VEC_ATTR
#define CUDACPU_PROF_VEC(p, n, store) ((void)0)
#define CUDACPU_PROF_COUNT(c) ((void)0)
#endif

#if defined(CUDACPU_FIBERS) && (!defined(__x86_64__) || defined(CUDACPU_UCONTEXT))
#define CUDACPU_USE_UCONTEXT 1
#include <ucontext.h>
#endif

#define __CUDACPU__ 1
#define CUDACPU_EXPORT extern "C" __attribute__((visibility("default")))

// ---------------------------------------------------------------------------
// CUDA keywords
// ---------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __constant__
#define __managed__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
// Blocks run in turn and a block's threads share one address space, so one
// static copy per kernel is exactly CUDA's "one copy per block" (poisoned at
// every block start: see SharedReg).
#define __shared__ static

// ---------------------------------------------------------------------------
// Vector types
// ---------------------------------------------------------------------------
struct uint3 { unsigned int x, y, z; };
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

// A copy of a 16- or 8-byte vector (a vector load or store on a GPU) must
// come from / go to an address that is a multiple of its size, else the GPU
// stops with cudaErrorMisalignedAddress. The copy constructor takes the
// source line through std::source_location (a defaulted second parameter:
// still a copy constructor); the copy assignment cannot, so a misaligned
// store is reported without a line. Defined with the execution modes below.
namespace cudacpu {
[[noreturn]] inline void misaligned(const char* type, const void* p, unsigned align, bool store, const char* file,
                             unsigned line);
}
#if defined(CUDACPU_PROFILE)
namespace cudacpu::prof {
inline bool g_in_fiber = false;  // a CUDA thread (not the scheduler) is running
enum Counter : unsigned { kBarrier, kShfl, kVote, kSyncwarp, kMma, kBlocks, kCounters };
inline std::uint64_t g_count[kCounters] = {};
inline void count(unsigned c) { if (g_in_fiber) ++g_count[c]; }
inline void access(std::uintptr_t pc, const char* file, int line, const void* p, unsigned size, bool store,
                   unsigned extra = 0);
inline void block_begin();
inline void block_end(unsigned n);
}  // namespace cudacpu::prof
#endif
#define CUDACPU_VEC_CHECKED(N, A, BODY, CTOR_P, CTOR_I, COPY)                                          \
  struct alignas(A) N {                                                                             \
    BODY                                                                                            \
    N() = default;                                                                                  \
    constexpr N(CTOR_P) : CTOR_I {}                                                                 \
    CUDACPU_PROF_VEC_ATTR N(const N& o, std::source_location loc = std::source_location::current()) { \
      CUDACPU_PROF_VEC(&o, sizeof(N), false);                                                       \
      if (reinterpret_cast<std::uintptr_t>(&o) % (A))                                               \
        ::cudacpu::misaligned(#N, &o, A, false, loc.file_name(), loc.line());                       \
      COPY                                                                                          \
    }                                                                                               \
    CUDACPU_PROF_VEC_ATTR N& operator=(const N& o) {                                                \
      CUDACPU_PROF_VEC(&o, sizeof(N), false);                                                       \
      CUDACPU_PROF_VEC(this, sizeof(N), true);                                                      \
      if (reinterpret_cast<std::uintptr_t>(&o) % (A))                                               \
        ::cudacpu::misaligned(#N, &o, A, false, "", 0);                                             \
      if (reinterpret_cast<std::uintptr_t>(this) % (A))                                             \
        ::cudacpu::misaligned(#N, this, A, true, "", 0);                                            \
      COPY                                                                                          \
      return *this;                                                                                 \
    }                                                                                               \
  };
#define CUDACPU_COMMA ,
#define CUDACPU_VEC2(T, N, A)                                                                          \
  CUDACPU_VEC_CHECKED(N##2, A, T x CUDACPU_COMMA y;, T a CUDACPU_COMMA T b, x(a) CUDACPU_COMMA y(b),   \
                      x = o.x; y = o.y;)                                                             \
  inline N##2 make_##N##2(T x, T y) { return N##2(x, y); }
#define CUDACPU_VEC3(T, N) \
  struct N##3 { T x, y, z; }; \
  inline N##3 make_##N##3(T x, T y, T z) { return N##3{x, y, z}; }
#define CUDACPU_VEC4(T, N, A)                                                                          \
  CUDACPU_VEC_CHECKED(N##4, A, T x CUDACPU_COMMA y CUDACPU_COMMA z CUDACPU_COMMA w;,                   \
                      T a CUDACPU_COMMA T b CUDACPU_COMMA T c CUDACPU_COMMA T d,                       \
                      x(a) CUDACPU_COMMA y(b) CUDACPU_COMMA z(c) CUDACPU_COMMA w(d),                   \
                      x = o.x; y = o.y; z = o.z; w = o.w;)                                           \
  inline N##4 make_##N##4(T x, T y, T z, T w) { return N##4(x, y, z, w); }
CUDACPU_VEC2(float, float, 8)
CUDACPU_VEC3(float, float)
CUDACPU_VEC4(float, float, 16)
CUDACPU_VEC2(int, int, 8)
CUDACPU_VEC3(int, int)
CUDACPU_VEC4(int, int, 16)
CUDACPU_VEC2(unsigned int, uint, 8)
CUDACPU_VEC4(unsigned int, uint, 16)
CUDACPU_VEC2(double, double, 16)
inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }
#undef CUDACPU_VEC2
#undef CUDACPU_VEC3
#undef CUDACPU_VEC4
#undef CUDACPU_VEC_CHECKED
#undef CUDACPU_COMMA

// ---------------------------------------------------------------------------
// Math and bit intrinsics (NVRTC has no INFINITY; <cmath> defines it, so a
// kernel's `#ifndef INFINITY` guard is harmless here)
// ---------------------------------------------------------------------------
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __powf(float a, float b) { return std::pow(a, b); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }
inline float __int_as_float(int v) { return std::bit_cast<float>(v); }
inline int __float_as_int(float v) { return std::bit_cast<int>(v); }
inline float __uint_as_float(unsigned int v) { return std::bit_cast<float>(v); }
inline unsigned int __float_as_uint(float v) { return std::bit_cast<unsigned int>(v); }
inline double __longlong_as_double(long long v) { return std::bit_cast<double>(v); }
inline long long __double_as_longlong(double v) { return std::bit_cast<long long>(v); }
inline int __popc(unsigned int v) { return std::popcount(v); }
inline int __popcll(unsigned long long v) { return std::popcount(v); }
inline int __clz(int v) { return std::countl_zero(static_cast<unsigned int>(v)); }
inline int __ffs(int v) { return v == 0 ? 0 : std::countr_zero(static_cast<unsigned int>(v)) + 1; }
inline unsigned int __brev(unsigned int v) {
  unsigned int r = 0;
  for (int i = 0; i < 32; ++i) r |= ((v >> i) & 1u) << (31 - i);
  return r;
}
template <class T> inline T __ldg(const T* p) { return *p; }

// CUDA's min/max accept mixed arithmetic types; floats follow fminf/fmaxf.
template <class A, class B>
  requires(std::is_arithmetic_v<A> && std::is_arithmetic_v<B>)
inline std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<C>) return std::fmin(C(a), C(b));
  else return C(a) < C(b) ? C(a) : C(b);
}
template <class A, class B>
  requires(std::is_arithmetic_v<A> && std::is_arithmetic_v<B>)
inline std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<C>) return std::fmax(C(a), C(b));
  else return C(a) < C(b) ? C(b) : C(a);
}

// ---------------------------------------------------------------------------
// Atomics (GCC __atomic builtins: real atomics in threads mode, which
// ThreadSanitizer understands; <atomic> would double the header's parse time)
// ---------------------------------------------------------------------------
namespace cudacpu {
template <class T> using bits_of = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
// Read-modify-write by compare-and-swap on the bit pattern (works for floats).
template <class T, class F> inline T atomic_update(T* p, F f) {
  using B = bits_of<T>;
  B* q = reinterpret_cast<B*>(p);
  B old = __atomic_load_n(q, __ATOMIC_RELAXED);
  for (;;) {
    const T o = std::bit_cast<T>(old);
    if (__atomic_compare_exchange_n(q, &old, std::bit_cast<B>(static_cast<T>(f(o))), true, __ATOMIC_SEQ_CST,
                                    __ATOMIC_RELAXED))
      return o;
  }
}
template <class T> inline T atomic_add(T* p, T v) {
  if constexpr (std::is_integral_v<T>) return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
  else return atomic_update(p, [v](T o) { return o + v; });
}
template <class T> inline T atomic_exch(T* p, T v) {
  using B = bits_of<T>;
  return std::bit_cast<T>(__atomic_exchange_n(reinterpret_cast<B*>(p), std::bit_cast<B>(v), __ATOMIC_SEQ_CST));
}
template <class T> inline T atomic_cas(T* p, T expected, T desired) {
  __atomic_compare_exchange_n(p, &expected, desired, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
  return expected;  // the old value, as CUDA returns
}
}  // namespace cudacpu

inline int atomicAdd(int* p, int v) { return cudacpu::atomic_add(p, v); }
inline unsigned int atomicAdd(unsigned int* p, unsigned int v) { return cudacpu::atomic_add(p, v); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { return cudacpu::atomic_add(p, v); }
inline float atomicAdd(float* p, float v) { return cudacpu::atomic_add(p, v); }
inline double atomicAdd(double* p, double v) { return cudacpu::atomic_add(p, v); }
inline int atomicSub(int* p, int v) { return cudacpu::atomic_add(p, -v); }
inline unsigned int atomicSub(unsigned int* p, unsigned int v) { return cudacpu::atomic_add(p, 0u - v); }
inline int atomicExch(int* p, int v) { return cudacpu::atomic_exch(p, v); }
inline unsigned int atomicExch(unsigned int* p, unsigned int v) { return cudacpu::atomic_exch(p, v); }
inline unsigned long long atomicExch(unsigned long long* p, unsigned long long v) { return cudacpu::atomic_exch(p, v); }
inline float atomicExch(float* p, float v) { return cudacpu::atomic_exch(p, v); }
inline int atomicCAS(int* p, int c, int v) { return cudacpu::atomic_cas(p, c, v); }
inline unsigned int atomicCAS(unsigned int* p, unsigned int c, unsigned int v) { return cudacpu::atomic_cas(p, c, v); }
inline unsigned long long atomicCAS(unsigned long long* p, unsigned long long c, unsigned long long v) {
  return cudacpu::atomic_cas(p, c, v);
}
#define CUDACPU_MINMAX(T)                                                                         \
  inline T atomicMax(T* p, T v) { return cudacpu::atomic_update(p, [v](T o) { return o < v ? v : o; }); } \
  inline T atomicMin(T* p, T v) { return cudacpu::atomic_update(p, [v](T o) { return v < o ? v : o; }); }
CUDACPU_MINMAX(int)
CUDACPU_MINMAX(unsigned int)
CUDACPU_MINMAX(long long)
CUDACPU_MINMAX(unsigned long long)
#undef CUDACPU_MINMAX
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

// ---------------------------------------------------------------------------
// Runtime shared by both modes
// ---------------------------------------------------------------------------
namespace cudacpu {

constexpr unsigned kMaxThreads = 1024;
constexpr unsigned kWarp = 32;
constexpr unsigned kMaxWarps = kMaxThreads / kWarp;
// Largest dynamic shared memory a kernel may opt into on current GPUs (227 KiB).
constexpr std::size_t kMaxDynSmem = 227 * 1024;

enum Status : int { kOk = 0, kDeadlock = 1, kMisuse = 2, kRuntime = 3, kCancelled = 4 };

// Set by cudacpu_cancel() (Python, on KeyboardInterrupt); checked between blocks.
inline std::atomic<int> g_cancel{0};

// `extern __shared__ T s[];` is rewritten to a pointer at this buffer. Its
// address never changes, so the rewrite works at any scope.
alignas(256) inline unsigned char g_dyn_smem[kMaxDynSmem];

// ---- static __shared__ arrays ----------------------------------------------
// On a GPU a block's __shared__ memory starts with whatever the previous user
// left there. source.py follows every static `__shared__` declaration with a
// `static const SharedReg` that registers the variable the first time it is
// reached; every block then starts with all registered variables filled with
// 0xff bytes (NaN as float, -1 as int), so a read of an element the block
// never wrote shows up, and nothing carries over from the previous block.
struct SharedVar {
  volatile unsigned char* p;
  std::size_t n;
};
constexpr unsigned kMaxSharedVars = 1024;
inline SharedVar g_shared_vars[kMaxSharedVars];
inline unsigned g_shared_count = 0;
inline pthread_mutex_t g_shared_mx = PTHREAD_MUTEX_INITIALIZER;
// Volatile stores, not memset: ThreadSanitizer intercepts memset even here,
// and the poisoning is the runtime's write, not a CUDA thread's.
CUDACPU_RT inline void poison_bytes(volatile unsigned char* b, std::size_t n) {
  while (n && reinterpret_cast<std::uintptr_t>(b) % 8) { *b++ = 0xff; --n; }
  volatile std::uint64_t* w = reinterpret_cast<volatile std::uint64_t*>(b);
  for (; n >= 8; n -= 8) *w++ = ~std::uint64_t{0};
  b = reinterpret_cast<volatile unsigned char*>(w);
  while (n--) *b++ = 0xff;
}
inline std::size_t g_dyn_smem_len = 0;  // shared_mem bytes of the running launch
CUDACPU_RT inline void poison_shared() {
  for (unsigned i = 0; i < g_shared_count; ++i) poison_bytes(g_shared_vars[i].p, g_shared_vars[i].n);
  poison_bytes(g_dyn_smem, g_dyn_smem_len);  // extern __shared__ too: nothing outlives a block
}
struct SharedReg {
  CUDACPU_RT SharedReg(const volatile void* p, std::size_t n) {
    auto* b = const_cast<volatile unsigned char*>(static_cast<const volatile unsigned char*>(p));
    pthread_mutex_lock(&g_shared_mx);
    if (g_shared_count < kMaxSharedVars) g_shared_vars[g_shared_count++] = SharedVar{b, n};
    poison_bytes(b, n);  // the block that reaches it first starts poisoned too
    pthread_mutex_unlock(&g_shared_mx);
  }
};

inline dim3 g_grid_dim, g_block_dim;
inline const char* g_kernel = "";
inline void (*g_thunk)(void**) = nullptr;
inline void** g_args = nullptr;

// ---- error text handed back to Python -------------------------------------
inline char g_err[16384];
inline std::size_t g_err_len = 0;
// Copy of g_err made inside the launch lock, per calling thread: a concurrent
// launch from another Python thread cannot clear it before it is read.
inline thread_local char t_err[sizeof g_err];
CUDACPU_RT inline void err_clear() { g_err_len = 0; g_err[0] = '\0'; }
CUDACPU_RT __attribute__((format(printf, 1, 2))) inline void err_add(const char* fmt, ...) {
  if (g_err_len + 1 >= sizeof g_err) return;
  va_list ap;
  va_start(ap, fmt);
  int k = std::vsnprintf(g_err + g_err_len, sizeof g_err - g_err_len, fmt, ap);
  va_end(ap);
  if (k > 0) g_err_len += static_cast<std::size_t>(k);
  if (g_err_len >= sizeof g_err) g_err_len = sizeof g_err - 1;
}

CUDACPU_RT inline uint3 thread_index_of(unsigned lin) {
  const unsigned bx = g_block_dim.x, by = g_block_dim.y;
  return uint3{lin % bx, (lin / bx) % by, lin / (bx * by)};
}
CUDACPU_RT inline uint3 block_index_of(unsigned long long lin) {
  const unsigned long long gx = g_grid_dim.x, gy = g_grid_dim.y;
  return uint3{static_cast<unsigned>(lin % gx), static_cast<unsigned>((lin / gx) % gy),
               static_cast<unsigned>(lin / (gx * gy))};
}

// ---- per-block shared memory under ThreadSanitizer --------------------------
// On a GPU nothing orders one block's accesses before another's. Under
// ThreadSanitizer every block therefore gets fresh shared memory (newly
// mapped pages: their access history starts empty)
// and fresh barrier sync objects, and no happens-before edge joins one block
// to the next: a "last block" that reads the others' partials without an
// atomic counter is reported as a data race. source.py turns each static
// `__shared__ T x[N];` in a function into `T cudacpu_shvar_x[N]; auto& x =
// shared_ref(cudacpu_shvar_x, id);`: the variable itself in other builds.
#if defined(CUDACPU_TSAN)
constexpr std::size_t kBlockStatic = 256 * 1024;  // static __shared__ of one block
constexpr std::size_t kBlockSync = 2 + 2 * kMaxWarps;  // barrier objects (two per barrier)
inline unsigned char* g_block_mem = nullptr;      // this block's: static, dynamic, sync
inline std::atomic<std::size_t> g_slot_off[kMaxSharedVars];  // offset + 1 of each variable, 0: none yet
inline std::atomic<std::size_t> g_slot_top{0};
extern "C" void AnnotateIgnoreReadsBegin(const char* file, int line);
extern "C" void AnnotateIgnoreReadsEnd(const char* file, int line);
extern "C" void AnnotateIgnoreWritesBegin(const char* file, int line);
extern "C" void AnnotateIgnoreWritesEnd(const char* file, int line);
[[noreturn]] inline void abort_thread(int status);
CUDACPU_RT inline unsigned char* block_slot(unsigned id, std::size_t size) {
  std::size_t off = id < kMaxSharedVars ? g_slot_off[id].load(std::memory_order_relaxed) : 0;
  if (off == 0 && id < kMaxSharedVars) {  // relaxed only: no happens-before between threads
    const std::size_t mine = g_slot_top.fetch_add((size + 255) / 256 * 256, std::memory_order_relaxed) + 1;
    std::size_t expected = 0;
    off = g_slot_off[id].compare_exchange_strong(expected, mine, std::memory_order_relaxed) ? mine : expected;
  }
  if (off == 0 || off - 1 + size > kBlockStatic) {
    err_add("Shared memory statis kernel '%s' melebihi %zu byte per block (batas cudacpu di bawah "
            "ThreadSanitizer).", g_kernel, kBlockStatic);
    abort_thread(kRuntime);
  }
  return g_block_mem + off - 1;
}
// A new block: unmap the old memory and map new, poisoned. ThreadSanitizer
// drops the shadow (access history) and the sync objects of unmapped pages,
// so nothing of the last block is seen by this one. (Freeing heap memory
// would not do: TSan resets at most 1 KiB of shadow on an allocation.)
constexpr std::size_t kBlockBytes = (kBlockStatic + kMaxDynSmem + 4096 + 65535) / 65536 * 65536;
CUDACPU_RT inline bool fresh_block_memory(std::size_t dyn_bytes) {
  AnnotateIgnoreReadsBegin(__FILE__, __LINE__);
  AnnotateIgnoreWritesBegin(__FILE__, __LINE__);
  if (g_block_mem) munmap(g_block_mem, kBlockBytes);
  void* p = mmap(nullptr, kBlockBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  g_block_mem = p == MAP_FAILED ? nullptr : static_cast<unsigned char*>(p);
  AnnotateIgnoreWritesEnd(__FILE__, __LINE__);
  AnnotateIgnoreReadsEnd(__FILE__, __LINE__);
  if (!g_block_mem) return false;
  poison_bytes(g_block_mem, g_slot_top.load(std::memory_order_relaxed));
  poison_bytes(g_block_mem + kBlockStatic, dyn_bytes);
  return true;
}
CUDACPU_RT inline char* block_sync_object(std::size_t i) {
  return reinterpret_cast<char*>(g_block_mem + kBlockStatic + kMaxDynSmem) + i;
}
#endif
template <class T> inline T& shared_ref(T& var, unsigned id) {
#if defined(CUDACPU_TSAN)
  (void)var;
  return *reinterpret_cast<T*>(block_slot(id, sizeof(T)));
#else
  (void)id;
  return var;
#endif
}
inline unsigned char* dyn_smem() {
#if defined(CUDACPU_TSAN)
  return g_block_mem + kBlockStatic;
#else
  return g_dyn_smem;
#endif
}

// ---- barrier bookkeeping ----------------------------------------------------
struct Site {
  const char* file;
  int line;
  const char* what;  // "__syncthreads()", "__shfl_down_sync()", ...
};
enum class St : unsigned char { Ready, AtSync, AtWarp, Done };
enum class Op : unsigned char { Sync, Idx, Up, Down, Xor, Ballot, Any, All };

struct Slot {
  St st;
  Op op;
  Site site;
  unsigned mask;
  int arg;
  int width;
  std::uint64_t val;
  std::uint64_t res;
};

// Mode hooks: wake the threads of one warp / of the whole block.
inline void wake_warp(unsigned w);
inline void async_reset(unsigned t);  // cp.async queue of thread t: empty at kernel entry
inline void wake_all();

// Tracks where each thread of the running block stands. Single-threaded in
// fibers mode; called under one mutex in threads mode.
struct BlockSync {
  unsigned n = 0, running = 0, at_sync = 0, done = 0;
  unsigned sync_epoch = 0;  // barriers released so far in this block
  int failed = kOk;
  uint3 block{0, 0, 0};
  unsigned warp_arrived[kMaxWarps];
  unsigned warp_epoch[kMaxWarps];
  Slot slot[kMaxThreads];

  CUDACPU_RT void begin(unsigned nthreads, uint3 b) {
    n = nthreads;
    running = n;
    at_sync = done = 0;
    failed = kOk;
    block = b;
    for (unsigned w = 0; w < kMaxWarps; ++w) warp_arrived[w] = 0;
    for (unsigned t = 0; t < n; ++t) slot[t].st = St::Ready;
  }
  CUDACPU_RT unsigned warp_size(unsigned w) const { return n - w * kWarp < kWarp ? n - w * kWarp : kWarp; }

  CUDACPU_RT void arrive_sync(unsigned t, Site s) {
    slot[t].st = St::AtSync;
    slot[t].site = s;
    --running;
    ++at_sync;
    settle();
  }
  CUDACPU_RT void arrive_warp(unsigned t, Site s, Op op, unsigned mask, std::uint64_t val, int arg, int width) {
    Slot& sl = slot[t];
    sl.st = St::AtWarp;
    sl.site = s;
    sl.op = op;
    sl.mask = mask;
    sl.val = val;
    sl.arg = arg;
    sl.width = width;
    --running;
    const unsigned w = t / kWarp;
    if (++warp_arrived[w] == warp_size(w)) complete_warp(w);
    settle();
  }
  CUDACPU_RT void finish(unsigned t) {
    slot[t].st = St::Done;
    --running;
    ++done;
    settle();
  }

  // Everyone blocked: either the whole block waits at one __syncthreads
  // (release it) or nobody can ever move again (deadlock).
  CUDACPU_RT void settle() {
    if (failed || running > 0 || done == n) return;
    if (at_sync == n) {
      bool same = true;
      for (unsigned t = 1; t < n && same; ++t) same = same_site(slot[t].site, slot[0].site);
      if (same) {
        for (unsigned t = 0; t < n; ++t) slot[t].st = St::Ready;
        running = n;
        at_sync = 0;
        ++sync_epoch;
        wake_all();
        return;
      }
    }
    report_deadlock();
  }

  CUDACPU_RT static bool same_site(const Site& a, const Site& b) {
    return a.line == b.line && (a.file == b.file || std::strcmp(a.file, b.file) == 0) &&
           (a.what == b.what || std::strcmp(a.what, b.what) == 0);
  }

  CUDACPU_RT void complete_warp(unsigned w) {
    const unsigned lo = w * kWarp, m = warp_size(w);
    const unsigned full = m == kWarp ? 0xffffffffu : ((1u << m) - 1u);
    for (unsigned i = 1; i < m; ++i) {
      if (!same_site(slot[lo + i].site, slot[lo].site) || slot[lo + i].op != slot[lo].op) {
        running = 0;  // these lanes can never meet: report as a deadlock
        report_deadlock();
        return;
      }
    }
    for (unsigned i = 0; i < m; ++i) {
      const Slot& s = slot[lo + i];
      const int wd = s.width;
      if (s.mask & ~full) {
        fail_misuse(lo + i, "mask %#x menyebut lane yang tidak ada: warp ini hanya punya %u lane "
                    "(jumlah thread block bukan kelipatan 32), jadi mask untuk semua lane-nya adalah %#x. "
                    "Di GPU hasilnya tak terdefinisi (compute-sanitizer --tool synccheck melaporkannya). "
                    "Pakai jumlah thread kelipatan 32, atau mask %#x.", s.mask, m, full, full);
        return;
      }
      if ((s.mask & full) != full) {
        fail_misuse(lo + i, "mask %#x tidak mencakup semua lane warp ini (%#x). cudacpu hanya mendukung "
                    "mask penuh 0xffffffff: semua lane warp ikut serta.", s.mask, full);
        return;
      }
      if (wd < 1 || wd > 32 || (wd & (wd - 1)) != 0) {
        fail_misuse(lo + i, "width=%d tidak sah; width harus pangkat dua antara 1 dan 32.", wd);
        return;
      }
    }
    std::uint32_t ballot = 0;
    for (unsigned i = 0; i < m; ++i) ballot |= (slot[lo + i].val != 0 ? 1u : 0u) << i;
    for (unsigned i = 0; i < m; ++i) {
      Slot& s = slot[lo + i];
      const unsigned wd = static_cast<unsigned>(s.width);
      const unsigned seg = i / wd * wd;  // first lane of this lane's segment
      long src = i;
      switch (s.op) {
        case Op::Idx: src = seg + ((s.arg % static_cast<int>(wd)) + wd) % wd; break;
        case Op::Up: src = (i - seg) >= static_cast<unsigned>(s.arg) ? long(i) - s.arg : long(i); break;
        case Op::Down: src = (i - seg) + static_cast<unsigned>(s.arg) < wd ? long(i) + s.arg : long(i); break;
        case Op::Xor: {
          const long x = long(i ^ static_cast<unsigned>(s.arg));
          src = x < long(seg + wd) ? x : long(i);  // later segments: own value, as on a GPU
          break;
        }
        default: break;
      }
      if (src < 0 || src >= long(m)) {  // a lane the partial last warp does not have
        fail_misuse(lo + i, "lane %u membaca dari lane %ld, padahal warp ini hanya punya %u lane "
                    "(jumlah thread block bukan kelipatan 32). Di GPU nilai itu tak terdefinisi.",
                    i, src, m);
        return;
      }
      switch (s.op) {
        case Op::Ballot: s.res = ballot; break;
        case Op::Any: s.res = ballot != 0; break;
        case Op::All: s.res = ballot == full; break;
        case Op::Sync: s.res = 0; break;
        default: s.res = slot[lo + src].val; break;
      }
    }
    for (unsigned i = 0; i < m; ++i) slot[lo + i].st = St::Ready;
    running += m;
    warp_arrived[w] = 0;
    ++warp_epoch[w];
    wake_warp(w);
  }

  // ---- messages ----
  CUDACPU_RT void put_thread(unsigned lin) const {
    const uint3 t = thread_index_of(lin);
    if (g_block_dim.y == 1 && g_block_dim.z == 1) err_add("%u", t.x);
    else err_add("(%u,%u,%u)", t.x, t.y, t.z);
  }
  CUDACPU_RT bool same_state(unsigned a, unsigned b) const {
    const Slot &x = slot[a], &y = slot[b];
    if (x.st != y.st) return false;
    if (x.st == St::AtSync || x.st == St::AtWarp) return same_site(x.site, y.site);
    return true;
  }
  CUDACPU_RT void describe_group(unsigned first) const {
    const Slot& s = slot[first];
    unsigned count = 0, ranges = 0;
    const bool one_d = g_block_dim.y == 1 && g_block_dim.z == 1;
    err_add("  - threadIdx%s ", one_d ? ".x" : "");
    for (unsigned t = first; t < n;) {
      if (!same_state(t, first)) { ++t; continue; }
      unsigned e = t;
      while (e + 1 < n && same_state(e + 1, first)) ++e;
      count += e - t + 1;
      if (ranges < 6) {
        if (ranges) err_add(", ");
        put_thread(t);
        if (e > t) { err_add(e == t + 1 ? ", " : "\xE2\x80\xA6"); put_thread(e); }
      } else if (ranges == 6) {
        err_add(", \xE2\x80\xA6");
      }
      ++ranges;
      t = e + 1;
    }
    err_add(" (%u thread): ", count);
    switch (s.st) {
      case St::Done: err_add("sudah keluar dari kernel (return)\n"); break;
      case St::AtSync:
      case St::AtWarp: err_add("menunggu di %s, %s:%d\n", s.site.what, s.site.file, s.site.line); break;
      case St::Ready: err_add("masih berjalan\n"); break;
    }
  }
  CUDACPU_RT void report_deadlock() {
    failed = kDeadlock;
    bool any_done = false, any_sync = false, any_warp = false, sync_differs = false;
    for (unsigned t = 0; t < n; ++t) {
      any_done |= slot[t].st == St::Done;
      any_warp |= slot[t].st == St::AtWarp;
      if (slot[t].st == St::AtSync) {
        if (any_sync && !same_site(slot[t].site, first_sync_site())) sync_differs = true;
        any_sync = true;
      }
    }
    err_clear();
    err_add("Deadlock di kernel '%s', blockIdx (%u,%u,%u), blockDim (%u,%u,%u): ", g_kernel, block.x,
            block.y, block.z, g_block_dim.x, g_block_dim.y, g_block_dim.z);
    if (any_warp)
      err_add("sebuah fungsi warp (shuffle/vote/__syncwarp) tidak dicapai bersama oleh semua lane "
              "dalam warp-nya.\n");
    else if (any_sync && any_done)
      err_add("sebagian thread menunggu di __syncthreads(), sebagian lain sudah keluar dari kernel. "
              "Biasanya __syncthreads() ada di dalam cabang if atau setelah `return` yang tidak "
              "dilalui semua thread.\n");
    else if (sync_differs)
      err_add("thread-thread dalam block ini menunggu di __syncthreads() yang berbeda.\n");
    else
      err_add("tidak ada thread yang bisa melanjutkan.\n");
    bool seen[kMaxThreads] = {};
    for (unsigned t = 0; t < n; ++t) {
      if (seen[t]) continue;
      for (unsigned u = t; u < n; ++u)
        if (same_state(u, t)) seen[u] = true;
      describe_group(t);
    }
    err_add("Di GPU kernel seperti ini macet (hang) atau hasilnya tak terdefinisi: setiap "
            "__syncthreads() harus dicapai oleh semua thread dalam block, dan setiap fungsi warp "
            "oleh semua lane dalam warp.");
  }
  CUDACPU_RT const Site& first_sync_site() const {
    for (unsigned t = 0; t < n; ++t)
      if (slot[t].st == St::AtSync) return slot[t].site;
    return slot[0].site;
  }
  CUDACPU_RT __attribute__((format(printf, 3, 4))) void fail_misuse(unsigned lin, const char* fmt, ...) {
    failed = kMisuse;
    err_clear();
    const Slot& s = slot[lin];
    err_add("Pemakaian %s yang tidak didukung di kernel '%s' (%s:%d), blockIdx (%u,%u,%u), thread ",
            s.site.what, g_kernel, s.site.file, s.site.line, block.x, block.y, block.z);
    put_thread(lin);
    err_add(": ");
    va_list ap;
    va_start(ap, fmt);
    if (g_err_len + 1 < sizeof g_err) {
      int k = std::vsnprintf(g_err + g_err_len, sizeof g_err - g_err_len, fmt, ap);
      if (k > 0) g_err_len += static_cast<std::size_t>(k);
      if (g_err_len >= sizeof g_err) g_err_len = sizeof g_err - 1;
    }
    va_end(ap);
  }
};

inline BlockSync g_sync;

template <class T> inline std::uint64_t to_bits(T v) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "warp shuffle: tipe maksimal 8 byte");
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof(T));
  return b;
}
template <class T> inline T from_bits(std::uint64_t b) {
  T v;
  std::memcpy(&v, &b, sizeof(T));
  return v;
}

}  // namespace cudacpu

// ---------------------------------------------------------------------------
// Fibers mode
// ---------------------------------------------------------------------------
#if defined(CUDACPU_FIBERS)
namespace cudacpu {

inline uint3 g_tid, g_bid;
inline unsigned g_cur = 0;  // linear index of the fiber that is running
inline uint3 g_tids[kMaxThreads];

#if defined(CUDACPU_USE_UCONTEXT)
struct Ctx { ucontext_t uc; };
CUDACPU_RT inline void ctx_raw_switch(Ctx& from, Ctx& to) { swapcontext(&from.uc, &to.uc); }
inline void (*g_entry)(void*) = nullptr;
CUDACPU_RT inline void ctx_trampoline(unsigned hi, unsigned lo) {
  g_entry(reinterpret_cast<void*>((static_cast<std::uintptr_t>(hi) << 32) | lo));
}
CUDACPU_RT inline void ctx_init(Ctx& c, char* lo, std::size_t size, void (*fn)(void*), void* arg, Ctx& link) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = lo;
  c.uc.uc_stack.ss_size = size;
  c.uc.uc_link = &link.uc;
  g_entry = fn;
  const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(arg);
  makecontext(&c.uc, reinterpret_cast<void (*)()>(&ctx_trampoline), 2, static_cast<unsigned>(a >> 32),
              static_cast<unsigned>(a & 0xffffffffu));
}
#else
// x86-64 System V: save the callee-saved registers on the old stack, swap
// stack pointers, pop them from the new one. No signal-mask syscall, unlike
// swapcontext, so a switch costs a few nanoseconds.
extern "C" void cudacpu_switch_ctx(void** save_sp, void* new_sp);
extern "C" void cudacpu_fiber_boot();
asm(R"(
  .text
  .p2align 4
  .globl cudacpu_switch_ctx
  .hidden cudacpu_switch_ctx
  .type cudacpu_switch_ctx, @function
cudacpu_switch_ctx:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size cudacpu_switch_ctx, .-cudacpu_switch_ctx

  .p2align 4
  .globl cudacpu_fiber_boot
  .hidden cudacpu_fiber_boot
  .type cudacpu_fiber_boot, @function
cudacpu_fiber_boot:
  movq %r13, %rdi
  callq *%r12
  ud2
  .size cudacpu_fiber_boot, .-cudacpu_fiber_boot
)");
struct Ctx { void* sp; };
CUDACPU_RT inline void ctx_raw_switch(Ctx& from, Ctx& to) { cudacpu_switch_ctx(&from.sp, to.sp); }
CUDACPU_RT inline void ctx_init(Ctx& c, char* lo, std::size_t size, void (*fn)(void*), void* arg, Ctx&) {
  const std::uintptr_t top = (reinterpret_cast<std::uintptr_t>(lo) + size) & ~std::uintptr_t{15};
  void** sp = reinterpret_cast<void**>(top - 7 * sizeof(void*));
  sp[0] = nullptr;                                             // r15
  sp[1] = nullptr;                                             // r14
  sp[2] = arg;                                                 // r13 -> first argument
  sp[3] = reinterpret_cast<void*>(fn);                         // r12 -> called by boot
  sp[4] = nullptr;                                             // rbx
  sp[5] = nullptr;                                             // rbp: ends frame-pointer walks
  sp[6] = reinterpret_cast<void*>(&cudacpu_fiber_boot);        // return address
  c.sp = sp;
}
#endif

inline Ctx g_sched;
inline Ctx g_fib[kMaxThreads];

// Stacks: one mmap for all fibers, kept between launches, a guard page under
// each stack so an overflow faults instead of corrupting a neighbour.
#if defined(CUDACPU_ASAN)
constexpr std::size_t kStackSize = 1024 * 1024;
#else
constexpr std::size_t kStackSize = 256 * 1024;
#endif
inline char* g_stacks = nullptr;
inline unsigned g_stack_count = 0;
inline std::size_t g_page = 4096;
CUDACPU_RT inline std::size_t stack_stride() { return kStackSize + g_page; }
CUDACPU_RT inline char* stack_lo(unsigned t) { return g_stacks + t * stack_stride() + g_page; }

CUDACPU_RT inline bool ensure_stacks(unsigned n) {
  if (n <= g_stack_count) return true;
  if (g_stacks) munmap(g_stacks, g_stack_count * stack_stride());
  g_stacks = nullptr;
  g_stack_count = 0;
  g_page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, n * stack_stride(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) return false;
  g_stacks = static_cast<char*>(p);
  g_stack_count = n;
  for (unsigned t = 0; t < n; ++t) mprotect(g_stacks + t * stack_stride(), g_page, PROT_NONE);
  return true;
}

#if defined(CUDACPU_ASAN)
// AddressSanitizer must be told which stack is live after each switch.
inline const void* g_main_bottom = nullptr;
inline std::size_t g_main_size = 0;
inline const void* g_prev_bottom = nullptr;
inline std::size_t g_prev_size = 0;
inline void* g_fake_sched = nullptr;
inline void* g_fake_fib[kMaxThreads];
#endif

#if defined(CUDACPU_TSAN)
// ThreadSanitizer sees each CUDA thread as a fiber of its own. Switches carry
// no happens-before; the barriers add exactly CUDA's: what a thread did before
// a __syncthreads (warp function) happens before what any thread of the block
// (warp) does after it. Two objects per barrier, by parity of its count, so a
// thread already past barrier k cannot hand its later writes to a thread still
// waking from barrier k. Blocks: nothing joins one block to another (as on a
// GPU); every block has new TSan fibers, new shared memory and new barrier
// objects (fresh_block_memory). The launcher acquires what every thread
// released when it returned (g_hb_done), to read the outputs.
inline void* g_tsan_main = nullptr;
inline void* g_tsan_fib[kMaxThreads];
inline bool g_tsan_fibers_live = false;
inline char g_hb_done;
CUDACPU_RT inline void tsan_new_fibers(unsigned n) {
  for (unsigned t = 0; t < n; ++t) g_tsan_fib[t] = __tsan_create_fiber(0);
  g_tsan_fibers_live = true;
}
CUDACPU_RT inline void tsan_end_fibers(unsigned n) {
  if (!g_tsan_fibers_live) return;
  for (unsigned t = 0; t < n; ++t) __tsan_destroy_fiber(g_tsan_fib[t]);
  g_tsan_fibers_live = false;
}
#endif

CUDACPU_RT inline void switch_to_fiber(unsigned t) {
#if defined(CUDACPU_ASAN)
  __sanitizer_start_switch_fiber(&g_fake_sched, stack_lo(t), kStackSize);
#endif
#if defined(CUDACPU_TSAN)
  __tsan_switch_to_fiber(g_tsan_fib[t], __tsan_switch_to_fiber_no_sync);
#endif
#if defined(CUDACPU_PROFILE)
  prof::g_in_fiber = true;
#endif
  ctx_raw_switch(g_sched, g_fib[t]);
#if defined(CUDACPU_PROFILE)
  prof::g_in_fiber = false;
#endif
#if defined(CUDACPU_ASAN)
  __sanitizer_finish_switch_fiber(g_fake_sched, &g_prev_bottom, &g_prev_size);
#endif
}

CUDACPU_RT inline void yield_to_scheduler() {
  const unsigned t = g_cur;
#if defined(CUDACPU_ASAN)
  __sanitizer_start_switch_fiber(&g_fake_fib[t], g_main_bottom, g_main_size);
#endif
#if defined(CUDACPU_TSAN)
  __tsan_switch_to_fiber(g_tsan_main, __tsan_switch_to_fiber_no_sync);
#endif
  ctx_raw_switch(g_fib[t], g_sched);
#if defined(CUDACPU_ASAN)
  __sanitizer_finish_switch_fiber(g_fake_fib[t], &g_prev_bottom, &g_prev_size);
#endif
}

CUDACPU_RT inline void fiber_main(void*) {
#if defined(CUDACPU_ASAN)
  __sanitizer_finish_switch_fiber(nullptr, &g_main_bottom, &g_main_size);
#endif
  async_reset(g_cur);
  g_thunk(g_args);
  const unsigned t = g_cur;
#if defined(CUDACPU_TSAN)
  __tsan_release(&g_hb_done);
#endif
  g_sync.finish(t);
#if defined(CUDACPU_ASAN)
  __sanitizer_start_switch_fiber(nullptr, g_main_bottom, g_main_size);  // this fiber ends
#endif
#if defined(CUDACPU_TSAN)
  __tsan_switch_to_fiber(g_tsan_main, __tsan_switch_to_fiber_no_sync);
#endif
  ctx_raw_switch(g_fib[t], g_sched);
  __builtin_unreachable();
}

inline void wake_warp(unsigned) {}
inline void wake_all() {}

inline const uint3& cur_thread_idx() { return g_tid; }
inline const uint3& cur_block_idx() { return g_bid; }

CUDACPU_RT inline void sync_threads(const char* file, int line) {
#if defined(CUDACPU_TSAN)
  char* hb = block_sync_object(g_sync.sync_epoch & 1);
  __tsan_release(hb);
#endif
  CUDACPU_PROF_COUNT(prof::kBarrier);
  g_sync.arrive_sync(g_cur, Site{file, line, "__syncthreads()"});
  yield_to_scheduler();
#if defined(CUDACPU_TSAN)
  __tsan_acquire(hb);
#endif
}
// Only __syncwarp orders memory between the lanes of a warp; shuffles and
// votes exchange their operands and nothing else (as on a GPU, where a lane's
// earlier stores need not be visible to the others after a shuffle).
CUDACPU_RT inline std::uint64_t warp_op(const char* file, int line, const char* what, Op op, unsigned mask,
                                        std::uint64_t val, int arg, int width) {
#if defined(CUDACPU_TSAN)
  const unsigned w = g_cur / kWarp;
  char* hb = block_sync_object(2 + 2 * w + (g_sync.warp_epoch[w] & 1));
  if (op == Op::Sync) __tsan_release(hb);
#endif
  CUDACPU_PROF_COUNT(op == Op::Sync ? prof::kSyncwarp
                     : (op == Op::Ballot || op == Op::Any || op == Op::All) ? prof::kVote : prof::kShfl);
  g_sync.arrive_warp(g_cur, Site{file, line, what}, op, mask, val, arg, width);
  yield_to_scheduler();
#if defined(CUDACPU_TSAN)
  if (op == Op::Sync) __tsan_acquire(hb);
#endif
  return g_sync.slot[g_cur].res;
}

// A CUDA thread that must stop at once (misaligned vector access): record
// the error and hand control back to the scheduler for good; run_grid gives
// the abandoned stacks back.
[[noreturn]] CUDACPU_RT inline void abort_thread(int status) {
  g_sync.failed = status;
  yield_to_scheduler();
  __builtin_unreachable();
}

#if defined(CUDACPU_SHUFFLE)
// Schedule shuffling: each round resumes the runnable threads in a random
// order (seeded: the same seed gives the same order), so code that assumes
// the lanes of a warp run in lockstep, or that thread t-1 ran before thread t,
// gives different results from one seed to the next.
inline unsigned long long g_seed = 0;
inline unsigned long long g_rng = 0;
CUDACPU_RT inline unsigned long long next_random() {  // splitmix64
  unsigned long long z = (g_rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
#endif

// The b-th block to run. In shuffle mode a seeded permutation of the blocks
// (no table: a bijection on the next power of two -- odd multiply, xor-shift,
// add, each invertible -- applied again until the value is in range), so a
// kernel that assumes block k runs after blocks 0..k-1 (a "last block" that
// combines the others' partials without an atomic counter) sees them missing.
CUDACPU_RT inline unsigned long long block_order(unsigned long long b, unsigned long long count) {
#if defined(CUDACPU_SHUFFLE)
  if (count < 2) return b;
  const unsigned bits = 64 - static_cast<unsigned>(__builtin_clzll(count - 1));
  const unsigned long long mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  unsigned long long key = g_seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
  unsigned long long keys[6];
  for (auto& k : keys) {
    key = (key ^ (key >> 29)) * 0xbf58476d1ce4e5b9ull + 0x94d049bb133111ebull;
    k = key;
  }
  do {
    for (int r = 0; r < 3; ++r) {
      b = (b * (keys[2 * r] | 1)) & mask;
      b ^= b >> (bits / 2 + 1);
      b = (b + keys[2 * r + 1]) & mask;
    }
  } while (b >= count);
  return b;
#else
  (void)count;
  return b;
#endif
}

// Runs the blocks in turn (in index order, or permuted in shuffle mode); in
// each, resumes every runnable fiber in index order until all have returned.
// BlockSync decides who is runnable.
CUDACPU_RT inline int run_blocks(unsigned n) {
  const unsigned long long blocks =
      static_cast<unsigned long long>(g_grid_dim.x) * g_grid_dim.y * g_grid_dim.z;
  for (unsigned long long b = 0; b < blocks; ++b) {
    if (g_cancel.load(std::memory_order_relaxed)) {
      err_add("Peluncuran kernel '%s' dibatalkan (KeyboardInterrupt) sebelum block ke-%llu dari %llu.",
              g_kernel, b, blocks);
      return kCancelled;
    }
    g_bid = block_index_of(block_order(b, blocks));
    g_sync.begin(n, g_bid);
    poison_shared();
#if defined(CUDACPU_PROFILE)
    prof::block_begin();
#endif
#if defined(CUDACPU_TSAN)
    tsan_end_fibers(n);
    // New fibers on new stacks: the old stacks' history would be a race between blocks.
    munmap(g_stacks, g_stack_count * stack_stride());
    g_stacks = nullptr;
    g_stack_count = 0;
    if (!ensure_stacks(n) || !fresh_block_memory(g_dyn_smem_len)) {
      err_add("Gagal menyiapkan stack dan shared memory block (mmap).");
      return kRuntime;
    }
    tsan_new_fibers(n);
#endif
    for (unsigned t = 0; t < n; ++t) ctx_init(g_fib[t], stack_lo(t), kStackSize, &fiber_main, nullptr, g_sched);
#if defined(CUDACPU_SHUFFLE)
    g_rng = g_seed * 0x2545f4914f6cdd1dull + b;
    static unsigned order[kMaxThreads];
#endif
    while (g_sync.done < n) {
#if defined(CUDACPU_SHUFFLE)
      unsigned ready = 0;
      for (unsigned t = 0; t < n; ++t)
        if (g_sync.slot[t].st == St::Ready) order[ready++] = t;
      for (unsigned i = ready; i > 1; --i) {
        const unsigned j = static_cast<unsigned>(next_random() % i);
        std::swap(order[i - 1], order[j]);
      }
      for (unsigned i = 0; i < ready; ++i) {
        const unsigned t = order[i];
#else
      for (unsigned t = 0; t < n; ++t) {
        if (g_sync.slot[t].st != St::Ready) continue;
#endif
        g_cur = t;
        g_tid = g_tids[t];
        switch_to_fiber(t);
        if (g_sync.failed) return g_sync.failed;
      }
    }
#if defined(CUDACPU_PROFILE)
    prof::block_end(n);
#endif
  }
  return kOk;
}

CUDACPU_RT inline int run_grid() {
  const unsigned n = g_block_dim.x * g_block_dim.y * g_block_dim.z;
  if (!ensure_stacks(n)) {
    err_add("Gagal menyiapkan stack untuk %u fiber (mmap).", n);
    return kRuntime;
  }
  for (unsigned t = 0; t < n; ++t) g_tids[t] = thread_index_of(t);
#if defined(CUDACPU_TSAN)
  g_tsan_main = __tsan_get_current_fiber();  // fibers made by it see what the launcher wrote
#endif
  const int rc = run_blocks(n);
#if defined(CUDACPU_TSAN)
  __tsan_acquire(&g_hb_done);
  tsan_end_fibers(n);
#endif
  if (rc != kOk) {
    // Abandoned fibers leave live frames on their stacks; give the stacks
    // back so no sanitizer state (poison, access history) outlives them.
#if defined(CUDACPU_ASAN)
    ASAN_UNPOISON_MEMORY_REGION(g_stacks, g_stack_count * stack_stride());
#endif
    munmap(g_stacks, g_stack_count * stack_stride());
    g_stacks = nullptr;
    g_stack_count = 0;
  }
  return rc;
}

}  // namespace cudacpu

// ---------------------------------------------------------------------------
// Threads mode
// ---------------------------------------------------------------------------
#else
namespace cudacpu {

inline thread_local uint3 t_tid, t_bid;
inline thread_local unsigned t_lin;
inline pthread_mutex_t g_mx = PTHREAD_MUTEX_INITIALIZER;
struct CondArray {
  pthread_cond_t cv[kMaxWarps];
  CondArray() {
    for (auto& c : cv) pthread_cond_init(&c, nullptr);
  }
};
inline CondArray g_cv;
inline unsigned long long g_block_gen = 0;
struct Abort {};

struct Lock {
  Lock() { pthread_mutex_lock(&g_mx); }
  ~Lock() { pthread_mutex_unlock(&g_mx); }
  Lock(const Lock&) = delete;
};

inline void wake_warp(unsigned w) { pthread_cond_broadcast(&g_cv.cv[w]); }
inline void wake_all() {
  const unsigned warps = (g_sync.n + kWarp - 1) / kWarp;
  for (unsigned w = 0; w < warps; ++w) pthread_cond_broadcast(&g_cv.cv[w]);
}

inline const uint3& cur_thread_idx() { return t_tid; }
inline const uint3& cur_block_idx() { return t_bid; }

inline void wait_released(unsigned t) {
  while (g_sync.slot[t].st != St::Ready && !g_sync.failed) pthread_cond_wait(&g_cv.cv[t / kWarp], &g_mx);
  if (g_sync.failed) {
    wake_all();
    throw Abort{};
  }
}

inline void sync_threads(const char* file, int line) {
  Lock lk;
  if (g_sync.failed) throw Abort{};
  g_sync.arrive_sync(t_lin, Site{file, line, "__syncthreads()"});
  wait_released(t_lin);
}
#if defined(CUDACPU_TSAN)
extern "C" void AnnotateIgnoreSyncBegin(const char* file, int line);
extern "C" void AnnotateIgnoreSyncEnd(const char* file, int line);
// While alive, this thread's mutex and condition-variable operations carry no
// happens-before for ThreadSanitizer.
struct IgnoreSync {
  bool on;
  explicit IgnoreSync(bool b) : on(b) {
    if (on) AnnotateIgnoreSyncBegin(__FILE__, __LINE__);
  }
  ~IgnoreSync() {
    if (on) AnnotateIgnoreSyncEnd(__FILE__, __LINE__);
  }
};
#endif

// Only __syncwarp orders memory between lanes; for shuffles and votes the
// mutex that the bookkeeping needs is hidden from ThreadSanitizer.
CUDACPU_RT inline std::uint64_t warp_op(const char* file, int line, const char* what, Op op, unsigned mask,
                                        std::uint64_t val, int arg, int width) {
#if defined(CUDACPU_TSAN)
  IgnoreSync quiet(op != Op::Sync);
#endif
  Lock lk;
  if (g_sync.failed) throw Abort{};
  g_sync.arrive_warp(t_lin, Site{file, line, what}, op, mask, val, arg, width);
  wait_released(t_lin);
  return g_sync.slot[t_lin].res;
}

// Returns false when the launch failed and the thread must stop.
inline bool end_block(unsigned t, unsigned long long next_block) {
  Lock lk;
  if (g_sync.failed) return false;
  const unsigned long long gen = g_block_gen;
  g_sync.finish(t);
  if (g_sync.failed) {
    wake_all();
    return false;
  }
  if (g_sync.done == g_sync.n) {  // last thread of this block: open the next one
    if (g_cancel.load(std::memory_order_relaxed)) {
      g_sync.failed = kCancelled;
      err_clear();
      err_add("Peluncuran kernel '%s' dibatalkan (KeyboardInterrupt) sebelum block ke-%llu.",
              g_kernel, next_block);
      wake_all();
      return false;
    }
    ++g_block_gen;
    g_sync.begin(g_sync.n, block_index_of(next_block));
    poison_shared();
#if defined(CUDACPU_TSAN)
    if (!fresh_block_memory(g_dyn_smem_len)) {
      g_sync.failed = kRuntime;
      err_add("Gagal menyiapkan shared memory block (mmap).");
      wake_all();
      return false;
    }
#endif
    wake_all();
    return true;
  }
  while (g_block_gen == gen && !g_sync.failed) pthread_cond_wait(&g_cv.cv[t / kWarp], &g_mx);
  return !g_sync.failed;
}

[[noreturn]] inline void abort_thread(int status) {
  {
    Lock lk;
    if (!g_sync.failed) g_sync.failed = status;
    wake_all();
  }
  throw Abort{};
}

inline void fail_runtime(const char* what) {
  Lock lk;
  if (!g_sync.failed) {
    g_sync.failed = kRuntime;
    err_clear();
    err_add("Kernel '%s' gagal di thread CPU: %s", g_kernel, what);
  }
  wake_all();
}

inline void* worker(void* p) {
  const unsigned t = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p));
  t_lin = t;
  t_tid = thread_index_of(t);
  const unsigned long long blocks =
      static_cast<unsigned long long>(g_grid_dim.x) * g_grid_dim.y * g_grid_dim.z;
  for (unsigned long long b = 0; b < blocks; ++b) {
    t_bid = block_index_of(b);
    async_reset(t);
    try {
      g_thunk(g_args);
    } catch (Abort&) {
      return nullptr;
    } catch (...) {
      fail_runtime("exception C++ tak terduga");
      return nullptr;
    }
    if (!end_block(t, b + 1)) return nullptr;
  }
  return nullptr;
}

inline int run_grid() {
  const unsigned n = g_block_dim.x * g_block_dim.y * g_block_dim.z;
  g_sync.begin(n, block_index_of(0));
  poison_shared();
#if defined(CUDACPU_TSAN)
  if (!fresh_block_memory(g_dyn_smem_len)) {
    err_add("Gagal menyiapkan shared memory block (mmap).");
    return kRuntime;
  }
#endif
  g_block_gen = 0;
  static pthread_t threads[kMaxThreads];
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 1024 * 1024);
  unsigned started = 0;
  for (; started < n; ++started) {
    void* arg = reinterpret_cast<void*>(static_cast<std::uintptr_t>(started));
    if (pthread_create(&threads[started], &attr, &worker, arg) != 0) break;
  }
  pthread_attr_destroy(&attr);
  if (started < n) {
    Lock lk;
    g_sync.failed = kRuntime;
    err_clear();
    err_add("Gagal membuat %u thread CPU (hanya %u yang berhasil).", n, started);
    wake_all();
  }
  for (unsigned t = 0; t < started; ++t) pthread_join(threads[t], nullptr);
  return g_sync.failed;
}

}  // namespace cudacpu
#endif

// ---------------------------------------------------------------------------
// Built-in variables and synchronisation, as kernels spell them
// ---------------------------------------------------------------------------
#define threadIdx (::cudacpu::cur_thread_idx())
#define blockIdx (::cudacpu::cur_block_idx())
#define blockDim (static_cast<const dim3&>(::cudacpu::g_block_dim))
#define gridDim (static_cast<const dim3&>(::cudacpu::g_grid_dim))
constexpr int warpSize = 32;

#define __syncthreads() ::cudacpu::sync_threads(__FILE__, __LINE__)

namespace cudacpu {
template <class T> inline T shfl_sync(const char* f, int l, unsigned mask, T v, int src, int width = 32) {
  return from_bits<T>(warp_op(f, l, "__shfl_sync()", Op::Idx, mask, to_bits(v), src, width));
}
template <class T> inline T shfl_up_sync(const char* f, int l, unsigned mask, T v, unsigned d, int width = 32) {
  return from_bits<T>(warp_op(f, l, "__shfl_up_sync()", Op::Up, mask, to_bits(v), static_cast<int>(d), width));
}
template <class T> inline T shfl_down_sync(const char* f, int l, unsigned mask, T v, unsigned d, int width = 32) {
  return from_bits<T>(warp_op(f, l, "__shfl_down_sync()", Op::Down, mask, to_bits(v), static_cast<int>(d), width));
}
template <class T> inline T shfl_xor_sync(const char* f, int l, unsigned mask, T v, int lane_mask, int width = 32) {
  return from_bits<T>(warp_op(f, l, "__shfl_xor_sync()", Op::Xor, mask, to_bits(v), lane_mask, width));
}
inline unsigned ballot_sync(const char* f, int l, unsigned mask, int pred) {
  return static_cast<unsigned>(warp_op(f, l, "__ballot_sync()", Op::Ballot, mask, pred != 0, 0, 32));
}
inline int any_sync(const char* f, int l, unsigned mask, int pred) {
  return static_cast<int>(warp_op(f, l, "__any_sync()", Op::Any, mask, pred != 0, 0, 32));
}
inline int all_sync(const char* f, int l, unsigned mask, int pred) {
  return static_cast<int>(warp_op(f, l, "__all_sync()", Op::All, mask, pred != 0, 0, 32));
}
inline void syncwarp(const char* f, int l, unsigned mask = 0xffffffffu) {
  warp_op(f, l, "__syncwarp()", Op::Sync, mask, 0, 0, 32);
}
}  // namespace cudacpu

#define __shfl_sync(...) ::cudacpu::shfl_sync(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_up_sync(...) ::cudacpu::shfl_up_sync(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_down_sync(...) ::cudacpu::shfl_down_sync(__FILE__, __LINE__, __VA_ARGS__)
#define __shfl_xor_sync(...) ::cudacpu::shfl_xor_sync(__FILE__, __LINE__, __VA_ARGS__)
#define __ballot_sync(...) ::cudacpu::ballot_sync(__FILE__, __LINE__, __VA_ARGS__)
#define __any_sync(...) ::cudacpu::any_sync(__FILE__, __LINE__, __VA_ARGS__)
#define __all_sync(...) ::cudacpu::all_sync(__FILE__, __LINE__, __VA_ARGS__)
#define __syncwarp(...) ::cudacpu::syncwarp(__FILE__, __LINE__ __VA_OPT__(, ) __VA_ARGS__)

namespace cudacpu {
[[noreturn]] CUDACPU_RT inline void misaligned(const char* type, const void* p, unsigned align, bool store,
                                               const char* file, unsigned line) {
  if (!g_sync.failed) {
    err_clear();
    err_add("Akses vektor tidak sejajar (misaligned) di kernel '%s'", g_kernel);
    if (line) err_add(" (%s:%u)", file, line);
    const uint3 b = cur_block_idx(), t = cur_thread_idx();
    err_add(", blockIdx (%u,%u,%u), threadIdx (%u,%u,%u): %s %s alamat %p, yang bukan kelipatan %u byte. "
            "Di GPU kernel berhenti dengan cudaErrorMisalignedAddress (\"misaligned address\"). Baca %s "
            "hanya dari offset yang kelipatan %u byte (mis. indeks float kelipatan %u), atau baca per "
            "elemen.", b.x, b.y, b.z, t.x, t.y, t.z, type, store ? "ditulis ke" : "dibaca dari", p, align,
            type, align, align / 4);
  }
  abort_thread(kMisuse);
}
}  // namespace cudacpu

// ---------------------------------------------------------------------------
// Alignment of every access: UndefinedBehaviorSanitizer's -fsanitize=alignment
// ---------------------------------------------------------------------------
// build.py compiles every library with -fsanitize=alignment, so g++ checks the
// alignment of each load, store, reference binding and member access through
// a pointer (an 8-byte scalar read through a cast, a float4 read through a
// reference, ...), not only the float2/float4 copies above. Its calls land
// here (hidden, so they win over libubsan's printing handlers) and stop the
// thread with the .cu line, as a GPU stops with cudaErrorMisalignedAddress.
// Not inline: g++ emits the calls itself, so an inline one would never be emitted.
namespace cudacpu {
struct UbsanLocation {
  const char* file;
  std::uint32_t line, column;
};
struct UbsanType {
  std::uint16_t kind, info;
  char name[1];
};
struct UbsanMismatch {
  UbsanLocation loc;
  const UbsanType* type;
  unsigned char log_alignment, check_kind;
};
[[noreturn]] CUDACPU_RT inline void misaligned_access(const UbsanMismatch* d, const void* p) {
  const unsigned align = 1u << d->log_alignment;
  if (!g_sync.failed) {
    err_clear();
    const uint3 b = cur_block_idx(), t = cur_thread_idx();
    // g++ names the type as "'const struct float4'": keep "float4", read "const" as a load.
    char type[96];
    std::snprintf(type, sizeof type, "%s", d->type->name);
    char* name = type;
    bool is_const = false;
    for (const char* prefix : {"'", "const ", "struct "}) {
      const std::size_t k = std::strlen(prefix);
      if (std::strncmp(name, prefix, k) == 0) {
        is_const |= prefix[0] == 'c';
        name += k;
      }
    }
    if (const std::size_t k = std::strlen(name); k && name[k - 1] == '\'') name[k - 1] = '\0';
    // check_kind: 0 load, 1 store, 2 reference binding, 3 member access, 4 member call, 5 constructor.
    const unsigned kind = d->check_kind;
    const char* how = kind == 0 || is_const ? "dibaca dari"
                      : (kind == 1 || kind == 4 || kind == 5) ? "ditulis ke" : "diakses di";
    err_add("Akses memori tidak sejajar (misaligned) di kernel '%s' (%s:%u), blockIdx (%u,%u,%u), "
            "threadIdx (%u,%u,%u): %s %s alamat %p, yang bukan kelipatan %u byte. Di GPU kernel berhenti "
            "dengan cudaErrorMisalignedAddress (\"misaligned address\"). Pakai offset yang kelipatan %u byte "
            "(mis. indeks float kelipatan %u), atau baca per float.",
            g_kernel, d->loc.file, d->loc.line, b.x, b.y, b.z, t.x, t.y, t.z, name, how, p, align,
            align, align >= 4 ? align / 4 : 1);
  }
  abort_thread(kMisuse);
}
}  // namespace cudacpu
extern "C" __attribute__((visibility("hidden"))) CUDACPU_RT void __ubsan_handle_type_mismatch_v1(
    void* data, void* ptr) {
  const auto* d = static_cast<const ::cudacpu::UbsanMismatch*>(data);
  if (ptr == nullptr || d->log_alignment == 0) return;  // only alignment is checked (-fsanitize=alignment)
  ::cudacpu::misaligned_access(d, ptr);
}
extern "C" __attribute__((visibility("hidden"))) CUDACPU_RT void __ubsan_handle_type_mismatch_v1_abort(
    void* data, void* ptr) {
  __ubsan_handle_type_mismatch_v1(data, ptr);
}

// ---------------------------------------------------------------------------
// cp.async: asynchronous global -> shared copies (sm_80+), as PTX defines them
// ---------------------------------------------------------------------------
// A kernel built for the emulator calls
//   cudacpu_cp_async(dst, src, cp_size, src_size)   cp.async.{ca,cg}.shared.global
//   cudacpu_cp_async_commit()                       cp.async.commit_group
//   cudacpu_cp_async_wait(n)                        cp.async.wait_group n
// A copy fills its destination with 0xff bytes (NaN as float) at once and is
// queued in the issuing thread's open group; commit closes that group;
// wait_group(n) completes every committed group except the newest n (the
// open group is never completed by a wait, as on a GPU). So a read of a stage
// that is still in flight, a missing commit or a too-large n reads NaN, where
// a synchronous copy would have hidden the bug.
namespace cudacpu {
constexpr unsigned kMaxAsync = 64;  // copies one thread may have in flight
struct AsyncCopy {
  unsigned char* dst;
  const unsigned char* src;
  unsigned size, src_size, group;
};
struct AsyncQueue {
  unsigned n = 0, committed = 0;  // copies queued; groups closed so far
  AsyncCopy c[kMaxAsync];
};
inline AsyncQueue g_async[kMaxThreads];

// The queue is the runtime's bookkeeping (not checked by ThreadSanitizer);
// the poisoning and the copies are the thread's own writes (checked).
CUDACPU_RT inline unsigned cur_linear_thread() {
  const uint3 t = cur_thread_idx();
  return t.x + g_block_dim.x * (t.y + g_block_dim.y * t.z);
}
CUDACPU_RT inline void async_reset(unsigned t) {
  g_async[t].n = 0;
  g_async[t].committed = 0;
}
CUDACPU_RT inline bool async_push(const AsyncCopy& c) {
  AsyncQueue& q = g_async[cur_linear_thread()];
  if (q.n == kMaxAsync) return false;
  q.c[q.n] = c;
  q.c[q.n++].group = q.committed;
  return true;
}
CUDACPU_RT inline void cp_async_commit() { ++g_async[cur_linear_thread()].committed; }
// Moves the copies of every committed group but the newest `pending` to `done`.
CUDACPU_RT inline unsigned async_take_done(int pending, AsyncCopy* done) {
  AsyncQueue& q = g_async[cur_linear_thread()];
  const long done_below = long(q.committed) - pending;
  unsigned kept = 0, n_done = 0;
  for (unsigned i = 0; i < q.n; ++i) {
    if (long(q.c[i].group) < done_below) done[n_done++] = q.c[i];
    else q.c[kept++] = q.c[i];
  }
  q.n = kept;
  return n_done;
}

[[noreturn]] CUDACPU_RT __attribute__((format(printf, 3, 4))) inline void async_misuse(const char* file, int line,
                                                                                    const char* fmt, ...) {
  if (!g_sync.failed) {
    err_clear();
    const uint3 bl = cur_block_idx(), t = cur_thread_idx();
    err_add("Pemakaian cp.async yang salah di kernel '%s' (%s:%d), blockIdx (%u,%u,%u), threadIdx (%u,%u,%u): ",
            g_kernel, file, line, bl.x, bl.y, bl.z, t.x, t.y, t.z);
    va_list ap;
    va_start(ap, fmt);
    if (g_err_len + 1 < sizeof g_err) {
      const int k = std::vsnprintf(g_err + g_err_len, sizeof g_err - g_err_len, fmt, ap);
      if (k > 0) g_err_len += static_cast<std::size_t>(k);
      if (g_err_len >= sizeof g_err) g_err_len = sizeof g_err - 1;
    }
    va_end(ap);
  }
  abort_thread(kMisuse);
}

CUDACPU_PROF_OFF inline void cp_async(const char* file, int line, void* dst, const void* src, unsigned cp_size,
                                      unsigned src_size) {
#if defined(CUDACPU_PROFILE)
  // LDGSTS: a global read and a shared write by one instruction, at the .cu line.
  if (src_size) prof::access(0, file, line, src, src_size, false, 4u);
  prof::access(0, file, line, dst, cp_size, true, 4u);
#endif
  if (cp_size != 4 && cp_size != 8 && cp_size != 16)
    async_misuse(file, line, "ukuran salinan %u byte; cp.async hanya menyalin 4, 8 atau 16 byte.", cp_size);
  if (src_size > cp_size)
    async_misuse(file, line, "src_size %u lebih besar dari ukuran salinan %u byte.", src_size, cp_size);
  if (reinterpret_cast<std::uintptr_t>(dst) % cp_size) misaligned("cp.async (tujuan)", dst, cp_size, true, file, line);
  if (src_size && reinterpret_cast<std::uintptr_t>(src) % cp_size)
    misaligned("cp.async (sumber)", src, cp_size, false, file, line);
  auto* d = static_cast<unsigned char*>(dst);
  if (!async_push(AsyncCopy{d, static_cast<const unsigned char*>(src), cp_size, src_size, 0}))
    async_misuse(file, line, "lebih dari %u salinan cp.async belum ditunggu (cp.async.wait_group) di satu "
                 "thread; tunggu kelompok lama dulu.", kMaxAsync);
  std::memset(d, 0xff, cp_size);  // in flight: NaN until a wait completes it
}

CUDACPU_PROF_OFF inline void cp_async_wait(const char* file, int line, int pending) {
  if (pending < 0) async_misuse(file, line, "wait_group %d tidak sah (harus >= 0).", pending);
  AsyncCopy done[kMaxAsync];
  const unsigned n = async_take_done(pending, done);
  for (unsigned i = 0; i < n; ++i) {
    const AsyncCopy& c = done[i];
    std::memcpy(c.dst, c.src, c.src_size);
    std::memset(c.dst + c.src_size, 0, c.size - c.src_size);  // zfill, like src_size < cp_size on a GPU
  }
}
}  // namespace cudacpu

#define cudacpu_cp_async(dst, src, cp_size, src_size) \
  ::cudacpu::cp_async(__FILE__, __LINE__, (dst), (src), (cp_size), (src_size))
#define cudacpu_cp_async_commit() ::cudacpu::cp_async_commit()
#define cudacpu_cp_async_wait(n) ::cudacpu::cp_async_wait(__FILE__, __LINE__, (n))

// ---------------------------------------------------------------------------
// Launch entry points used by the generated trampolines
// ---------------------------------------------------------------------------
namespace cudacpu {

template <class... P, std::size_t... I>
inline void invoke_impl(void (*f)(P...), void** a, std::index_sequence<I...>) {
  f(*static_cast<std::remove_cvref_t<P>*>(a[I])...);
}
template <class... P> inline void invoke(void (*f)(P...), void** a) {
  invoke_impl(f, a, std::index_sequence_for<P...>{});
}

// Parameter codes for the Python side: "f4" float, "i4" int, "u8" unsigned
// 64-bit, "b1" bool, "c1" char, "v" void, "o<size>" anything else; pointers
// get "p" (and "c" when the pointee is const) in front. Comma-separated.
template <class T> inline void put_code(char*& o) {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) o += std::sprintf(o, "b1");
  else if constexpr (std::is_same_v<U, char>) o += std::sprintf(o, "c1");
  else if constexpr (std::is_floating_point_v<U> && sizeof(U) <= 8) o += std::sprintf(o, "f%zu", sizeof(U));
  else if constexpr (std::is_integral_v<U>) o += std::sprintf(o, "%c%zu", std::is_signed_v<U> ? 'i' : 'u', sizeof(U));
  else if constexpr (std::is_void_v<U>) o += std::sprintf(o, "v");
  else o += std::sprintf(o, "o%zu", sizeof(U));
}
template <class P> inline void put_param(char*& o) {
  using D = std::remove_cvref_t<P>;
  if constexpr (std::is_pointer_v<D>) {
    using E = std::remove_pointer_t<D>;
    o += std::sprintf(o, std::is_const_v<E> ? "pc" : "p");
    if constexpr (std::is_pointer_v<std::remove_cv_t<E>>) o += std::sprintf(o, "o%zu", sizeof(E));
    else put_code<E>(o);
  } else {
    put_code<D>(o);
  }
}
template <class... P> inline const char* signature(void (*)(P...)) {
  static char buf[64 * (sizeof...(P) + 1)];
  char* o = buf;
  *o = '\0';
  bool first = true;
  ((first ? void(first = false) : void(*o++ = ','), put_param<P>(o)), ...);
  *o = '\0';
  return buf;
}

inline pthread_mutex_t g_launch_mx = PTHREAD_MUTEX_INITIALIZER;

// cfg: grid x,y,z then block x,y,z. The Python side validates first; the
// checks here only keep a direct caller from crashing the process.
CUDACPU_RT inline int launch(const char* name, void (*thunk)(void**), const unsigned* cfg, unsigned long long smem,
                  void** args, unsigned max_threads = kMaxThreads) {
  pthread_mutex_lock(&g_launch_mx);
  err_clear();
  g_kernel = name;
  g_grid_dim = dim3(cfg[0], cfg[1], cfg[2]);
  g_block_dim = dim3(cfg[3], cfg[4], cfg[5]);
  const unsigned long long nthreads = 1ull * cfg[3] * cfg[4] * cfg[5];
  int rc = kOk;
  if (cfg[0] == 0 || cfg[1] == 0 || cfg[2] == 0 || nthreads == 0 || nthreads > kMaxThreads) {
    err_add("Konfigurasi peluncuran kernel '%s' tidak sah.", name);
    rc = kMisuse;
  } else if (nthreads > max_threads) {
    err_add("Kernel '%s' dideklarasikan dengan __launch_bounds__(%u), tetapi diluncurkan dengan %llu thread "
            "per block (cudaErrorLaunchOutOfResources).", name, max_threads, nthreads);
    rc = kMisuse;
  } else if (smem > kMaxDynSmem) {
    err_add("shared_mem=%llu melebihi %zu byte.", smem, kMaxDynSmem);
    rc = kMisuse;
  } else {
    g_thunk = thunk;
    g_args = args;
#if defined(CUDACPU_ASAN)
    ASAN_UNPOISON_MEMORY_REGION(g_dyn_smem, kMaxDynSmem);
#endif
    // Uninitialised shared memory reads back as NaN (float) / -1 (int);
    // poison_shared() refills it at every block start.
    std::memset(g_dyn_smem, 0xff, smem);
    g_dyn_smem_len = smem;
#if defined(CUDACPU_ASAN)
    ASAN_POISON_MEMORY_REGION(g_dyn_smem + smem, kMaxDynSmem - smem);
#endif
    rc = run_grid();
  }
  std::memcpy(t_err, g_err, g_err_len + 1);
  pthread_mutex_unlock(&g_launch_mx);
  return rc;
}

}  // namespace cudacpu

CUDACPU_EXPORT const char* cudacpu_last_error() { return ::cudacpu::t_err; }
CUDACPU_EXPORT void cudacpu_cancel(int on) { ::cudacpu::g_cancel.store(on); }
CUDACPU_EXPORT int cudacpu_abi_version() { return 1; }
CUDACPU_EXPORT void cudacpu_set_seed(unsigned long long seed) {
#if defined(CUDACPU_SHUFFLE)
  ::cudacpu::g_seed = seed;
#else
  (void)seed;
#endif
}

// Tensor cores (nvcuda::wmma, TF32): warp-collective, on the machinery above.
#include "cuda_cpu_wmma.h"

#if defined(CUDACPU_PROFILE)
#include "cuda_cpu_profile.h"
#endif
