// attention_fused.cu — satu head utuh dalam satu kernel: O = softmax(mask(Q Kᵀ / √d_k)) V,
// tanpa pernah menyimpan skor atau bobot (T, T) (gaya flash, float32).
//
// Matematika (Math), online softmax. Untuk satu baris query i, key j = 0, 1, ... datang
// satu per satu:
//          s_j  = dot(Q[i], K[j]) * scale               scale = 1/sqrtf(d_k) atau 1
//          m_j  = max(m_{j-1}, s_j)                      maksimum sejauh ini, m_{-1} = -inf
//          l_j  = l_{j-1} * exp(m_{j-1} - m_j) + exp(s_j - m_j)          jumlah sejauh ini
//          o_j  = o_{j-1} * exp(m_{j-1} - m_j) + exp(s_j - m_j) * V[j]   (d_k nilai)
//          O[i] = o_terakhir / l_terakhir
//      Setiap kali maksimum naik, l dan o diskalakan ulang agar semua suku tetap
//      diukur terhadap maksimum yang sama; hasilnya sama persis dengan softmax tiga
//      langkah (dalam aritmetika eksak). Kausal: key j > i dilewati.
//
// Bentuk (Shapes): Q, K, V, O (H, T, d_k), float32, C-contiguous (row-major):
//          Q[h][i][c] adalah Q[(h*T + i)*d_k + c]. H = semua sumbu depan diratakan.
//          Didukung: 1 <= d_k <= 128 (FUSED_MAX_DK), T >= 1 berapa pun, H berapa pun.
//          Memori: O(T·d_k) di memori global, tidak ada buffer (T, T) di mana pun.
//
// Pemetaan thread (Thread mapping): block = (128, 1, 1); R = 128 / P baris query per
//          block, dengan P lane bertetangga berbagi satu baris query (P = 2, atau 4
//          untuk d_k > 64).
//          grid = (ceil(T / R), min(H, 65535), 1): satu block per (ubin query, head);
//          block berputar melewati head (h += gridDim.y), jadi H berapa pun bisa.
//          Setiap thread dari P thread sebuah baris memegang DH = D/P dari D kolom
//          berpadding (D = 32, 64 atau 128, yang terkecil yang memuat d_k) dan menyimpan
//          bagiannya dari q dan dari akumulator o di register (masing-masing DH <= 32
//          float: tanpa spill). P dot product parsial dijumlahkan dengan __shfl_xor_sync
//          (1 atau 2 langkah), sehingga setiap thread baris itu tahu s_j dan memperbarui
//          m, l, dan bagian o-nya sendiri. __launch_bounds__(128, 3) menjaga register
//          <= 168 per thread, sehingga tiga block (12 warp) muat di satu SM.
//          Key datang per ubin FUSED_BK = 32 baris K dan V, dimuat oleh seluruh block ke
//          shared memory (diisi nol melewati T dan melewati d_k, sehingga padding tidak
//          menambah apa pun pada dot product atau pada o), lalu dibaca setiap baris.
//          Di shared memory, P bagian satu baris ubin berjarak DH + FUSED_SKEW float:
//          P thread membaca bagian K[j] masing-masing pada saat yang sama, dan tanpa
//          geseran 4 float itu pembacaan 16 bita tersebut jatuh di bank yang sama
//          (konflik bank P arah).
//          Kausal: ubin query [q0, q0+R) hanya butuh key j < q0+R, jadi ubin key yang
//          seluruhnya di atas diagonal tidak pernah dimuat; di dalam ubin diagonal
//          setiap baris melewati j > i.
//
// Versi (Versions) dalam berkas ini (kode sama, satu per lebar berpadding D):
//   attention_fused_d32   d_k <= 32,  P = 2, R = 64 baris per block
//   attention_fused_d64   d_k <= 64,  P = 2, R = 64 baris per block
//   attention_fused_d128  d_k <= 128, P = 4, R = 32 baris per block
//   Argumen: (Q, K, V, O, int T, int d_k, int H, float scale, int causal).
//   v2, struktur FlashAttention-2 (lihat bagian "v2" di akhir berkas):
//   attention_fused_v2_d32   d_k <= 32, 4 warp, 64 baris query per block
//   attention_fused_v2_d64   d_k <= 64, 4 warp, 64 baris query per block,
//                            shared memory dinamis 56 KiB
//   attention_fused_v2_d128  d_k <= 128, sama, shared memory dinamis 104 KiB
//   Argumen v2: argumen v1 ditambah int vec (boleh dibaca sebagai float4).
//   attention_fused_v2_split_dD + attention_fused_v2_combine: key dibagi
//   antar-block (split-K) bila B*H*T terlalu kecil untuk mengisi GPU.
//
// Kompilasi (NVRTC, kompiler yang dipakai CuPy; atensi.kernels.compile_report menjalankan
// persis ini):
//   nvrtcCreateProgram(&p, src, "kernels/attention_fused.cu", 0, NULL, NULL);
//   nvrtcCompileProgram(p, 3, {"-std=c++17", "-arch=sm_90", "-Xptxas=-v"});
//   python -m atensi.kernels kernels/attention_fused.cu     # mencetak laporan ptxas

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

#ifndef FUSED_THREADS
#define FUSED_THREADS 128  // thread per block
#endif
#ifndef FUSED_BK
#define FUSED_BK 32  // key per ubin shared memory
#endif
#ifndef FUSED_MAX_DK
#define FUSED_MAX_DK 128
#endif
#ifndef FUSED_SKEW
#define FUSED_SKEW 4  // float di antara bagian-bagian satu baris ubin (lihat kepala berkas)
#endif
// P lane bertetangga berbagi satu baris di dalam satu warp; bagian baris ubin dibaca 16 byte;
// lebar berpadding terbesar 128; Ks + Vs D = 128 muat di 48 KiB shared memory statis.
static_assert(FUSED_THREADS >= 32 && FUSED_THREADS <= 1024 && FUSED_THREADS % 32 == 0 &&
                  FUSED_SKEW >= 0 && FUSED_SKEW % 4 == 0 && FUSED_MAX_DK == 128 && FUSED_BK >= 1 &&
                  2 * FUSED_BK * (128 + 4 * FUSED_SKEW) * 4 <= 48 * 1024,
              "fused v1: FUSED_THREADS kelipatan 32 (<= 1024), FUSED_SKEW kelipatan 4, "
              "FUSED_MAX_DK = 128, ubin K dan V D = 128 <= 48 KiB");
#define FULL_WARP 0xffffffffu

// Banyaknya float dalam satu ubin K atau V: FUSED_BK baris, P bagian, tiap bagian DH + FUSED_SKEW.
#define FUSED_TILE(D, P) (FUSED_BK * ((D) + (P) * FUSED_SKEW))

// ---- potongan 0: siapa mengerjakan apa ----
template <int D, int P>
__device__ __forceinline__ void attention_fused_body(
    const float* Q, const float* K, const float* V, float* O,
    int T, int d_k, int H, float scale, int causal, float* Ks, float* Vs)
{
    constexpr int DH = D / P;                  // kolom milik satu thread
    constexpr int R = FUSED_THREADS / P;       // baris query per block
    constexpr int RS = D + P * FUSED_SKEW;     // float per baris ubin
    const int tid = threadIdx.x;
    const int part = tid % P;
    const int c0 = part * DH;                  // kolom pertama bagian ini
    const int s0 = part * (DH + FUSED_SKEW);   // awalnya di baris ubin
    const int q0 = blockIdx.x * R;             // baris query pertama ubin ini
    const int row = q0 + tid / P;
    const bool row_ok = row < T;
    // Kausal: baris ubin ini tak melihat lewat baris terakhirnya.
    const int k_end = causal ? min(q0 + R, T) : T;
    // ---- akhir potongan 0 ----

    // ---- potongan 1: q ke register, akumulator dinolkan ----
    for (int h = blockIdx.y; h < H; h += gridDim.y) {
        const size_t head = (size_t)h * T * d_k;

        float q[DH], o[DH];
        #pragma unroll
        for (int c = 0; c < DH; ++c) {
            q[c] = (row_ok && c0 + c < d_k)
                       ? Q[head + (size_t)row * d_k + c0 + c] : 0.0f;
            o[c] = 0.0f;
        }
        float m = -INFINITY, l = 0.0f;
        // ---- akhir potongan 1 ----

        // ---- potongan 2: muat satu ubin K dan V ke shared memory ----
        for (int k0 = 0; k0 < k_end; k0 += FUSED_BK) {
            __syncthreads();  // ubin sebelumnya sudah selesai dibaca semua thread
            for (int e = tid; e < FUSED_BK * D; e += FUSED_THREADS) {
                const int j = k0 + e / D, c = e % D;
                const bool ok = j < T && c < d_k;
                const size_t g = head + (size_t)j * d_k + c;
                const int at = (e / D) * RS + c + (c / DH) * FUSED_SKEW;
                Ks[at] = ok ? K[g] : 0.0f;
                Vs[at] = ok ? V[g] : 0.0f;
            }
            __syncthreads();
            // ---- akhir potongan 2 ----

            // ---- potongan 3: skor s_j, satu key demi satu key ----
            // Jumlah putaran sama untuk seluruh block: setiap lane ikut shuffle.
            const int n = min(FUSED_BK, k_end - k0);
            for (int jj = 0; jj < n; ++jj) {
                const float* kj =
                    (const float*)__builtin_assume_aligned(Ks + jj * RS + s0, 16);
                float part0 = 0.0f, part1 = 0.0f;  // dua rantai penjumlahan
                #pragma unroll
                for (int c = 0; c < DH; c += 2) {
                    part0 += q[c] * kj[c];
                    part1 += q[c + 1] * kj[c + 1];
                }
                float dot = part0 + part1;
                #pragma unroll
                for (int step = 1; step < P; step *= 2)
                    dot += __shfl_xor_sync(FULL_WARP, dot, step);
                const float s = dot * scale;
                // ---- akhir potongan 3 ----

                // ---- potongan 4: lewati masa depan; maksimum naik -> skalakan ulang ----
                const int j = k0 + jj;
                // Key masa depan (atau baris di luar T): bobot 0, lewati.
                if (!row_ok || (causal && j > row)) continue;
                if (s > m) {  // maksimum naik: bawa l dan o ke skala baru
                    const float alpha = expf(m - s);  // exp(-inf) = 0 pada key pertama
                    l *= alpha;
                    #pragma unroll
                    for (int c = 0; c < DH; ++c) o[c] *= alpha;
                    m = s;
                }
                // ---- akhir potongan 4 ----

                // ---- potongan 5: tambahkan key j ke l dan o ----
                // s = m = -inf (semua skor sejauh ini -inf): bobot 0, bukan exp(NaN).
                const float p = s == -INFINITY ? 0.0f : expf(s - m);
                l += p;
                const float* vj =
                    (const float*)__builtin_assume_aligned(Vs + jj * RS + s0, 16);
                #pragma unroll
                for (int c = 0; c < DH; ++c) o[c] += p * vj[c];
                // ---- akhir potongan 5 ----
            }
        }

        // ---- potongan 6: tulis O = o / l ----
        if (row_ok) {
            // l >= 1 bila baris melihat satu key (maksimumnya memberi
            // exp(0)); l = 0 tetap dijaga.
            const float inv = l > 0.0f ? 1.0f / l : 0.0f;
            #pragma unroll
            for (int c = 0; c < DH; ++c)
                if (c0 + c < d_k)
                    O[head + (size_t)row * d_k + c0 + c] = o[c] * inv;
        }
        // ---- akhir potongan 6 ----
    }
}

// Sedikitnya tiga block 128 thread per SM: register tetap <= 168 (lihat kepala berkas).
extern "C" __global__ void __launch_bounds__(FUSED_THREADS, 3)
attention_fused_d32(const float* Q, const float* K, const float* V, float* O,
                    int T, int d_k, int H, float scale, int causal)
{
    alignas(16) __shared__ float Ks[FUSED_TILE(32, 2)];
    alignas(16) __shared__ float Vs[FUSED_TILE(32, 2)];
    attention_fused_body<32, 2>(Q, K, V, O, T, d_k, H, scale, causal, Ks, Vs);
}

// ---- potongan 7: pintu masuk untuk d_k <= 64 ----
extern "C" __global__ void __launch_bounds__(FUSED_THREADS, 3)
attention_fused_d64(const float* Q, const float* K, const float* V, float* O,
                    int T, int d_k, int H, float scale, int causal)
{
    alignas(16) __shared__ float Ks[FUSED_TILE(64, 2)];
    alignas(16) __shared__ float Vs[FUSED_TILE(64, 2)];
    attention_fused_body<64, 2>(Q, K, V, O, T, d_k, H, scale, causal, Ks, Vs);
}
// ---- akhir potongan 7 ----

extern "C" __global__ void __launch_bounds__(FUSED_THREADS, 3)
attention_fused_d128(const float* Q, const float* K, const float* V, float* O,
                     int T, int d_k, int H, float scale, int causal)
{
    alignas(16) __shared__ float Ks[FUSED_TILE(128, 4)];
    alignas(16) __shared__ float Vs[FUSED_TILE(128, 4)];
    attention_fused_body<128, 4>(Q, K, V, O, T, d_k, H, scale, causal, Ks, Vs);
}

// =====================================================================
// ---- v2: struktur FlashAttention-2 (FP32) ---------------------------
// =====================================================================
//
// attention_fused_v2_d32, attention_fused_v2_d64 (d_k <= 32, d_k <= 64).
// Argumen: (Q, K, V, O, int T, int d_k, int H, float scale, int causal,
//           int vec); vec = 1 bila d_k kelipatan 4 dan Q, K, V, O rata 16
//           byte (host yang memeriksa), sehingga baris-baris boleh dibaca
//           sebagai float4.
//
// Bedanya dengan v1:
//   - block = 4 warp (128 thread) dan FV2_BQ = 64 baris query; setiap warp
//     memiliki 16 baris. Lane = (lr, lc), lr = lane / 8, lc = lane % 8:
//     lane memegang ubin skor kecil 4 x 4 di register, baris lr*4 + a
//     (a = 0..3) dan key lc + 8b (b = 0..3) dari ubin key FV2_BK = 32.
//   - Q dikalikan scale * log2(e) sekali saat dimuat, jadi bobot cukup
//     exp2f(s - m) (satu instruksi) alih-alih expf.
//   - Maksimum dan skala ulang sekali per ubin key (bukan per key):
//     maksimum ubin satu baris dari 8 lane lewat 3 shuffle, lalu l dan o
//     dikalikan alpha = exp2f(m_lama - m_baru) satu kali.
//   - O += P V: setiap lane menulis bobotnya ke Ps (shared memory, 16 baris
//     x 32 key per warp), lalu membaca bobot 4 barisnya per key sebagai satu
//     float4 (bukan 4 __shfl_sync per key); V juga dibaca dari shared memory
//     sebagai float4. Setiap lane menambah 4 baris x D/8 kolom akumulator o
//     (kolom lc*4 + 32g + 0..3).
//   - Ubin K dan V dimuat bergantian ke dua penyangga (double buffer):
//     ubin berikutnya dimuat sementara ubin ini dihitung. Di sm_80 ke atas
//     dengan cp.async (salinan global -> shared tanpa lewat register);
//     di arsitektur lama dengan muatan biasa: urutan dan hasilnya sama,
//     hanya tidak tumpang-tindih. Emulator CPU atensi.cudacpu menjalankan
//     pipeline cp.async yang sama: tujuan salinan bernilai NaN sampai
//     wait_group menyelesaikan kelompoknya, jadi menunggu terlalu sedikit
//     terlihat sebagai NaN.
//   - Ks disimpan dengan swizzle XOR: potongan float4 ke-c4 dari baris
//     key j ada di posisi c4 ^ (j % 8). Lane lc membaca baris lc + 8b,
//     jadi 8 lane seperempat-warp jatuh di 8 kelompok bank berbeda tanpa
//     kolom padding.
//   - Kausal: ubin key di atas diagonal tidak dimuat; warp yang seluruh
//     barisnya berada sebelum ubin key itu tidak menghitungnya.
//   - __launch_bounds__(128, 4): register <= 128 per thread, jadi empat
//     block (16 warp) muat di satu SM; shared memory D = 64 (56 KiB, dinamis)
//     juga masih muat empat kali di sm_90.
//   - d_k <= 128 (attention_fused_v2_d128): kode sama dengan D = 128; Qs,
//     Ks, Vs dan Ps (104 KiB) di shared memory dinamis,
//     __launch_bounds__(128, 2).
//
// Split-K (gaya flash-decoding) untuk B*H*T kecil: bila block
// (head, ubin query) terlalu sedikit untuk mengisi semua SM, ubin-ubin key
// satu ubin query dibagi menjadi `splits` rentang, satu per blockIdx.z.
//   attention_fused_v2_split_dD (D = 32, 64, 128): argumen v2 ditambah
//     float* ML dan int splits; O menunjuk ke buffer parsial
//     Op[splits][H][T][d_k] yang diisi o TANPA dibagi l, dan
//     ML[splits][H][T][2] diisi (m, l): maksimum baris (satuan log2, karena
//     Q sudah dikali log2 e) dan jumlah bobot rentang itu. Rentang kosong
//     (semua key-nya di masa depan ubin query, atau splits > ubin key)
//     menulis parsial netral m = -inf, l = 0, o = 0.
//   attention_fused_v2_combine(Op, ML, O, T, d_k, H, splits): per baris
//     m = maks_s m_s, w_s = exp2(m_s - m), O = sum_s w_s o_s / sum_s w_s l_s.

#ifndef FV2_THREADS
#define FV2_THREADS 128
#endif
#ifndef FV2_BQ
#define FV2_BQ 64  // baris query per block (4 warp x 16)
#endif
#ifndef FV2_BK
#define FV2_BK 32  // key per ubin
#endif
// Lane (lr, lc) = (lane / 8, lane % 8): 4 baris x 4 key, key lc + 8b; 16 baris per warp.
static_assert(FV2_THREADS == 128 && FV2_BQ == 16 * (FV2_THREADS / 32) && FV2_BK == 8 * 4,
              "fused v2: 4 warp x 16 baris, 8 lane x 4 key: FV2_THREADS = 128, FV2_BQ = 64, FV2_BK = 32");
#define FV2_LOG2E 1.4426950408889634f

// Empat float bersebelahan, rata 16 byte (satu muatan vektor 128 bit). Di
// emulator CPU float4 juga memeriksa kerataan: alamat yang bukan kelipatan
// 16 byte dilaporkan, seperti "misaligned address" di GPU.
typedef float4 fv2_vec;

// Salin 16 byte global -> shared; bytes = 0 mengisi nol tanpa membaca.
// ---- v2 salin: cp.async di sm_80 ke atas ----
__device__ __forceinline__ void fv2_copy16(fv2_vec* dst, const float* src,
                                           bool ok)
{
#if defined(__CUDACPU__)
    // Emulator CPU: cp.async yang sama (tujuan NaN sampai ditunggu).
    cudacpu_cp_async(dst, src, 16, ok ? 16 : 0);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(s), "l"(src), "r"(ok ? 16 : 0));
#else
    *dst = ok ? *(const fv2_vec*)src : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#endif
}
// ---- akhir v2 salin ----

__device__ __forceinline__ void fv2_commit()
{
#if defined(__CUDACPU__)
    cudacpu_cp_async_commit();
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::);
#endif
}

// Tunggu salinan cp.async: one_pending = true membiarkan kelompok terakhir
// (ubin berikutnya) tetap berjalan, false menunggu semuanya. Tanpa cp.async
// muatan sudah selesai, jadi tidak ada yang ditunggu.
__device__ __forceinline__ void fv2_wait(bool one_pending)
{
#if defined(__CUDACPU__)
    cudacpu_cp_async_wait(one_pending ? 1 : 0);
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    if (one_pending) asm volatile("cp.async.wait_group 1;\n" ::);
    else asm volatile("cp.async.wait_group 0;\n" ::);
#endif
}

// Empat nilai baris `row` kolom c..c+3 (nol di luar T dan d_k).
__device__ __forceinline__ fv2_vec fv2_load4(const float* base, int row,
                                            int c, int T, int d_k)
{
    const float* r = base + (size_t)row * d_k;
    const bool in = row < T;
    return make_float4((in && c < d_k) ? r[c] : 0.0f,
                       (in && c + 1 < d_k) ? r[c + 1] : 0.0f,
                       (in && c + 2 < d_k) ? r[c + 2] : 0.0f,
                       (in && c + 3 < d_k) ? r[c + 3] : 0.0f);
}

// Muat ubin K (di-swizzle) dan V baris k0 .. k0+FV2_BK-1 ke satu penyangga.
template <int D>
__device__ __forceinline__ void fv2_load_kv(
    const float* K, const float* V, fv2_vec* Ks, fv2_vec* Vs,
    int k0, int T, int d_k, bool vec)
{
    constexpr int NC4 = D / 4;  // float4 per baris
    for (int e = threadIdx.x; e < FV2_BK * NC4; e += FV2_THREADS) {
        const int jj = e / NC4, c4 = e % NC4, j = k0 + jj, c = c4 * 4;
        fv2_vec* kd = Ks + jj * NC4 + (c4 ^ (jj % 8));
        fv2_vec* vd = Vs + jj * NC4 + c4;
        if (vec) {
            const bool ok = j < T && c < d_k;
            const size_t g = ok ? (size_t)j * d_k + c : 0;
            fv2_copy16(kd, K + g, ok);
            fv2_copy16(vd, V + g, ok);
        } else {
            *kd = fv2_load4(K, j, c, T, d_k);
            *vd = fv2_load4(V, j, c, T, d_k);
        }
    }
}

// SPLIT = false: O = hasil akhir. SPLIT = true: block blockIdx.z hanya
// mengerjakan rentang key ke-blockIdx.z dari `splits` rentang, dan menulis
// o tanpa dibagi ke O[blockIdx.z] serta (m, l) ke ML (lihat di atas).
template <int D, bool SPLIT = false>
__device__ __forceinline__ void attention_fused_v2_body(
    const float* Q, const float* K, const float* V, float* O,
    int T, int d_k, int H, float scale, int causal, int vec,
    fv2_vec* Qs, fv2_vec* Ks, fv2_vec* Vs, fv2_vec* Ps,
    float* ML = nullptr, int splits = 1)
{
    constexpr int NC4 = D / 4;
    constexpr int NG = D / 32;       // kelompok 4 kolom per lane (1, 2 atau 4)
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int lr = lane / 8, lc = lane % 8;
    const int q0 = blockIdx.x * FV2_BQ;
    const int r0 = warp * 16 + lr * 4;          // baris pertama lane di ubin
    const int warp_last = q0 + warp * 16 + 15;  // baris terakhir warp ini
    fv2_vec* Pw = Ps + warp * FV2_BK * 4;       // bobot p ubin warp ini
    int k_end = causal ? min(T, q0 + FV2_BQ) : T;
    int k_begin = 0;
    if (SPLIT) {
        // Ubin key [0, tiles) ubin query ini dibagi rata: rentang ke-z
        // berisi ubin [z*tiles/splits, (z+1)*tiles/splits), bisa kosong.
        const int tiles = (k_end + FV2_BK - 1) / FV2_BK;
        const int z = blockIdx.z;
        const int t0 = (int)((long long)z * tiles / splits);
        const int t1 = (int)((long long)(z + 1) * tiles / splits);
        k_begin = t0 * FV2_BK;
        k_end = min(k_end, t1 * FV2_BK);
    }
    const float qscale = scale * FV2_LOG2E;

    for (int h = blockIdx.y; h < H; h += gridDim.y) {
        const size_t head = (size_t)h * T * d_k;
        const float* Qh = Q + head;
        const float* Kh = K + head;
        const float* Vh = V + head;
        __syncthreads();  // head sebelumnya selesai memakai Qs, Ks, Vs

        // Ubin key pertama mulai disalin, lalu Q (dikali scale*log2 e).
        // (Rentang split kosong: tidak ada ubin, hanya parsial netral.)
        if (k_begin < k_end) {
            fv2_load_kv<D>(Kh, Vh, Ks, Vs, k_begin, T, d_k, vec);
            fv2_commit();
        }
        // ---- v2 q: Q dikali scale * log2(e) ----
        for (int e = threadIdx.x; e < FV2_BQ * NC4; e += FV2_THREADS) {
            fv2_vec v = fv2_load4(Qh, q0 + e / NC4, (e % NC4) * 4, T, d_k);
            v.x *= qscale; v.y *= qscale; v.z *= qscale; v.w *= qscale;
            Qs[e] = v;
        }
        // ---- akhir v2 q ----

        float o[4][4 * NG], m[4], l[4];
        #pragma unroll
        for (int a = 0; a < 4; ++a) {
            m[a] = -INFINITY;
            l[a] = 0.0f;
            #pragma unroll
            for (int u = 0; u < 4 * NG; ++u) o[a][u] = 0.0f;
        }

        // ---- v2 penyangga: dua ubin K/V bergantian ----
        // k_begin = 0, kecuali di split-K (rentang key milik block ini).
        for (int k0 = k_begin, stage = 0; k0 < k_end; k0 += FV2_BK, stage ^= 1) {
            const fv2_vec* Kt = Ks + stage * FV2_BK * NC4;
            const fv2_vec* Vt = Vs + stage * FV2_BK * NC4;
            // Ubin berikutnya ke penyangga lain selagi ubin ini dihitung.
            const bool next = k0 + FV2_BK < k_end;
            if (next) {
                fv2_load_kv<D>(Kh, Vh, Ks + (stage ^ 1) * FV2_BK * NC4,
                               Vs + (stage ^ 1) * FV2_BK * NC4,
                               k0 + FV2_BK, T, d_k, vec);
                fv2_commit();
            }
            fv2_wait(next);
            __syncthreads();  // ubin ini (dan Qs) terlihat semua thread

            // Warp yang semua barisnya sebelum ubin ini: tidak ada kerja
            // (kondisi sama untuk seluruh warp, jadi shuffle tetap utuh).
            if (!causal || k0 <= warp_last) {
            // ---- akhir v2 penyangga ----
                // ---- v2 skor: ubin mikro 4 x 4 di register ----
                // Skor 4 x 4 di register: s[a][b] = q(baris a) . k(key b).
                float s[4][4];
                #pragma unroll
                for (int a = 0; a < 4; ++a)
                    #pragma unroll
                    for (int b = 0; b < 4; ++b) s[a][b] = 0.0f;
                #pragma unroll 1
                for (int c4 = 0; c4 < NC4; ++c4) {
                    fv2_vec qv[4], kv[4];
                    #pragma unroll
                    for (int a = 0; a < 4; ++a) qv[a] = Qs[(r0 + a) * NC4 + c4];
                    #pragma unroll
                    for (int b = 0; b < 4; ++b)
                        kv[b] = Kt[(lc + 8 * b) * NC4 + (c4 ^ lc)];
                    #pragma unroll
                    for (int a = 0; a < 4; ++a)
                        #pragma unroll
                        for (int b = 0; b < 4; ++b) {
                            // Rantai fmaf: 4 FFMA, bukan FMUL + 3 FFMA + FADD.
                            float t = fmaf(qv[a].x, kv[b].x, s[a][b]);
                            t = fmaf(qv[a].y, kv[b].y, t);
                            t = fmaf(qv[a].z, kv[b].z, t);
                            s[a][b] = fmaf(qv[a].w, kv[b].w, t);
                        }
                }
                // ---- akhir v2 skor ----

                // ---- v2 maks: satu maksimum per ubin key ----
                #pragma unroll
                for (int a = 0; a < 4; ++a) {
                    const int i = q0 + r0 + a;
                    // Masa depan dan key di luar T: skor -inf, bobot 0.
                    float mt = -INFINITY;
                    #pragma unroll
                    for (int b = 0; b < 4; ++b) {
                        const int j = k0 + lc + 8 * b;
                        if (j >= T || (causal && j > i)) s[a][b] = -INFINITY;
                        mt = fmaxf(mt, s[a][b]);
                    }
                    // Maksimum ubin baris ini: 8 lane dengan lr yang sama.
                    #pragma unroll
                    for (int step = 1; step < 8; step *= 2)
                        mt = fmaxf(mt, __shfl_xor_sync(FULL_WARP, mt, step));
                    const float m_new = fmaxf(m[a], mt);
                    // Semua skor sejauh ini -inf: acuan 0, bukan -inf - -inf.
                    const float ref = m_new == -INFINITY ? 0.0f : m_new;
                    const float alpha = exp2f(m[a] - ref);  // sekali per ubin
                    m[a] = m_new;
                    float sum = 0.0f;
                    #pragma unroll
                    for (int b = 0; b < 4; ++b) {
                        s[a][b] = exp2f(s[a][b] - ref);  // s menjadi bobot p
                        sum += s[a][b];
                    }
                    l[a] = l[a] * alpha + sum;  // jumlah parsial lane ini
                    #pragma unroll
                    for (int u = 0; u < 4 * NG; ++u) o[a][u] *= alpha;
                }
                // ---- akhir v2 maks ----

                // ---- v2 pv: O += P V ----
                // Bobot p ke shared memory milik warp ini: Pw[jj][baris],
                // empat baris satu lane sebagai satu float4.
                #pragma unroll
                for (int b = 0; b < 4; ++b)
                    Pw[(lc + 8 * b) * 4 + lr] =
                        make_float4(s[0][b], s[1][b], s[2][b], s[3][b]);
                __syncwarp();  // bobot semua lane terlihat di warp ini
                // O += P V: bobot key jj = src + 8b untuk empat baris lane
                // ini, satu float4 dari Pw.
                #pragma unroll
                for (int b = 0; b < 4; ++b) {
                    #pragma unroll 4
                    for (int src = 0; src < 8; ++src) {
                        const int jj = src + 8 * b;
                        const fv2_vec p4 = Pw[jj * 4 + lr];
                        const float p[4] = {p4.x, p4.y, p4.z, p4.w};
                        #pragma unroll
                        for (int g = 0; g < NG; ++g) {
                            const fv2_vec v = Vt[jj * NC4 + lc + 8 * g];
                            #pragma unroll
                            for (int a = 0; a < 4; ++a) {
                                o[a][4 * g + 0] += p[a] * v.x;
                                o[a][4 * g + 1] += p[a] * v.y;
                                o[a][4 * g + 2] += p[a] * v.z;
                                o[a][4 * g + 3] += p[a] * v.w;
                            }
                        }
                    }
                }
                // ---- akhir v2 pv ----
            }
            __syncthreads();  // penyangga ini boleh ditimpa dua ubin lagi
        }

        // l lengkap = jumlah l parsial 8 lane; O = o / l.
        #pragma unroll
        for (int a = 0; a < 4; ++a) {
            float tot = l[a];
            #pragma unroll
            for (int step = 1; step < 8; step *= 2)
                tot += __shfl_xor_sync(FULL_WARP, tot, step);
            const int i = q0 + r0 + a;
            if (i >= T) continue;
            if (SPLIT) {
                // Parsial: o apa adanya, (m, l) sekali per baris.
                const size_t part = (size_t)blockIdx.z * H * T;
                if (lc == 0) {
                    float* ml = ML + (part + (size_t)h * T + i) * 2;
                    ml[0] = m[a];
                    ml[1] = tot;
                }
                #pragma unroll
                for (int g = 0; g < NG; ++g)
                    #pragma unroll
                    for (int u = 0; u < 4; ++u) {
                        const int c = lc * 4 + 32 * g + u;
                        if (c < d_k)
                            O[(part + (size_t)h * T + i) * d_k + c] =
                                o[a][4 * g + u];
                    }
                continue;
            }
            const float inv = tot > 0.0f ? 1.0f / tot : 0.0f;
            #pragma unroll
            for (int g = 0; g < NG; ++g)
                #pragma unroll
                for (int u = 0; u < 4; ++u) {
                    const int c = lc * 4 + 32 * g + u;
                    if (c < d_k)
                        O[head + (size_t)i * d_k + c] = o[a][4 * g + u] * inv;
                }
        }
    }
}

extern "C" __global__ void __launch_bounds__(FV2_THREADS, 4)
attention_fused_v2_d32(const float* Q, const float* K, const float* V,
                       float* O, int T, int d_k, int H, float scale,
                       int causal, int vec)
{
    __shared__ fv2_vec Qs[FV2_BQ * 8];
    __shared__ fv2_vec Ks[2 * FV2_BK * 8];
    __shared__ fv2_vec Vs[2 * FV2_BK * 8];
    __shared__ fv2_vec Ps[FV2_BQ * FV2_BK / 4];
    attention_fused_v2_body<32>(Q, K, V, O, T, d_k, H, scale, causal, vec,
                                Qs, Ks, Vs, Ps);
}

// d_k <= 64 dan d_k <= 128: Qs (64 x D), Ks dan Vs (2 x 32 x D) dan Ps
// (64 x 32) lebih dari 48 KiB shared memory statis (56 KiB untuk D = 64,
// 104 KiB untuk D = 128), jadi shared memory dinamis (host menaikkan
// max_dynamic_shared_size_bytes). D = 64: empat block (224 KiB) masih muat
// di satu SM sm_90. D = 128: akumulator o 4 x 16 per lane, register <= 255
// dengan dua block per SM.
#define FV2_SMEM(D) (((FV2_BQ + 4 * FV2_BK) * (D) + FV2_BQ * FV2_BK) * 4)  // byte Qs + Ks + Vs + Ps

// Potong shared memory dinamis menjadi Qs, Ks, Vs, Ps (satuan float4).
template <int D>
__device__ __forceinline__ void fv2_carve(fv2_vec* smem, fv2_vec*& Qs,
                                          fv2_vec*& Ks, fv2_vec*& Vs,
                                          fv2_vec*& Ps)
{
    Qs = smem;
    Ks = Qs + FV2_BQ * D / 4;
    Vs = Ks + 2 * FV2_BK * D / 4;
    Ps = Vs + 2 * FV2_BK * D / 4;
}

extern "C" __global__ void __launch_bounds__(FV2_THREADS, 4)
attention_fused_v2_d64(const float* Q, const float* K, const float* V,
                       float* O, int T, int d_k, int H, float scale,
                       int causal, int vec)
{
    extern __shared__ fv2_vec fv2_smem[];
    fv2_vec *Qs, *Ks, *Vs, *Ps;
    fv2_carve<64>(fv2_smem, Qs, Ks, Vs, Ps);
    attention_fused_v2_body<64>(Q, K, V, O, T, d_k, H, scale, causal, vec,
                                Qs, Ks, Vs, Ps);
}

extern "C" __global__ void __launch_bounds__(FV2_THREADS, 2)
attention_fused_v2_d128(const float* Q, const float* K, const float* V,
                        float* O, int T, int d_k, int H, float scale,
                        int causal, int vec)
{
    extern __shared__ fv2_vec fv2_smem[];
    fv2_vec *Qs, *Ks, *Vs, *Ps;
    fv2_carve<128>(fv2_smem, Qs, Ks, Vs, Ps);
    attention_fused_v2_body<128>(Q, K, V, O, T, d_k, H, scale, causal, vec,
                                 Qs, Ks, Vs, Ps);
}

// ---- split-K: parsial per rentang key, lalu penggabungan ----
extern "C" __global__ void __launch_bounds__(FV2_THREADS, 4)
attention_fused_v2_split_d32(const float* Q, const float* K, const float* V,
                             float* Op, float* ML, int T, int d_k, int H,
                             float scale, int causal, int vec, int splits)
{
    __shared__ fv2_vec Qs[FV2_BQ * 8];
    __shared__ fv2_vec Ks[2 * FV2_BK * 8];
    __shared__ fv2_vec Vs[2 * FV2_BK * 8];
    __shared__ fv2_vec Ps[FV2_BQ * FV2_BK / 4];
    attention_fused_v2_body<32, true>(Q, K, V, Op, T, d_k, H, scale, causal,
                                      vec, Qs, Ks, Vs, Ps, ML, splits);
}

extern "C" __global__ void __launch_bounds__(FV2_THREADS, 4)
attention_fused_v2_split_d64(const float* Q, const float* K, const float* V,
                             float* Op, float* ML, int T, int d_k, int H,
                             float scale, int causal, int vec, int splits)
{
    extern __shared__ fv2_vec fv2_smem[];
    fv2_vec *Qs, *Ks, *Vs, *Ps;
    fv2_carve<64>(fv2_smem, Qs, Ks, Vs, Ps);
    attention_fused_v2_body<64, true>(Q, K, V, Op, T, d_k, H, scale, causal,
                                      vec, Qs, Ks, Vs, Ps, ML, splits);
}

extern "C" __global__ void __launch_bounds__(FV2_THREADS, 2)
attention_fused_v2_split_d128(const float* Q, const float* K, const float* V,
                              float* Op, float* ML, int T, int d_k, int H,
                              float scale, int causal, int vec, int splits)
{
    extern __shared__ fv2_vec fv2_smem[];
    fv2_vec *Qs, *Ks, *Vs, *Ps;
    fv2_carve<128>(fv2_smem, Qs, Ks, Vs, Ps);
    attention_fused_v2_body<128, true>(Q, K, V, Op, T, d_k, H, scale, causal,
                                       vec, Qs, Ks, Vs, Ps, ML, splits);
}

// Satu thread per (baris, kolom), perulangan grid-stride. Parsial netral
// (m_s = -inf) mendapat bobot exp2(-inf) = 0; baris tanpa key sah sama
// sekali (m = -inf) menjadi 0, bukan NaN.
extern "C" __global__ void __launch_bounds__(FV2_THREADS)
attention_fused_v2_combine(const float* Op, const float* ML, float* O,
                           int T, int d_k, int H, int splits)
{
    const size_t rows = (size_t)H * T, n = rows * d_k;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (size_t)gridDim.x * blockDim.x) {
        const size_t r = e / d_k;
        float m = -INFINITY;
        for (int s = 0; s < splits; ++s)
            m = fmaxf(m, ML[(s * rows + r) * 2]);
        float l = 0.0f, o = 0.0f;
        if (m != -INFINITY) {
            for (int s = 0; s < splits; ++s) {
                const float w = exp2f(ML[(s * rows + r) * 2] - m);
                l += w * ML[(s * rows + r) * 2 + 1];
                o += w * Op[s * n + e];
            }
        }
        O[e] = l > 0.0f ? o / l : 0.0f;
    }
}
// ---- akhir split-K ----
