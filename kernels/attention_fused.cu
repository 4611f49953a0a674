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
//
// Kompilasi (NVRTC, kompiler yang dipakai CuPy; atensi.kernels.compile_report menjalankan
// persis ini):
//   nvrtcCreateProgram(&p, src, "kernels/attention_fused.cu", 0, NULL, NULL);
//   nvrtcCompileProgram(p, 3, {"-std=c++17", "-arch=sm_90", "-Xptxas=-v"});
//   python -m atensi.kernels kernels/attention_fused.cu     # mencetak laporan ptxas

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

#define FUSED_THREADS 128  // thread per block
#define FUSED_BK 32        // key per ubin shared memory
#define FUSED_MAX_DK 128
#define FUSED_SKEW 4       // float di antara bagian-bagian satu baris ubin (lihat kepala berkas)
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
