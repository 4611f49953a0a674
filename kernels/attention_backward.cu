// attention_backward.cu — langkah mundur satu head atensi: dari dO ke dQ, dK, dV.
//
// Rumus (Math):
//          forward   S = Q Kᵀ · s (s = 1/sqrt(d_k), atau 1), mask, A = softmax(S), O = A V
//          backward, dengan dO = ∂L/∂O (satu kernel per rumus):
//            dV = Aᵀ dO                        dV[j][c] = sum_i A[i][j] * dO[i][c]
//            dA = dO Vᵀ                        dA[i][j] = sum_c dO[i][c] * V[j][c]
//            dS = A ⊙ (dA − rowsum(dA ⊙ A))    per baris i: D = sum_j dA[i][j] * A[i][j]
//                                              dS[i][j] = A[i][j] * (dA[i][j] - D)
//            dQ = dS K · s                     dQ[i][c] = s * sum_j dS[i][j] * K[j][c]
//            dK = dSᵀ Q · s                    dK[j][c] = s * sum_i dS[i][j] * Q[i][c]
//          Mask tidak punya gradien sendiri: entri yang dimask punya A = 0, jadi dS-nya 0.
//          A berasal dari kernel forward (scores.cu, softmax.cu), atau dihitung ulang
//          dari log-sum-exp per baris L yang disimpan: A[i][j] = exp(S[i][j] - L[i]).
// Bentuk (Shapes):
//          Q, K, dQ, dK (H, T, d_k); V, dO, dV (H, T, d_v); S, A, dA, dS (H, T, T);
//          L (H, T). float32, C-contiguous (baris demi baris): Q[h][i][c] ada di
//          Q[(h*T + i)*d_k + c], A[h][i][j] ada di A[(h*T + i)*T + j]. H = hasil kali
//          semua sumbu depan.
//
// Pemetaan thread (Thread mapping):
//   attention_backward_dv_v1, _dq_v1, _dk_v1: satu thread per elemen keluaran (baris, c).
//          block = (32, 8): threadIdx.x -> c (satu warp membaca 32 nilai bertetangga
//          dari satu baris: coalesced), threadIdx.y -> baris;
//          grid = (ceil(d/32), ceil(T/8), min(H, 65535)).
//   attention_backward_da_v1: satu thread per (i, j), seperti scores_v1_naive.
//          block = (16, 16): threadIdx.x -> j, threadIdx.y -> i;
//          grid = (ceil(T/16), ceil(T/16), min(H, 65535)).
//          Di keempatnya sumbu z berputar atas head (h += gridDim.z), jadi H boleh
//          lebih dari 65535; thread di luar T atau d tidak mengerjakan apa pun.
//   softmax_backward_v1, attention_weights_from_lse_v1: satu block per baris
//          (rows = H*T, n = T), thread melangkah di sepanjang baris; block = (B, 1, 1)
//          dengan B kelipatan 32 (<= 1024), grid = (min(rows, 2^31 - 1), 1, 1), block
//          berpindah ke baris berikutnya (r += gridDim.x; r bertipe size_t agar
//          tidak meluap di atas 2^31 - 1).
//
// Versi dalam berkas ini (Versions), masing-masing satu:
//   attention_weights_from_lse_v1  A = exp(S - L): bobot yang sama, tanpa softmax lagi.
//   attention_backward_dv_v1       dV = Aᵀ dO
//   attention_backward_da_v1       dA = dO Vᵀ
//   softmax_backward_v1            dS = A ⊙ (dA − D), D lewat reduksi warp shuffle
//   attention_backward_dq_v1       dQ = dS K · s
//   attention_backward_dk_v1       dK = dSᵀ Q · s
//   Tidak ada yang menganggap mask: bobot nol tetap dikalikan.
//
// Kompilasi (NVRTC, kompiler yang dipakai CuPy; atensi.kernels.compile_report
// menjalankan persis ini):
//   nvrtcCreateProgram(&p, src, "kernels/attention_backward.cu", 0, NULL, NULL);
//   nvrtcCompileProgram(p, 3, {"-std=c++17", "-arch=sm_90", "-Xptxas=-v"});
//   python -m atensi.kernels kernels/attention_backward.cu     # mencetak laporan ptxas

#ifndef BACKWARD_MAX_BLOCK
#define BACKWARD_MAX_BLOCK 1024
#endif
// Satu warp menjumlahkan hasil semua warp: block kelipatan 32, paling banyak 32 warp.
static_assert(BACKWARD_MAX_BLOCK >= 32 && BACKWARD_MAX_BLOCK <= 1024 && BACKWARD_MAX_BLOCK % 32 == 0,
              "BACKWARD_MAX_BLOCK harus kelipatan 32 dari 32 sampai 1024");
#define FULL_WARP 0xffffffffu

// ---- A sekali lagi, dari log-sum-exp yang disimpan -----------------------

// L[r] = m + log(sum_j exp(S[r][j] - m)), jadi exp(S[r][j] - L[r]) adalah
// bobot softmax. Skor yang dimask (-inf) memberi exp(-inf) = 0 tanpa
// perlakuan khusus.
extern "C" __global__ void attention_weights_from_lse_v1(
    const float* S, const float* L, float* A, int rows, int n)
{
    for (size_t r = blockIdx.x; r < (size_t)rows; r += gridDim.x) {
        float lse = L[r];
        for (int j = threadIdx.x; j < n; j += blockDim.x)
            A[(size_t)r * n + j] = expf(S[(size_t)r * n + j] - lse);
    }
}

// ---- dV = Aᵀ dO ----------------------------------------------------------

// Baris j dari dV mengumpulkan dO[i] dari setiap query i yang melihat
// key j, ditimbang A[i][j].
extern "C" __global__ void attention_backward_dv_v1(
    const float* A, const float* dO, float* dV, int H, int T, int d_v)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (j >= T || c >= d_v) return;
    for (int h = blockIdx.z; h < H; h += gridDim.z) {
        const float* a = A + (size_t)h * T * T + j;     // kolom j: a[i*T]
        const float* g = dO + (size_t)h * T * d_v + c;  // kolom c: g[i*d_v]
        float acc = 0.0f;
        for (int i = 0; i < T; ++i)
            acc += a[(size_t)i * T] * g[(size_t)i * d_v];
        dV[((size_t)h * T + j) * d_v + c] = acc;
    }
}

// ---- dA = dO Vᵀ ----------------------------------------------------------

// Bentuk pekerjaannya sama dengan scores_v1_naive: dot product baris i
// dari dO dengan baris j dari V.
extern "C" __global__ void attention_backward_da_v1(
    const float* dO, const float* V, float* dA, int H, int T, int d_v)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= T || j >= T) return;
    for (int h = blockIdx.z; h < H; h += gridDim.z) {
        const float* g = dO + ((size_t)h * T + i) * d_v;
        const float* v = V + ((size_t)h * T + j) * d_v;
        float dot = 0.0f;
        for (int c = 0; c < d_v; ++c) dot += g[c] * v[c];
        dA[((size_t)h * T + i) * T + j] = dot;
    }
}

// ---- dS = A ⊙ (dA − rowsum(dA ⊙ A)) ---------------------------------------

// Jumlah satu block: setiap warp menjumlahkan 32 nilainya dengan shuffle,
// lane 0 menaruh jumlah warp itu, lalu setiap warp menjumlahkan semua
// jumlah yang ditaruh. blockDim.x harus kelipatan 32.
__device__ __forceinline__ float block_sum_warp(float* warp_sums, float v)
{
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_xor_sync(FULL_WARP, v, offset);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    v = lane < blockDim.x / 32 ? warp_sums[lane] : 0.0f;
    for (int offset = 16; offset > 0; offset /= 2)
        v += __shfl_xor_sync(FULL_WARP, v, offset);
    __syncthreads();  // semua sudah membaca warp_sums sebelum ditulis lagi
    return v;
}

// Satu block per baris: mula-mula reduksi D = sum_j dA[j] * A[j], lalu
// setiap thread menulis entri-entrinya sendiri. dS boleh array yang sama
// dengan dA: setiap thread membaca dA[j] sebelum menulis dS[j], dan hanya
// j miliknya sendiri.
extern "C" __global__ void softmax_backward_v1(
    const float* A, const float* dA, float* dS, int rows, int n)
{
    __shared__ float warp_sums[BACKWARD_MAX_BLOCK / 32];
    for (size_t r = blockIdx.x; r < (size_t)rows; r += gridDim.x) {
        const float* a = A + (size_t)r * n;
        const float* da = dA + (size_t)r * n;
        float part = 0.0f;
        for (int j = threadIdx.x; j < n; j += blockDim.x)
            part += da[j] * a[j];
        float D = block_sum_warp(warp_sums, part);
        for (int j = threadIdx.x; j < n; j += blockDim.x)
            dS[(size_t)r * n + j] = a[j] * (da[j] - D);
    }
}

// ---- dQ = dS K · s -------------------------------------------------------

// Seperti weighted_sum_v1, dengan dS sebagai bobot dan K sebagai value.
extern "C" __global__ void attention_backward_dq_v1(
    const float* dS, const float* K, float* dQ,
    int H, int T, int d_k, float scale)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= T || c >= d_k) return;
    for (int h = blockIdx.z; h < H; h += gridDim.z) {
        const float* ds = dS + ((size_t)h * T + i) * T;  // baris i
        const float* k = K + (size_t)h * T * d_k + c;
        float acc = 0.0f;
        for (int j = 0; j < T; ++j) acc += ds[j] * k[(size_t)j * d_k];
        dQ[((size_t)h * T + i) * d_k + c] = acc * scale;
    }
}

// ---- dK = dSᵀ Q · s ------------------------------------------------------

// Seperti dV, dengan dS menggantikan A dan Q menggantikan dO: kolom j
// dari dS.
extern "C" __global__ void attention_backward_dk_v1(
    const float* dS, const float* Q, float* dK,
    int H, int T, int d_k, float scale)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (j >= T || c >= d_k) return;
    for (int h = blockIdx.z; h < H; h += gridDim.z) {
        const float* ds = dS + (size_t)h * T * T + j;  // kolom j: ds[i*T]
        const float* q = Q + (size_t)h * T * d_k + c;
        float acc = 0.0f;
        for (int i = 0; i < T; ++i)
            acc += ds[(size_t)i * T] * q[(size_t)i * d_k];
        dK[((size_t)h * T + j) * d_k + c] = acc * scale;
    }
}
