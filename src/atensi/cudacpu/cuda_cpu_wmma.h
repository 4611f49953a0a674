// cuda_cpu_wmma.h -- tensor-core matrix products (nvcuda::wmma) for atensi.cudacpu.
//
// Included once, at the end of cuda_cpu.h: it uses that header's warp
// machinery (BlockSync, warp_op, abort_thread) and adds nothing to it.
//
// What is emulated: the WMMA API for TF32, shape m16n16k8 (sm_80 and later):
//   fragment<matrix_a, 16, 16, 8, precision::tf32, row_major|col_major>  A 16 x 8
//   fragment<matrix_b, 16, 16, 8, precision::tf32, row_major|col_major>  B 8 x 16
//   fragment<accumulator, 16, 16, 8, float>                              C 16 x 16
//   load_matrix_sync, store_matrix_sync, fill_fragment, mma_sync, __float_to_tf32,
//   fragment.x[i] for i < fragment.num_elements (4, 4 and 8 floats per lane).
//
// Warp-collective, as on a GPU. load/store/fill/mma wait until all 32 lanes of
// the warp have arrived at the same call (the same .cu line), through the same
// bookkeeping as __shfl_sync. A lane that returned early, or lanes at
// different calls, are a deadlock (BarrierDeadlockError naming the lines); a
// warp of fewer than 32 threads, lanes with different arguments (pointer,
// ldm, layout, fill value), a leading dimension that is not a multiple of
// 4 floats (16 bytes; 8 floats for the f32 accumulator, whose row starts the
// PTX ISA wants aligned to the fragment's size) or is shorter than a tile
// row, a pointer that is not
// 32-byte aligned, and TF32 operands that were never rounded are errors
// naming the .cu line (kMisuse). No memory ordering is implied: as on a GPU,
// __syncwarp / __syncthreads must separate a lane's stores to shared memory
// from another lane's load_matrix_sync of them (ThreadSanitizer sees it).
//
// Fragment layout. On a GPU which lane holds which element is unspecified,
// and a correct program does not depend on it. In fibers and threads mode
// element i of lane L is the logical element e = i * 32 + L of the tile,
// counted row by row (A: 16 rows x 8, B: 8 rows x 16, C: 16 x 16): fixed,
// every element exactly once, but not the hardware's layout. In shuffle mode
// slot i * 32 + L holds element perm[slot] instead, one seeded permutation per
// fragment kind: fixed for a seed (so within a launch), different from one
// seed to the next, so a kernel that reads rows or columns out of x[i]
// (written against the drawing of the fixed layout) gives wrong results.
//
// Numerics. __float_to_tf32 is cvt.rna.tf32.f32: round to nearest, ties away
// from zero, to 10 mantissa bits (the low 13 bits become 0); denormals are
// rounded the same way, overflow gives inf, inf stays inf, NaN becomes
// 0x7fffffff. mma_sync computes, for every (r, n), in this order:
//   acc = C[r][n];  for k = 0..7: acc = fl32(acc + fl32(A[r][k] * B[k][n]))
// with IEEE float32 rounding to nearest even. Products of two TF32 values are
// exact in float32 unless they under- or overflow. atensi.number_formats
// (mma_tf32) is the NumPy model of exactly this, bit for bit. A GPU's
// accumulation order and internal precision inside one MMA are
// implementation-defined, so a GPU result agrees with it only to within
// about 8 * 2^-23 * sum_k |A[r][k] B[k][n]| (plus |C|'s own rounding).
#pragma once

namespace cudacpu {
namespace wmma_rt {

// Arguments one lane brought to a warp-collective WMMA call.
struct Call {
  const void* ptr;
  unsigned ldm;
  int layout;        // 0 row-major, 1 column-major, -1 none
  std::uint32_t value;  // fill_fragment's value, as bits
  float* frag[4];    // mma_sync: d, a, b, c of this lane
};
// Two tables, by parity of the warp's barrier count: a lane that has already
// left call k writes call k+1's entry while the others still read call k's.
inline Call g_calls[2][kMaxThreads];

#if defined(CUDACPU_FIBERS)
CUDACPU_RT inline unsigned self() { return g_cur; }
#else
CUDACPU_RT inline unsigned self() { return t_lin; }
#endif

[[noreturn]] CUDACPU_RT __attribute__((format(printf, 3, 4))) inline void fail(const Site& s, unsigned t,
                                                                               const char* fmt, ...) {
  auto write = [&](va_list ap) {
    err_clear();
    const uint3 b = cur_block_idx();
    err_add("Pemakaian %s yang salah di kernel '%s' (%s:%d), blockIdx (%u,%u,%u), warp %u, lane %u: ",
            s.what, g_kernel, s.file, s.line, b.x, b.y, b.z, t / kWarp, t % kWarp);
    if (g_err_len + 1 < sizeof g_err) {
      int k = std::vsnprintf(g_err + g_err_len, sizeof g_err - g_err_len, fmt, ap);
      if (k > 0) g_err_len += static_cast<std::size_t>(k);
      if (g_err_len >= sizeof g_err) g_err_len = sizeof g_err - 1;
    }
  };
  va_list ap;
  va_start(ap, fmt);
#if defined(CUDACPU_THREADS)
  {
    Lock lk;
    if (!g_sync.failed) {
      write(ap);
      g_sync.failed = kMisuse;
    }
  }
#else
  if (!g_sync.failed) write(ap);
#endif
  va_end(ap);
  abort_thread(kMisuse);
}

// Every lane of a full warp arrives with `mine`; returns the table the warp
// filled. Lanes with other arguments than lane 0 are reported.
CUDACPU_RT inline const Call* arrive(const Site& s, const Call& mine) {
  const unsigned t = self(), w = t / kWarp, lo = w * kWarp;
  const unsigned m = g_sync.warp_size(w);
  if (m < kWarp)
    fail(s, t, "operasi WMMA dikerjakan bersama oleh 32 lane satu warp, tetapi warp ini hanya punya %u "
         "thread (jumlah thread block bukan kelipatan 32). Di GPU hasilnya tak terdefinisi. Pakai "
         "jumlah thread per block kelipatan 32.", m);
  const unsigned parity = g_sync.warp_epoch[w] & 1u;
  g_calls[parity][t] = mine;
  // A warp barrier that orders nothing (like a shuffle): only the lanes' meeting.
  warp_op(s.file, s.line, s.what, Op::Idx, 0xffffffffu, 0, 0, 32);
  const Call* c = &g_calls[parity][lo];
  for (unsigned i = 1; i < kWarp; ++i) {
    const Call& x = c[i];
    if (x.ptr == c[0].ptr && x.ldm == c[0].ldm && x.layout == c[0].layout && x.value != c[0].value)
      fail(s, lo + i, "semua 32 lane warp harus mengisi fragmen dengan nilai yang sama, tetapi lane %u memberi "
           "%.9g sedangkan lane 0 memberi %.9g. Pemetaan elemen ke lane tidak ditentukan, jadi nilai yang "
           "berbeda per lane mengisi elemen yang tak bisa diketahui.", i, std::bit_cast<float>(x.value),
           std::bit_cast<float>(c[0].value));
    if (x.ptr != c[0].ptr || x.ldm != c[0].ldm || x.layout != c[0].layout)
      fail(s, lo + i, "semua 32 lane warp harus memanggilnya dengan argumen yang sama, tetapi lane %u "
           "memberi (ptr %p, ldm %u, layout %d) sedangkan lane 0 memberi (ptr %p, ldm %u, layout %d). Di GPU hasilnya tak terdefinisi. Hitung alamat ubin dari indeks warp "
           "(threadIdx.x / 32), bukan dari indeks lane.",
           i, x.ptr, x.ldm, x.layout, c[0].ptr, c[0].ldm, c[0].layout);
  }
  return c;
}

// A second meeting at the same line: nobody leaves mma_sync before lane 0
// has written every lane's result, nor changes its operands before then.
CUDACPU_RT inline void depart(const Site& s) { warp_op(s.file, s.line, s.what, Op::Idx, 0xffffffffu, 0, 0, 32); }

CUDACPU_RT inline void check_memory(const Site& s, const void* p, unsigned ldm, int rows, int cols, bool col_major) {
  const unsigned t = self();
  if (p == nullptr) fail(s, t, "pointer matriks adalah NULL.");
  if (reinterpret_cast<std::uintptr_t>(p) % 32)
    fail(s, t, "alamat matriks %p bukan kelipatan 32 byte (256 bit), seperti yang dituntut WMMA. Mulailah "
         "setiap ubin di offset float kelipatan 8, dan buat ldm kelipatan 8 bila ubin-ubin bersebelahan.", p);
  if (rows == 16 && cols == 16) {
    // The f32 accumulator: the PTX ISA wants every row (column) start aligned
    // to the fragment's size, 8 floats, not only the 16 bytes of the CUDA guide.
    if (ldm % 8)
      fail(s, t, "ldm = %u bukan kelipatan 8 float (32 byte). Untuk fragmen accumulator float, ISA PTX "
           "(wmma.load.c / wmma.store.d) menuntut setiap awal baris atau kolom ubin rata pada ukuran "
           "fragmen, jadi ldm kelipatan 8, bukan hanya 4. Beri padding pada baris array agar "
           "panjangnya kelipatan 8.", ldm);
  } else if (ldm % 4) {
    fail(s, t, "ldm = %u bukan kelipatan 4 float (16 byte), seperti yang dituntut WMMA untuk float/TF32. "
         "Beri padding pada baris array agar panjangnya kelipatan 4.", ldm);
  }
  const int need = col_major ? rows : cols;
  if (ldm < static_cast<unsigned>(need))
    fail(s, t, "ldm = %u lebih kecil dari panjang satu %s ubin %d x %d (%d float): baris-baris ubin akan "
         "saling tumpang tindih di memori. ldm adalah jarak (dalam elemen) antara awal dua %s berurutan "
         "di memori, jadi paling sedikit %d.", ldm, col_major ? "kolom" : "baris", rows, cols, need,
         col_major ? "kolom" : "baris", need);
}

// The logical element that slot i * 32 + lane of a fragment of `kind` (0: A,
// 1: B, 2: accumulator) holds: see "Fragment layout" above.
CUDACPU_RT inline int element(int kind, int slot) {
#if defined(CUDACPU_SHUFFLE)
  static unsigned long long built_for = 0;
  static bool built = false;
  static int perm[3][256];
  if (!built || built_for != g_seed) {
    for (int k = 0; k < 3; ++k) {
      const int size = k == 2 ? 256 : 128;
      for (int e = 0; e < size; ++e) perm[k][e] = e;
      unsigned long long z = g_seed * 0x9e3779b97f4a7c15ull + 0xd1b54a32d192ed03ull * (k + 1);
      for (int e = size - 1; e > 0; --e) {  // Fisher-Yates with splitmix64
        unsigned long long r = (z += 0x9e3779b97f4a7c15ull);
        r = (r ^ (r >> 30)) * 0xbf58476d1ce4e5b9ull;
        r = (r ^ (r >> 27)) * 0x94d049bb133111ebull;
        r ^= r >> 31;
        const int j = static_cast<int>(r % static_cast<unsigned long long>(e + 1));
        const int t = perm[k][e];
        perm[k][e] = perm[k][j];
        perm[k][j] = t;
      }
    }
    built_for = g_seed;
    built = true;
  }
  return perm[kind][slot];
#else
  (void)kind;
  return slot;
#endif
}

// D = A B + C for the whole warp, from every lane's fragments (table of
// arrive): A 16 x 8, B 8 x 16, C and D 16 x 16, element i of lane L being the
// logical element of slot i*32 + L (element()). Runtime code: on a GPU these are registers that
// the tensor core reads, not memory one lane reads from another.
CUDACPU_RT inline void mma_tile(const Call* all) {
  float A[16][8], B[8][16], C[16][16];
  for (unsigned lane = 0; lane < kWarp; ++lane) {
    for (int i = 0; i < 4; ++i) {
      const int slot = i * 32 + static_cast<int>(lane), ea = element(0, slot), eb = element(1, slot);
      A[ea / 8][ea % 8] = all[lane].frag[1][i];
      B[eb / 16][eb % 16] = all[lane].frag[2][i];
    }
    for (int i = 0; i < 8; ++i) {
      const int e = element(2, i * 32 + static_cast<int>(lane));
      C[e / 16][e % 16] = all[lane].frag[3][i];
    }
  }
  for (unsigned lane = 0; lane < kWarp; ++lane)
    for (int i = 0; i < 8; ++i) {
      const int e = element(2, i * 32 + static_cast<int>(lane)), r = e / 16, n = e % 16;
      float acc = C[r][n];
      for (int k = 0; k < 8; ++k) {
        // The product in double is exact; one rounding to float is fl32(A*B),
        // and no compiler can fuse it with the addition.
        const float p = static_cast<float>(static_cast<double>(A[r][k]) * static_cast<double>(B[k][n]));
        acc = acc + p;
      }
      all[lane].frag[0][i] = acc;
    }
}

CUDACPU_RT inline bool is_tf32(float v) {
  const std::uint32_t b = std::bit_cast<std::uint32_t>(v);
  return (b & 0x1fffu) == 0 || v != v;
}

}  // namespace wmma_rt
}  // namespace cudacpu

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
namespace precision {
struct tf32 {};
}
enum layout_t { mem_row_major, mem_col_major };

namespace detail {
template <class Use> struct tile;
template <> struct tile<matrix_a> { static constexpr int rows = 16, cols = 8; };
template <> struct tile<matrix_b> { static constexpr int rows = 8, cols = 16; };
template <> struct tile<accumulator> { static constexpr int rows = 16, cols = 16; };
}  // namespace detail

template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
  static_assert(M == 16 && N == 16 && K == 8,
                "cudacpu: hanya bentuk WMMA m16n16k8 (TF32) yang diemulasikan; pakai fragment<..., 16, 16, 8, ...>.");
  static_assert(std::is_same_v<Use, accumulator>
                    ? (std::is_same_v<T, float> && std::is_void_v<Layout>)
                    : (std::is_same_v<T, precision::tf32> &&
                       (std::is_same_v<Layout, row_major> || std::is_same_v<Layout, col_major>)),
                "cudacpu: matrix_a/matrix_b butuh precision::tf32 dan row_major/col_major; accumulator butuh "
                "float tanpa layout.");

 public:
  using element_type = float;
  static constexpr int rows = detail::tile<Use>::rows;
  static constexpr int cols = detail::tile<Use>::cols;
  static constexpr int num_elements = rows * cols / 32;
  float x[num_elements];
};

// cvt.rna.tf32.f32: ties away from zero on the magnitude (adding half of the
// dropped 13 bits then truncating), NaN kept as NaN.
inline float __float_to_tf32(float v) {
  if (v != v) return std::bit_cast<float>(0x7fffffffu);
  const std::uint32_t b = std::bit_cast<std::uint32_t>(v);
  return std::bit_cast<float>((b + 0x1000u) & 0xffffe000u);
}

namespace detail {
using ::cudacpu::Site;
using ::cudacpu::wmma_rt::Call;

inline Site site(const char* what, const std::source_location& loc) {
  return Site{loc.file_name(), static_cast<int>(loc.line()), what};
}

// (row, column) of element i of lane `lane`: the logical element of slot i*32 + lane.
template <class F> inline void coords(int i, unsigned lane, int& r, int& c) {
  const int kind = F::rows == 16 ? (F::cols == 16 ? 2 : 0) : 1;
  const int e = ::cudacpu::wmma_rt::element(kind, i * 32 + static_cast<int>(lane));
  r = e / F::cols;
  c = e % F::cols;
}

template <class F> inline void load(F& f, const float* p, unsigned ldm, bool col_major, const char* what,
                                   const std::source_location& loc) {
  const Site s = site(what, loc);
  ::cudacpu::wmma_rt::arrive(s, Call{p, ldm, col_major ? 1 : 0, 0, {}});
  ::cudacpu::wmma_rt::check_memory(s, p, ldm, F::rows, F::cols, col_major);
  const unsigned lane = ::cudacpu::wmma_rt::self() % ::cudacpu::kWarp;
  for (int i = 0; i < F::num_elements; ++i) {
    int r, c;
    coords<F>(i, lane, r, c);
    f.x[i] = col_major ? p[static_cast<std::size_t>(c) * ldm + r] : p[static_cast<std::size_t>(r) * ldm + c];
  }
}
}  // namespace detail

template <class Use, class Layout>
inline void load_matrix_sync(fragment<Use, 16, 16, 8, precision::tf32, Layout>& a, const float* p, unsigned ldm,
                             std::source_location loc = std::source_location::current()) {
  detail::load(a, p, ldm, std::is_same_v<Layout, col_major>, "wmma::load_matrix_sync()", loc);
}

inline void load_matrix_sync(fragment<accumulator, 16, 16, 8, float>& c, const float* p, unsigned ldm,
                             layout_t layout, std::source_location loc = std::source_location::current()) {
  detail::load(c, p, ldm, layout == mem_col_major, "wmma::load_matrix_sync()", loc);
}

inline void store_matrix_sync(float* p, const fragment<accumulator, 16, 16, 8, float>& c, unsigned ldm,
                              layout_t layout, std::source_location loc = std::source_location::current()) {
  using F = fragment<accumulator, 16, 16, 8, float>;
  const ::cudacpu::Site s = detail::site("wmma::store_matrix_sync()", loc);
  const bool col_major = layout == mem_col_major;
  ::cudacpu::wmma_rt::arrive(s, detail::Call{p, ldm, col_major ? 1 : 0, 0, {}});
  ::cudacpu::wmma_rt::check_memory(s, p, ldm, F::rows, F::cols, col_major);
  const unsigned lane = ::cudacpu::wmma_rt::self() % ::cudacpu::kWarp;
  for (int i = 0; i < F::num_elements; ++i) {
    int r, col;
    detail::coords<F>(i, lane, r, col);
    (col_major ? p[static_cast<std::size_t>(col) * ldm + r] : p[static_cast<std::size_t>(r) * ldm + col]) = c.x[i];
  }
}

template <class Use, class T, class Layout>
inline void fill_fragment(fragment<Use, 16, 16, 8, T, Layout>& f, float v,
                          std::source_location loc = std::source_location::current()) {
  const ::cudacpu::Site s = detail::site("wmma::fill_fragment()", loc);
  ::cudacpu::wmma_rt::arrive(s, detail::Call{nullptr, 0, -1, std::bit_cast<std::uint32_t>(v), {}});
  for (float& e : f.x) e = v;
}

// D = A B + C for one 16 x 16 x 8 tile. Lane 0 of the warp computes all 256
// results from every lane's fragments (mma_tile), in the order stated at the top.
template <class LA, class LB>
inline void mma_sync(fragment<accumulator, 16, 16, 8, float>& d,
                     const fragment<matrix_a, 16, 16, 8, precision::tf32, LA>& a,
                     const fragment<matrix_b, 16, 16, 8, precision::tf32, LB>& b,
                     const fragment<accumulator, 16, 16, 8, float>& c,
                     std::source_location loc = std::source_location::current()) {
  using FA = fragment<matrix_a, 16, 16, 8, precision::tf32, LA>;
  using FB = fragment<matrix_b, 16, 16, 8, precision::tf32, LB>;
  const ::cudacpu::Site s = detail::site("wmma::mma_sync()", loc);
  const unsigned t = ::cudacpu::wmma_rt::self();
  for (int i = 0; i < FA::num_elements; ++i)
    if (!::cudacpu::wmma_rt::is_tf32(a.x[i]))
      ::cudacpu::wmma_rt::fail(s, t, "a.x[%d] = %.9g belum dibulatkan ke TF32 (13 bit terendahnya bukan nol). "
                               "Bulatkan setiap elemen fragmen matrix_a dan matrix_b dengan "
                               "a.x[i] = wmma::__float_to_tf32(a.x[i]) sesudah load_matrix_sync; di GPU "
                               "hasil operan yang tidak dibulatkan tidak dijamin.", i, a.x[i]);
  for (int i = 0; i < FB::num_elements; ++i)
    if (!::cudacpu::wmma_rt::is_tf32(b.x[i]))
      ::cudacpu::wmma_rt::fail(s, t, "b.x[%d] = %.9g belum dibulatkan ke TF32 (13 bit terendahnya bukan nol). "
                               "Bulatkan setiap elemen fragmen matrix_b dengan "
                               "b.x[i] = wmma::__float_to_tf32(b.x[i]) sesudah load_matrix_sync.", i, b.x[i]);
  detail::Call mine{nullptr, 0, -1, 0, {d.x, const_cast<float*>(a.x), const_cast<float*>(b.x), const_cast<float*>(c.x)}};
  const detail::Call* all = ::cudacpu::wmma_rt::arrive(s, mine);
  if (t % ::cudacpu::kWarp == 0) CUDACPU_PROF_COUNT(::cudacpu::prof::kMma);
  if (t % ::cudacpu::kWarp == 0) ::cudacpu::wmma_rt::mma_tile(all);
  ::cudacpu::wmma_rt::depart(s);
}

}  // namespace wmma
}  // namespace nvcuda
