// scores.cu — matriks skor satu attention head, untuk semua head
// sekaligus.
//
// Rumus:   S[h][i][j] = dot(Q[h][i], K[h][j]) * scale
//          scale = 1/sqrt(d_k) (di mesin: 1.0f / sqrtf(d_k)),
//          atau 1 tanpa penskalaan.
// Bentuk:  Q, K (H, T, d_k) -> S (H, T, T), float32, C-contiguous
//          (row-major): Q[h][i][c] ada di Q[(h*T + i)*d_k + c],
//          S[h][i][j] ada di S[(h*T + i)*T + j]. H = hasil kali semua
//          sumbu depan (head, batch); H = 1 untuk satu head.
//
// Pembagian kerja (semua versi): satu thread untuk satu (i, j).
//   block = (16, 16): threadIdx.x -> j (kolom), threadIdx.y -> i (baris)
//   grid  = (ceil(T/16), ceil(T/16), min(H, 65535))
//   Sumbu z berputar melintasi head (h += gridDim.z), jadi H boleh
//   lebih dari 65535 block yang diizinkan grid.z. Thread di luar T
//   (T bukan kelipatan 16) tidak menghitung dan tidak menulis apa pun.
//
// Versi di berkas ini:
//   scores_v1_naive    baris skor microgpt_cuda.cu: satu dot product
//                      per thread, setiap angka dibaca dari memori
//                      global.
//   scores_v2_tiled    rancangan buku ini, hasil yang sama: block 16x16
//                      memuat ubin 16x16 dari Q dan dari K ke shared
//                      memory sekali, lalu memakai tiap angka 16 kali.
//   scores_v2_tiled_causal
//                      v2 dengan mask kausal menyatu: S = -inf bila
//                      j > i, dan block yang ubinnya seluruhnya di masa
//                      depan melewatkan dot product (sekitar separuh
//                      pekerjaan untuk T besar).
//
// Kompilasi (NVRTC, kompiler yang dipakai CuPy;
// atensi.kernels.compile_report menjalankan persis ini):
//   nvrtcCreateProgram(&p, src, "kernels/scores.cu", 0, NULL, NULL);
//   nvrtcCompileProgram(p, 3,
//                       {"-std=c++17", "-arch=sm_90", "-Xptxas=-v"});
//   python -m atensi.kernels kernels/scores.cu  # laporan ptxas

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

#ifndef SCORES_TILE
#define SCORES_TILE 16
#endif
static_assert(SCORES_TILE >= 1 && SCORES_TILE <= 32,
              "SCORES_TILE x SCORES_TILE thread per block: SCORES_TILE harus 1..32");

// v1: baris skor microgpt_cuda.cu,
//     scores[i][j] = dot(Q[i], K[j]) * (1.0f / sqrtf(d_k)).
// Program induk mengirim scale = 1.0f / sqrtf(d_k) (atau 1.0f tanpa
// penskalaan).
extern "C" __global__ void scores_v1_naive(
    const float* Q, const float* K, float* S,
    int H, int T, int d_k, float scale)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= T || j >= T) return;
    for (int h = blockIdx.z; h < H; h += gridDim.z) {
        const float* q = Q + ((size_t)h * T + i) * d_k;
        const float* k = K + ((size_t)h * T + j) * d_k;
        float dot = 0.0f;
        for (int c = 0; c < d_k; ++c) dot += q[c] * k[c];
        S[((size_t)h * T + i) * T + j] = dot * scale;
    }
}

// Badan v2. `causal` menjadi konstanta saat kompilasi setelah fungsi
// ini disalin ke dua kernel di bawah. Setiap thread dalam block sampai
// di setiap __syncthreads: jalan pintas keluar hanya bergantung pada
// blockIdx, tidak pernah pada threadIdx.
__device__ __forceinline__ void scores_tiled_body(
    const float* Q, const float* K, float* S,
    int H, int T, int d_k, float scale, bool causal)
{
    // +1 kolom: thread tx membaca Ks[tx][cc], sebuah kolom; tambahan
    // satu kolom menaruh ke-16 baris di bank shared memory berbeda.
    __shared__ float Qs[SCORES_TILE][SCORES_TILE];
    __shared__ float Ks[SCORES_TILE][SCORES_TILE + 1];

    int tx = threadIdx.x, ty = threadIdx.y;
    int i0 = blockIdx.y * SCORES_TILE, j0 = blockIdx.x * SCORES_TILE;
    int i = i0 + ty, j = j0 + tx;
    // Ubin seluruhnya di atas diagonal: j terkecilnya > i terbesarnya.
    bool future_tile = causal && j0 > i0 + SCORES_TILE - 1;

    for (int h = blockIdx.z; h < H; h += gridDim.z) {
        float* s = S + (size_t)h * T * T;
        if (future_tile) {
            if (i < T && j < T) s[(size_t)i * T + j] = -INFINITY;
            continue;
        }
        const float* q = Q + (size_t)h * T * d_k;
        const float* k = K + (size_t)h * T * d_k;
        float dot = 0.0f;
        for (int c0 = 0; c0 < d_k; c0 += SCORES_TILE) {
            // Thread (ty, tx) memuat Q[i0+ty][c0+tx] dan
            // K[j0+ty][c0+tx]; nol di luar matriks tidak menambah
            // apa pun pada dot product.
            int c = c0 + tx;
            int krow = j0 + ty;
            Qs[ty][tx] = (i < T && c < d_k)
                       ? q[(size_t)i * d_k + c] : 0.0f;
            Ks[ty][tx] = (krow < T && c < d_k)
                       ? k[(size_t)krow * d_k + c] : 0.0f;
            __syncthreads();
            for (int cc = 0; cc < SCORES_TILE; ++cc)
                dot += Qs[ty][cc] * Ks[tx][cc];
            __syncthreads();  // ubin ditimpa pada langkah berikutnya
        }
        if (i < T && j < T)
            s[(size_t)i * T + j] =
                (causal && j > i) ? -INFINITY : dot * scale;
    }
}

extern "C" __global__ void scores_v2_tiled(
    const float* Q, const float* K, float* S,
    int H, int T, int d_k, float scale)
{
    scores_tiled_body(Q, K, S, H, T, d_k, scale, false);
}

extern "C" __global__ void scores_v2_tiled_causal(
    const float* Q, const float* K, float* S,
    int H, int T, int d_k, float scale)
{
    scores_tiled_body(Q, K, S, H, T, d_k, scale, true);
}
