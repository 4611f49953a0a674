// attention_tensorcore.cu — fused v3: O = softmax(mask(Q Kᵀ / √d_k)) V dengan kedua
// perkalian matriksnya di tensor core (TF32, akumulasi FP32), gaya flash.
//
// Matematika (Math): online softmax per ubin key, sama dengan fused v2
// (kernels/attention_fused.cu). Untuk ubin query (64 baris) dan ubin key j0..j0+31:
//          S    = (Q · scale · log2 e) Kᵀ              di tensor core, satuan log2
//          m'   = max(m, maks_j S[i][j])                 maksimum baris sejauh ini
//          P    = exp2(S - m'),   alpha = exp2(m - m')
//          l    = l · alpha + jumlah_j P[i][j]
//          O    = O · alpha + P V                       P V di tensor core
//      lalu O[i] = O[i] / l[i]. Kausal: key j > i mendapat P = 0; ubin key yang
//      seluruhnya di masa depan tidak dimuat.
//      Presisi (satu kernel per pilihan, dipilih saat kompilasi lewat template):
//        TF32   : setiap operan x dibulatkan x_hi = __float_to_tf32(x) (10 bit
//                 mantissa); satu MMA per potongan: galat relatif ~ 2^-11.
//        3xTF32 : x = x_hi + x_lo dengan x_lo = __float_to_tf32(x - x_hi);
//                 a b ≈ a_lo b_hi + a_hi b_lo + a_hi b_hi (a_lo b_lo ~ 2^-22
//                 dibuang): tiga MMA, ketelitian setara FP32.
//
// Bentuk (Shapes): Q, K, V, O (H, T, d_k), float32, C-contiguous (row-major):
//          Q[h][i][c] adalah Q[(h*T + i)*d_k + c]. H = semua sumbu depan diratakan.
//          Didukung: 1 <= d_k <= 128 (D = 32, 64 atau 128: lebar berpadding, kelipatan
//          8 yang dibutuhkan MMA), T >= 1 berapa pun, H berapa pun.
//
// Pemetaan thread (Thread mapping): block = 4 warp (128 thread), satu ubin query
//          TC_BQ = 64 baris; warp w memiliki baris 16w .. 16w+15 (tinggi satu MMA).
//          grid = (ceil(T / 64), min(H, 65535), 1); block berputar atas head.
//          Shared memory (dinamis, float, baris berjarak LD = D + 8 agar setiap ubin
//          mulai di kelipatan 32 byte seperti yang dituntut WMMA):
//            Qs 64 x LD (Q · scale · log2 e), Ks dan Vs 32 x LD (ubin key),
//            Ss 4 warp x 16 x 40 (S lalu P milik warp), Os 4 warp x 16 x LD (akumulator O).
//          Per ubin key, setiap warp:
//            1. S (16 x 32) = dua akumulator 16 x 16; untuk setiap potongan 8 kolom
//               Q: A = Qs (row_major), B = Kᵀ = Ks dibaca col_major, mma_sync.
//            2. store_matrix_sync S ke Ss, __syncwarp; lane = (r, half): lane 2r dan
//               2r+1 memegang baris r, masing-masing 16 key: maksimum lewat satu
//               __shfl_xor_sync, P ditulis kembali ke Ss.
//            3. __syncwarp; P (16 x 32) dimuat ke fragmen; untuk setiap ubin kolom
//               16 lebar: P V (4 potongan key) ke akumulator nol, disimpan ke Ss, lalu
//               lane (r, half) menulis Os[r] = Os[r] · alpha + PV[r] untuk 8 kolomnya.
//          Penempatan elemen fragmen di lane tidak ditentukan (WMMA), jadi semua kerja per
//          baris (maksimum, alpha, pembagian l) dikerjakan di shared memory, bukan di x[i].
//          Kausal: warp yang semua barisnya sebelum ubin key itu tidak menghitungnya
//          (kondisi sama untuk seluruh warp, jadi operasi warp tetap utuh).
//          __launch_bounds__(128, 2): dua block per SM. Tanpa angka kedua, ptxas
//          CUDA 13 memberi d32 terlalu sedikit register dan menumpahkan 8 byte ke stack.
//
// Versi (Versions) dalam berkas ini (argumen: Q, K, V, O, int T, int d_k, int H,
// float scale, int causal; shared memory dinamis TC_SMEM(D) byte):
//   attention_tensorcore_tf32_d32     d_k <= 32,  TF32
//   attention_tensorcore_tf32_d64     d_k <= 64,  TF32
//   attention_tensorcore_tf32_d128    d_k <= 128, TF32
//   attention_tensorcore_3xtf32_d32   d_k <= 32,  3xTF32
//   attention_tensorcore_3xtf32_d64   d_k <= 64,  3xTF32
//   attention_tensorcore_3xtf32_d128  d_k <= 128, 3xTF32
//
// Split-K (key dibagi antar-block, seperti fused v2): argumen v3 ditambah float* ML dan
// int splits, O menunjuk ke buffer parsial Op[splits][H][T][d_k]; grid.z = splits.
// Block blockIdx.z mengerjakan ubin key [z*tiles/splits, (z+1)*tiles/splits) ubin
// query-nya dan menulis o TANPA dibagi l ke Op[z] serta (m, l) ke ML[z][H][T][2]
// (m dalam satuan log2). Rentang kosong menulis parsial netral m = -inf, l = 0, o = 0.
// Format parsialnya sama dengan attention_fused_v2_split_dD, jadi penggabungnya
// attention_fused_v2_combine di kernels/attention_fused.cu.
//   attention_tensorcore_split_tf32_d32, attention_tensorcore_split_tf32_d64,
//   attention_tensorcore_split_tf32_d128                      TF32
//   attention_tensorcore_split_3xtf32_d32, attention_tensorcore_split_3xtf32_d64,
//   attention_tensorcore_split_3xtf32_d128                    3xTF32
//
// API tensor core: nvcuda::wmma, bentuk m16n16k8, precision::tf32 (sm_80 ke atas).
//   Di emulator CPU atensi.cudacpu, nvcuda::wmma datang dari cuda_cpu.h. Di GPU,
//   NVRTC tanpa CUDA Toolkit tidak punya <mma.h>, jadi bagian "wmma di GPU" di bawah
//   memberi potongan API yang sama (nama, tipe, arti) langsung dengan instruksi PTX
//   wmma.load / wmma.mma / wmma.store dan cvt.rna.tf32.f32 — instruksi yang juga
//   dihasilkan <mma.h>. Muatan dan simpanan WMMA memakai ruang .shared dengan alamat
//   32-bit dari __cvta_generic_to_shared (semua ubin ada di shared memory), jadi
//   menjadi LDS/STS, bukan LD/ST generik dengan alamat 64-bit.
//
// Kompilasi (NVRTC, kompiler yang dipakai CuPy; atensi.kernels.compile_report menjalankan
// persis ini):
//   nvrtcCreateProgram(&p, src, "kernels/attention_tensorcore.cu", 0, NULL, NULL);
//   nvrtcCompileProgram(p, 3, {"-std=c++17", "-arch=sm_80", "-Xptxas=-v"});

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

#ifndef TC_THREADS
#define TC_THREADS 128  // 4 warp
#endif
#ifndef TC_BQ
#define TC_BQ 64  // baris query per block (4 warp x 16)
#endif
#ifndef TC_BK
#define TC_BK 32  // key per ubin
#endif
// Ss dan Os untuk 4 warp; warp w memiliki 16 baris; lane 2r dan 2r+1 masing-masing 16 key baris r.
static_assert(TC_THREADS == 128 && TC_BQ == 16 * (TC_THREADS / 32) && TC_BK == 2 * 16,
              "fused v3: 4 warp x 16 baris, 2 lane x 16 key per baris: TC_THREADS = 128, "
              "TC_BQ = 64, TC_BK = 32");
#define TC_LDS (TC_BK + 8) // jarak baris Ss
#define TC_LOG2E 1.4426950408889634f
#define TC_FULL 0xffffffffu
// Byte shared memory dinamis untuk lebar D: Qs + Ks + Vs + Ss + Os.
#define TC_SMEM(D) ((TC_BQ * ((D) + 8) + 2 * TC_BK * ((D) + 8) + 4 * 16 * TC_LDS \
                     + TC_BQ * ((D) + 8)) * 4)

// ---- wmma di GPU: potongan API nvcuda::wmma yang dipakai kernel ini ----
#if defined(__CUDACPU__)
namespace wmma = nvcuda::wmma;
#else
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
namespace precision { struct tf32 {}; }
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment;
template <class L> struct fragment<matrix_a, 16, 16, 8, precision::tf32, L> {
    enum { num_elements = 4 };
    float x[4];
};
template <class L> struct fragment<matrix_b, 16, 16, 8, precision::tf32, L> {
    enum { num_elements = 4 };
    float x[4];
};
template <> struct fragment<accumulator, 16, 16, 8, float> {
    enum { num_elements = 8 };
    float x[8];
};

__device__ __forceinline__ float __float_to_tf32(float v)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return __uint_as_float(r);
}

// Semua operan WMMA v3 ada di shared memory. Alamat 32-bit ruang .shared membuat
// ptxas memakai LDS/STS; pointer generik 64-bit menjadi LD/ST generik ditambah
// aritmetika alamat 64-bit di setiap muatan.
__device__ __forceinline__ unsigned tc_shared(const float* p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

// Empat register .b32 operan A atau B; LAY = "row" atau "col"; p di shared memory.
#define TC_LOAD_AB(USE, LAYOUT, AB, LAY)                                                   \
    __device__ __forceinline__ void load_matrix_sync(                                      \
        fragment<USE, 16, 16, 8, precision::tf32, LAYOUT>& f, const float* p, unsigned ldm) \
    {                                                                                      \
        unsigned r0, r1, r2, r3;                                                           \
        asm volatile("wmma.load." AB ".sync.aligned." LAY ".m16n16k8.shared.tf32 "                \
                     "{%0, %1, %2, %3}, [%4], %5;"                                         \
                     : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(tc_shared(p)), "r"(ldm)); \
        f.x[0] = __uint_as_float(r0); f.x[1] = __uint_as_float(r1);                        \
        f.x[2] = __uint_as_float(r2); f.x[3] = __uint_as_float(r3);                        \
    }
TC_LOAD_AB(matrix_a, row_major, "a", "row")
TC_LOAD_AB(matrix_b, row_major, "b", "row")
TC_LOAD_AB(matrix_b, col_major, "b", "col")
#undef TC_LOAD_AB

typedef fragment<accumulator, 16, 16, 8, float> tc_acc;

// Register sementara, bukan c.x lewat pointer: fragmen tetap di register.
#define TC_LOAD_C(LAY)                                                                      \
    asm volatile("wmma.load.c.sync.aligned." LAY ".m16n16k8.shared.f32 "                    \
                 "{%0, %1, %2, %3, %4, %5, %6, %7}, [%8], %9;"                              \
                 : "=f"(r0), "=f"(r1), "=f"(r2), "=f"(r3),                                  \
                   "=f"(r4), "=f"(r5), "=f"(r6), "=f"(r7) : "r"(tc_shared(p)), "r"(ldm))
__device__ __forceinline__ void load_matrix_sync(tc_acc& c, const float* p, unsigned ldm, layout_t layout)
{
    float r0, r1, r2, r3, r4, r5, r6, r7;
    if (layout == mem_row_major) TC_LOAD_C("row");
    else TC_LOAD_C("col");
    c.x[0] = r0; c.x[1] = r1; c.x[2] = r2; c.x[3] = r3;
    c.x[4] = r4; c.x[5] = r5; c.x[6] = r6; c.x[7] = r7;
}
#undef TC_LOAD_C

__device__ __forceinline__ void store_matrix_sync(float* p, const tc_acc& c, unsigned ldm, layout_t layout)
{
    if (layout == mem_row_major)
        asm volatile("wmma.store.d.sync.aligned.row.m16n16k8.shared.f32 "
                     "[%0], {%1, %2, %3, %4, %5, %6, %7, %8}, %9;"
                     :: "r"(tc_shared(p)), "f"(c.x[0]), "f"(c.x[1]), "f"(c.x[2]), "f"(c.x[3]),
                        "f"(c.x[4]), "f"(c.x[5]), "f"(c.x[6]), "f"(c.x[7]), "r"(ldm) : "memory");
    else
        asm volatile("wmma.store.d.sync.aligned.col.m16n16k8.shared.f32 "
                     "[%0], {%1, %2, %3, %4, %5, %6, %7, %8}, %9;"
                     :: "r"(tc_shared(p)), "f"(c.x[0]), "f"(c.x[1]), "f"(c.x[2]), "f"(c.x[3]),
                        "f"(c.x[4]), "f"(c.x[5]), "f"(c.x[6]), "f"(c.x[7]), "r"(ldm) : "memory");
}

template <class U, class T, class L>
__device__ __forceinline__ void fill_fragment(fragment<U, 16, 16, 8, T, L>& f, float v)
{
    #pragma unroll
    for (int i = 0; i < f.num_elements; ++i) f.x[i] = v;
}

// D = A B + C; LB = layout B ("row" atau "col").
#define TC_MMA(LAYOUT_B, LB)                                                                \
    __device__ __forceinline__ void mma_sync(                                               \
        tc_acc& d, const fragment<matrix_a, 16, 16, 8, precision::tf32, row_major>& a,      \
        const fragment<matrix_b, 16, 16, 8, precision::tf32, LAYOUT_B>& b, const tc_acc& c) \
    {                                                                                       \
        float o0, o1, o2, o3, o4, o5, o6, o7;                                               \
        asm volatile("wmma.mma.sync.aligned.row." LB ".m16n16k8.f32.tf32.tf32.f32 "         \
                     "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, "               \
                     "{%12, %13, %14, %15}, {%16, %17, %18, %19, %20, %21, %22, %23};"      \
                     : "=f"(o0), "=f"(o1), "=f"(o2), "=f"(o3),                              \
                       "=f"(o4), "=f"(o5), "=f"(o6), "=f"(o7)                               \
                     : "r"(__float_as_uint(a.x[0])), "r"(__float_as_uint(a.x[1])),          \
                       "r"(__float_as_uint(a.x[2])), "r"(__float_as_uint(a.x[3])),          \
                       "r"(__float_as_uint(b.x[0])), "r"(__float_as_uint(b.x[1])),          \
                       "r"(__float_as_uint(b.x[2])), "r"(__float_as_uint(b.x[3])),          \
                       "f"(c.x[0]), "f"(c.x[1]), "f"(c.x[2]), "f"(c.x[3]),                  \
                       "f"(c.x[4]), "f"(c.x[5]), "f"(c.x[6]), "f"(c.x[7]));                 \
        d.x[0] = o0; d.x[1] = o1; d.x[2] = o2; d.x[3] = o3;                                 \
        d.x[4] = o4; d.x[5] = o5; d.x[6] = o6; d.x[7] = o7;                                 \
    }
TC_MMA(row_major, "row")
TC_MMA(col_major, "col")
#undef TC_MMA
}  // namespace wmma
#endif
// ---- akhir wmma di GPU ----

typedef wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> tc_a;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> tc_b_col;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> tc_b_row;
typedef wmma::fragment<wmma::accumulator, 16, 16, 8, float> tc_c;

// ---- v3 pecah: x = hi + lo, keduanya TF32 ----
// Operasi per elemen pada x[i] tidak bergantung pada penempatan elemen di lane.
template <class F>
__device__ __forceinline__ void tc_split(F& hi, F& lo)
{
    #pragma unroll
    for (int i = 0; i < hi.num_elements; ++i) {
        const float x = hi.x[i];
        hi.x[i] = wmma::__float_to_tf32(x);
        lo.x[i] = wmma::__float_to_tf32(x - hi.x[i]);
    }
}

template <class F>
__device__ __forceinline__ void tc_round(F& f)
{
    #pragma unroll
    for (int i = 0; i < f.num_elements; ++i) f.x[i] = wmma::__float_to_tf32(f.x[i]);
}

// acc += A B: satu MMA (TF32) atau tiga (3xTF32, suku kecil dulu, a_lo b_lo dibuang).
template <bool SPLIT3, class FB>
__device__ __forceinline__ void tc_mma(tc_c& acc, const tc_a& a_hi, const tc_a& a_lo,
                                       const FB& b_hi, const FB& b_lo)
{
    if (SPLIT3) {
        wmma::mma_sync(acc, a_lo, b_hi, acc);
        wmma::mma_sync(acc, a_hi, b_lo, acc);
    }
    wmma::mma_sync(acc, a_hi, b_hi, acc);
}
// ---- akhir v3 pecah ----

// Dimuat dari shared memory lalu dibulatkan (TF32) atau dipecah (3xTF32).
template <bool SPLIT3, class F>
__device__ __forceinline__ void tc_load(F& hi, F& lo, const float* p, unsigned ldm)
{
    wmma::load_matrix_sync(hi, p, ldm);
    if (SPLIT3) tc_split(hi, lo);
    else tc_round(hi);
}

// SPLIT = true: hanya rentang key ke-blockIdx.z dari `splits`, parsial ke O dan ML.
template <int D, bool SPLIT3, bool SPLIT = false>
__device__ __forceinline__ void attention_tensorcore_body(
    const float* Q, const float* K, const float* V, float* O,
    int T, int d_k, int H, float scale, int causal, float* smem,
    float* ML = nullptr, int splits = 1)
{
    constexpr int LD = D + 8;
    constexpr int NT = D / 16;   // ubin kolom 16 lebar untuk O
    constexpr int HALF = D / 2;  // kolom O per lane
    float* Qs = smem;                    // TC_BQ x LD
    float* Ks = Qs + TC_BQ * LD;         // TC_BK x LD
    float* Vs = Ks + TC_BK * LD;         // TC_BK x LD
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float* Ss = Vs + TC_BK * LD + warp * 16 * TC_LDS;       // 16 x TC_LDS milik warp
    float* Os = smem + (TC_BQ + 2 * TC_BK) * LD + 4 * 16 * TC_LDS + warp * 16 * LD;
    const int r = lane / 2, half = lane % 2;   // baris warp dan separuh milik lane
    const int q0 = blockIdx.x * TC_BQ;
    const int i = q0 + warp * 16 + r;          // baris query lane ini
    const int warp_last = q0 + warp * 16 + 15;
    int k_end = causal ? min(T, q0 + TC_BQ) : T;
    int k_begin = 0;
    if (SPLIT) {
        // Ubin key [0, tiles) dibagi rata; rentang ke-z bisa kosong.
        const int tiles = (k_end + TC_BK - 1) / TC_BK;
        const int t0 = (int)((long long)blockIdx.z * tiles / splits);
        const int t1 = (int)((long long)(blockIdx.z + 1) * tiles / splits);
        k_begin = t0 * TC_BK;
        k_end = min(k_end, t1 * TC_BK);
    }
    const float qscale = scale * TC_LOG2E;

    for (int h = blockIdx.y; h < H; h += gridDim.y) {
        const size_t head = (size_t)h * T * d_k;
        __syncthreads();  // head sebelumnya selesai memakai Qs
        // ---- v3 q: Q dikali scale * log2(e), nol di luar T dan d_k ----
        for (int e = threadIdx.x; e < TC_BQ * D; e += TC_THREADS) {
            const int row = q0 + e / D, c = e % D;
            Qs[(e / D) * LD + c] = (row < T && c < d_k)
                                       ? Q[head + (size_t)row * d_k + c] * qscale : 0.0f;
        }
        for (int c = half * HALF; c < (half + 1) * HALF; ++c) Os[r * LD + c] = 0.0f;
        float m = -INFINITY, l = 0.0f;  // per baris; l parsial per separuh
        // ---- akhir v3 q ----

        for (int k0 = k_begin; k0 < k_end; k0 += TC_BK) {
            __syncthreads();  // ubin sebelumnya selesai dibaca
            for (int e = threadIdx.x; e < TC_BK * D; e += TC_THREADS) {
                const int j = k0 + e / D, c = e % D;
                const bool ok = j < T && c < d_k;
                const size_t g = head + (size_t)j * d_k + c;
                Ks[(e / D) * LD + c] = ok ? K[g] : 0.0f;
                Vs[(e / D) * LD + c] = ok ? V[g] : 0.0f;
            }
            __syncthreads();
            if (causal && k0 > warp_last) continue;  // seluruh ubin di masa depan warp ini

            // ---- v3 skor: S = Q Kᵀ di tensor core ----
            tc_c s[2];
            wmma::fill_fragment(s[0], 0.0f);
            wmma::fill_fragment(s[1], 0.0f);
            #pragma unroll 1
            for (int kk = 0; kk < D / 8; ++kk) {
                tc_a a_hi, a_lo;
                tc_load<SPLIT3>(a_hi, a_lo, Qs + warp * 16 * LD + kk * 8, LD);
                #pragma unroll
                for (int n = 0; n < 2; ++n) {
                    // B = Kᵀ: B[c][j] = Ks[j][c], yaitu Ks dibaca kolom demi kolom.
                    tc_b_col b_hi, b_lo;
                    tc_load<SPLIT3>(b_hi, b_lo, Ks + n * 16 * LD + kk * 8, LD);
                    tc_mma<SPLIT3>(s[n], a_hi, a_lo, b_hi, b_lo);
                }
            }
            wmma::store_matrix_sync(Ss, s[0], TC_LDS, wmma::mem_row_major);
            wmma::store_matrix_sync(Ss + 16, s[1], TC_LDS, wmma::mem_row_major);
            __syncwarp();  // S dari semua lane terlihat
            // ---- akhir v3 skor ----

            // ---- v3 maks: online softmax per baris, di shared memory ----
            float* srow = Ss + r * TC_LDS + half * 16;
            float mt = -INFINITY;
            #pragma unroll
            for (int jj = 0; jj < 16; ++jj) {
                const int j = k0 + half * 16 + jj;
                if (j >= T || (causal && j > i)) srow[jj] = -INFINITY;
                mt = fmaxf(mt, srow[jj]);
            }
            mt = fmaxf(mt, __shfl_xor_sync(TC_FULL, mt, 1));  // separuh lainnya
            const float m_new = fmaxf(m, mt);
            const float ref = m_new == -INFINITY ? 0.0f : m_new;
            const float alpha = exp2f(m - ref);
            m = m_new;
            float sum = 0.0f;
            #pragma unroll
            for (int jj = 0; jj < 16; ++jj) {
                const float p = exp2f(srow[jj] - ref);
                srow[jj] = p;  // S menjadi P di tempat
                sum += p;
            }
            l = l * alpha + sum;
            __syncwarp();  // P terlihat semua lane
            // ---- akhir v3 maks ----

            // ---- v3 pv: O += P V di tensor core ----
            tc_a p_hi[TC_BK / 8], p_lo[TC_BK / 8];
            #pragma unroll
            for (int kk = 0; kk < TC_BK / 8; ++kk)
                tc_load<SPLIT3>(p_hi[kk], p_lo[kk], Ss + kk * 8, TC_LDS);
            __syncwarp();  // P sudah di register semua lane: Ss boleh ditimpa
            #pragma unroll 1
            for (int n = 0; n < NT; ++n) {
                // P V satu ubin key dijumlah dari nol, lalu ditambahkan ke O di CUDA core:
                // tensor core yang memotong (bukan membulatkan) penjumlahannya hanya
                // memotong 32 suku kecil, bukan O yang terus membesar sepanjang baris.
                // Model pemotongan scripts/tensorcore_gpu.py, 3xTF32, T = 4096, 16 baris
                // terakhir: galat relatif baris itu ~6e-6 menjadi ~1,4e-6. Harganya
                // (SASS sm_90, 3xtf32_d64): perulangan ini 213 -> 224 instruksi, tetapi
                // perulangan O *= alpha hilang; seluruh kernel 1432 -> 1376.
                tc_c pv;
                wmma::fill_fragment(pv, 0.0f);
                #pragma unroll
                for (int kk = 0; kk < TC_BK / 8; ++kk) {
                    tc_b_row v_hi, v_lo;
                    tc_load<SPLIT3>(v_hi, v_lo, Vs + kk * 8 * LD + n * 16, LD);
                    tc_mma<SPLIT3>(pv, p_hi[kk], p_lo[kk], v_hi, v_lo);
                }
                wmma::store_matrix_sync(Ss, pv, TC_LDS, wmma::mem_row_major);
                __syncwarp();  // P V dari semua lane terlihat
                float* orow = Os + r * LD + n * 16 + half * 8;  // 8 kolom baris r milik lane
                const float* prow = Ss + r * TC_LDS + half * 8;
                #pragma unroll
                for (int c = 0; c < 8; ++c) orow[c] = fmaf(orow[c], alpha, prow[c]);
                __syncwarp();  // Ss selesai dibaca sebelum ubin kolom berikutnya
            }
            // ---- akhir v3 pv ----
        }

        if (SPLIT) {
            // Parsial: o apa adanya dan (m, l) sekali per baris (kedua lane baris memegang m).
            const float tot = l + __shfl_xor_sync(TC_FULL, l, 1);
            const size_t row = ((size_t)blockIdx.z * H + h) * T + i;
            if (i < T) {
                if (half == 0) {
                    ML[row * 2] = m;
                    ML[row * 2 + 1] = tot;
                }
                for (int c = half * HALF; c < (half + 1) * HALF && c < d_k; ++c)
                    O[row * d_k + c] = Os[r * LD + c];
            }
            continue;
        }

        // ---- v3 tulis: O = o / l ----
        const float tot = l + __shfl_xor_sync(TC_FULL, l, 1);
        const float inv = tot > 0.0f ? 1.0f / tot : 0.0f;
        if (i < T)
            for (int c = half * HALF; c < (half + 1) * HALF && c < d_k; ++c)
                O[head + (size_t)i * d_k + c] = Os[r * LD + c] * inv;
        // ---- akhir v3 tulis ----
    }
}

extern "C" __global__ void __launch_bounds__(TC_THREADS, 2)
attention_tensorcore_tf32_d32(const float* Q, const float* K, const float* V,
                              float* O, int T, int d_k, int H, float scale,
                              int causal)
{
    extern __shared__ __align__(128) float tc_smem[];  // TC_SMEM(32) byte
    attention_tensorcore_body<32, false>(Q, K, V, O, T, d_k, H, scale, causal, tc_smem);
}

extern "C" __global__ void __launch_bounds__(TC_THREADS, 2)
attention_tensorcore_tf32_d64(const float* Q, const float* K, const float* V,
                              float* O, int T, int d_k, int H, float scale,
                              int causal)
{
    extern __shared__ __align__(128) float tc_smem[];  // TC_SMEM(64) byte
    attention_tensorcore_body<64, false>(Q, K, V, O, T, d_k, H, scale, causal, tc_smem);
}

extern "C" __global__ void __launch_bounds__(TC_THREADS, 2)
attention_tensorcore_tf32_d128(const float* Q, const float* K, const float* V,
                               float* O, int T, int d_k, int H, float scale,
                               int causal)
{
    extern __shared__ __align__(128) float tc_smem[];  // TC_SMEM(128) byte
    attention_tensorcore_body<128, false>(Q, K, V, O, T, d_k, H, scale, causal, tc_smem);
}

extern "C" __global__ void __launch_bounds__(TC_THREADS, 2)
attention_tensorcore_3xtf32_d32(const float* Q, const float* K, const float* V,
                                float* O, int T, int d_k, int H, float scale,
                                int causal)
{
    extern __shared__ __align__(128) float tc_smem[];  // TC_SMEM(32) byte
    attention_tensorcore_body<32, true>(Q, K, V, O, T, d_k, H, scale, causal, tc_smem);
}

extern "C" __global__ void __launch_bounds__(TC_THREADS, 2)
attention_tensorcore_3xtf32_d64(const float* Q, const float* K, const float* V,
                                float* O, int T, int d_k, int H, float scale,
                                int causal)
{
    extern __shared__ __align__(128) float tc_smem[];  // TC_SMEM(64) byte
    attention_tensorcore_body<64, true>(Q, K, V, O, T, d_k, H, scale, causal, tc_smem);
}

extern "C" __global__ void __launch_bounds__(TC_THREADS, 2)
attention_tensorcore_3xtf32_d128(const float* Q, const float* K, const float* V,
                                 float* O, int T, int d_k, int H, float scale,
                                 int causal)
{
    extern __shared__ __align__(128) float tc_smem[];  // TC_SMEM(128) byte
    attention_tensorcore_body<128, true>(Q, K, V, O, T, d_k, H, scale, causal, tc_smem);
}

// ---- split-K: parsial per rentang key (digabung oleh attention_fused_v2_combine) ----
extern "C" __global__ void __launch_bounds__(TC_THREADS, 2)
attention_tensorcore_split_tf32_d32(const float* Q, const float* K, const float* V,
                                    float* Op, float* ML, int T, int d_k, int H,
                                    float scale, int causal, int splits)
{
    extern __shared__ __align__(128) float tc_smem[];  // TC_SMEM(32) byte
    attention_tensorcore_body<32, false, true>(Q, K, V, Op, T, d_k, H, scale, causal, tc_smem,
                                               ML, splits);
}

extern "C" __global__ void __launch_bounds__(TC_THREADS, 2)
attention_tensorcore_split_tf32_d64(const float* Q, const float* K, const float* V,
                                    float* Op, float* ML, int T, int d_k, int H,
                                    float scale, int causal, int splits)
{
    extern __shared__ __align__(128) float tc_smem[];  // TC_SMEM(64) byte
    attention_tensorcore_body<64, false, true>(Q, K, V, Op, T, d_k, H, scale, causal, tc_smem,
                                               ML, splits);
}

extern "C" __global__ void __launch_bounds__(TC_THREADS, 2)
attention_tensorcore_split_tf32_d128(const float* Q, const float* K, const float* V,
                                     float* Op, float* ML, int T, int d_k, int H,
                                     float scale, int causal, int splits)
{
    extern __shared__ __align__(128) float tc_smem[];  // TC_SMEM(128) byte
    attention_tensorcore_body<128, false, true>(Q, K, V, Op, T, d_k, H, scale, causal, tc_smem,
                                               ML, splits);
}

extern "C" __global__ void __launch_bounds__(TC_THREADS, 2)
attention_tensorcore_split_3xtf32_d32(const float* Q, const float* K, const float* V,
                                      float* Op, float* ML, int T, int d_k, int H,
                                      float scale, int causal, int splits)
{
    extern __shared__ __align__(128) float tc_smem[];  // TC_SMEM(32) byte
    attention_tensorcore_body<32, true, true>(Q, K, V, Op, T, d_k, H, scale, causal, tc_smem,
                                               ML, splits);
}

extern "C" __global__ void __launch_bounds__(TC_THREADS, 2)
attention_tensorcore_split_3xtf32_d64(const float* Q, const float* K, const float* V,
                                      float* Op, float* ML, int T, int d_k, int H,
                                      float scale, int causal, int splits)
{
    extern __shared__ __align__(128) float tc_smem[];  // TC_SMEM(64) byte
    attention_tensorcore_body<64, true, true>(Q, K, V, Op, T, d_k, H, scale, causal, tc_smem,
                                               ML, splits);
}

extern "C" __global__ void __launch_bounds__(TC_THREADS, 2)
attention_tensorcore_split_3xtf32_d128(const float* Q, const float* K, const float* V,
                                       float* Op, float* ML, int T, int d_k, int H,
                                       float scale, int causal, int splits)
{
    extern __shared__ __align__(128) float tc_smem[];  // TC_SMEM(128) byte
    attention_tensorcore_body<128, true, true>(Q, K, V, Op, T, d_k, H, scale, causal, tc_smem,
                                               ML, splits);
}
// ---- akhir split-K ----
