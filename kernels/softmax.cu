// softmax.cu — ubah setiap baris skor menjadi bobot atensi yang berjumlah 1.
//
// Rumus (Math):
//          m = max_j S[r][j]           (maksimum baris, demi kestabilan)
//          A[r][j] = exp(S[r][j] - m) / sum_t exp(S[r][t] - m)
//          Baris yang seluruhnya -inf (tak ada yang boleh dilihat) menjadi nol
//          semua, tidak pernah NaN.
// Bentuk (Shapes):
//          S, A (rows, n), float32, C-contiguous (baris demi baris): S[r][j]
//          ada di S[r*n + j]. Untuk bobot berbentuk (H, T, T): rows = H*T,
//          n = T (softmax bekerja per baris, jadi head tidak perlu diurus
//          khusus).
//
// Pemetaan thread (Thread mapping):
//          satu block per baris; thread-thread block itu melangkah di
//          sepanjang baris (j = threadIdx.x, threadIdx.x + blockDim.x, ...),
//          jadi n boleh lebih besar daripada block.
//          block = (B, 1, 1), grid = (min(rows, 2^31 - 1), 1, 1); block
//          berpindah ke baris berikutnya (r += gridDim.x), jadi banyak baris
//          berapa pun bisa dikerjakan. r bertipe size_t: dengan int, r +
//          gridDim.x meluap di atas 2^31 - 1 dan menunjuk ke memori sebelum S.
//          Host memilih B = pangkat dua terkecil >= n, dibatasi ke [32, 256].
//          softmax_v1_shared butuh B pangkat dua <= 1024; softmax_v2_warp butuh
//          B kelipatan 32 <= 1024.
//          Tiga kali menyusuri baris: maksimum, jumlah eksponen (disimpan di
//          A), lalu pembagian dengan jumlah itu. Setiap thread hanya membaca
//          ulang entri yang ia tulis sendiri.
//
// Versi dalam berkas ini (Versions):
//   softmax_v1_shared  maksimum dan jumlah satu block lewat reduksi pohon di
//                      shared memory: log2(B) langkah, __syncthreads setelah
//                      setiap langkah.
//   softmax_v2_warp    tiga tahap yang sama; setiap warp (32 thread) mereduksi
//                      dengan __shfl_xor_sync (register, tanpa shared memory,
//                      tanpa __syncthreads), lalu B/32 hasil warp digabung
//                      lewat shared memory.
//   softmax_v2_warp_causal
//                      softmax_v2_warp untuk bobot kausal (H, T, T): baris r
//                      adalah posisi i = r % n (rows = H*T, n = T). Hanya
//                      S[r][0..i] yang dibaca; A[r][j] untuk j > i langsung
//                      ditulis 0 tanpa membaca S di sana. Separuh masa depan
//                      tidak pernah dibaca.
//
// Kompilasi (NVRTC, kompiler yang dipakai CuPy; atensi.kernels.compile_report
// menjalankan persis ini):
//   nvrtcCreateProgram(&p, src, "kernels/softmax.cu", 0, NULL, NULL);
//   nvrtcCompileProgram(p, 3, {"-std=c++17", "-arch=sm_90", "-Xptxas=-v"});
//   python -m atensi.kernels kernels/softmax.cu     # mencetak laporan ptxas

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

#ifndef SOFTMAX_MAX_BLOCK
#define SOFTMAX_MAX_BLOCK 1024
#endif
// Reduksi pohon v1 butuh pangkat dua; v2 menggabungkan hasil warp di satu warp (<= 32 warp).
static_assert(SOFTMAX_MAX_BLOCK >= 32 && SOFTMAX_MAX_BLOCK <= 1024 &&
                  (SOFTMAX_MAX_BLOCK & (SOFTMAX_MAX_BLOCK - 1)) == 0,
              "SOFTMAX_MAX_BLOCK harus pangkat dua dari 32 sampai 1024");
#define FULL_WARP 0xffffffffu

// ---- v1: reduksi pohon di shared memory -----------------------------

// Reduksi pohon red[0..blockDim.x) ke red[0]; blockDim.x harus pangkat dua.
// Dipanggil oleh setiap thread dalam block.
__device__ __forceinline__ float block_reduce_shared(float* red, float v,
                                                     bool is_max)
{
    int tid = threadIdx.x;
    red[tid] = v;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (tid < stride)
            red[tid] = is_max ? fmaxf(red[tid], red[tid + stride])
                              : red[tid] + red[tid + stride];
        __syncthreads();
    }
    float result = red[0];
    __syncthreads();  // semua sudah membaca red[0] sebelum red ditulis lagi
    return result;
}

extern "C" __global__ void softmax_v1_shared(const float* S, float* A,
                                             int rows, int n)
{
    __shared__ float red[SOFTMAX_MAX_BLOCK];
    for (size_t r = blockIdx.x; r < (size_t)rows; r += gridDim.x) {
        const float* s = S + (size_t)r * n;
        float* a = A + (size_t)r * n;

        float m = -INFINITY;
        for (int j = threadIdx.x; j < n; j += blockDim.x)
            m = fmaxf(m, s[j]);
        float row_max = block_reduce_shared(red, m, true);

        // Nilainya sama di setiap thread: seluruh block masuk cabang ini.
        if (row_max == -INFINITY) {
            for (int j = threadIdx.x; j < n; j += blockDim.x) a[j] = 0.0f;
            continue;
        }

        float sum = 0.0f;
        for (int j = threadIdx.x; j < n; j += blockDim.x) {
            float e = expf(s[j] - row_max);
            a[j] = e;
            sum += e;
        }
        float total = block_reduce_shared(red, sum, false);

        for (int j = threadIdx.x; j < n; j += blockDim.x)
            a[j] = a[j] / total;
    }
}

// ---- v2: warp shuffle ------------------------------------------------

// Kupu-kupu (butterfly) di 32 lane: setelah 5 langkah setiap lane memegang
// hasil seluruh warp.
__device__ __forceinline__ float warp_reduce(float v, bool is_max)
{
    for (int offset = 16; offset > 0; offset /= 2) {
        float other = __shfl_xor_sync(FULL_WARP, v, offset);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    return v;
}

// Setiap warp mereduksi di register, lane 0 menaruh hasil warp-nya, lalu
// setiap warp mereduksi sendiri hasil-hasil itu (tidak perlu siaran kedua).
// blockDim.x harus kelipatan 32: setiap shuffle melihat warp yang penuh.
__device__ __forceinline__ float block_reduce_warp(float* warp_results,
                                                   float v, bool is_max)
{
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int n_warps = blockDim.x / 32;
    v = warp_reduce(v, is_max);
    if (lane == 0) warp_results[warp] = v;
    __syncthreads();
    float identity = is_max ? -INFINITY : 0.0f;
    v = warp_reduce(lane < n_warps ? warp_results[lane] : identity, is_max);
    __syncthreads();  // semua sudah membaca warp_results sebelum ditimpa
    return v;
}

extern "C" __global__ void softmax_v2_warp(const float* S, float* A,
                                           int rows, int n)
{
    __shared__ float warp_results[SOFTMAX_MAX_BLOCK / 32];
    for (size_t r = blockIdx.x; r < (size_t)rows; r += gridDim.x) {
        const float* s = S + (size_t)r * n;
        float* a = A + (size_t)r * n;

        float m = -INFINITY;
        for (int j = threadIdx.x; j < n; j += blockDim.x)
            m = fmaxf(m, s[j]);
        float row_max = block_reduce_warp(warp_results, m, true);

        if (row_max == -INFINITY) {
            for (int j = threadIdx.x; j < n; j += blockDim.x) a[j] = 0.0f;
            continue;
        }

        float sum = 0.0f;
        for (int j = threadIdx.x; j < n; j += blockDim.x) {
            float e = expf(s[j] - row_max);
            a[j] = e;
            sum += e;
        }
        float total = block_reduce_warp(warp_results, sum, false);

        for (int j = threadIdx.x; j < n; j += blockDim.x)
            a[j] = a[j] / total;
    }
}

// ---- v2 kausal: masa depan tidak dibaca ------------------------------

extern "C" __global__ void softmax_v2_warp_causal(const float* S, float* A,
                                                  int rows, int n)
{
    __shared__ float warp_results[SOFTMAX_MAX_BLOCK / 32];
    for (size_t r = blockIdx.x; r < (size_t)rows; r += gridDim.x) {
        const float* s = S + (size_t)r * n;
        float* a = A + (size_t)r * n;
        int seen = (int)(r % n) + 1;  // key 0 .. i boleh dilihat: i + 1 nilai

        // Masa depan (j > i): bobot 0, S di sana tidak dibaca.
        for (int j = seen + threadIdx.x; j < n; j += blockDim.x) a[j] = 0.0f;

        float m = -INFINITY;
        for (int j = threadIdx.x; j < seen; j += blockDim.x)
            m = fmaxf(m, s[j]);
        float row_max = block_reduce_warp(warp_results, m, true);

        if (row_max == -INFINITY) {
            for (int j = threadIdx.x; j < seen; j += blockDim.x) a[j] = 0.0f;
            continue;
        }

        float sum = 0.0f;
        for (int j = threadIdx.x; j < seen; j += blockDim.x) {
            float e = expf(s[j] - row_max);
            a[j] = e;
            sum += e;
        }
        float total = block_reduce_warp(warp_results, sum, false);

        for (int j = threadIdx.x; j < seen; j += blockDim.x)
            a[j] = a[j] / total;
    }
}
