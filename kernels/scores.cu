// scores.cu — the scores matrix of one attention head, for every head at once.
//
// Math:    S[h][i][j] = dot(Q[h][i], K[h][j]) * scale
//          scale = 1/sqrt(d_k) (the engine's 1.0f / sqrtf(d_k)), or 1 with no scaling.
// Shapes:  Q, K (H, T, d_k) -> S (H, T, T), float32, C-contiguous (row-major):
//          Q[h][i][c] is Q[(h*T + i)*d_k + c], S[h][i][j] is S[(h*T + i)*T + j].
//          H is the product of all leading axes (heads, batch); H = 1 for one head.
//
// Thread mapping (all versions): one thread per (i, j).
//          block = (16, 16): threadIdx.x -> j (column), threadIdx.y -> i (row)
//          grid  = (ceil(T/16), ceil(T/16), min(H, 65535))
//          The z axis loops over heads (h += gridDim.z), so H may exceed the
//          65535 blocks that grid.z allows. Threads past T (T not a multiple
//          of 16) compute nothing and write nothing.
//
// Versions in this file:
//   scores_v1_naive         the line of microgpt_cuda.cu, one dot product per thread,
//                           every operand read from global memory.
//   scores_v2_tiled         the same result; a 16x16 block loads a 16x16 tile of Q and
//                           of K into shared memory once and reuses each value 16 times.
//   scores_v2_tiled_causal  v2 with the causal mask fused in: S = -inf where j > i, and
//                           a block whose whole tile lies in the future skips the dot
//                           products (about half of the work for large T).
//
// Compile (NVRTC, the compiler CuPy uses; atensi.kernels.compile_report runs exactly this):
//   nvrtcCreateProgram(&p, src, "kernels/scores.cu", 0, NULL, NULL);
//   nvrtcCompileProgram(p, 3, {"-std=c++17", "-arch=sm_90", "-Xptxas=-v"});
//   python -m atensi.kernels kernels/scores.cu     # prints the ptxas report

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

#define SCORES_TILE 16

// v1: the engine's line, scores[i][j] = dot(Q[i], K[j]) * (1.0f / sqrtf(d_k)).
// The host passes scale = 1.0f / sqrtf(d_k) (or 1.0f when scaling is off).
extern "C" __global__ void scores_v1_naive(const float* Q, const float* K, float* S,
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

// v2 body. `causal` is a compile-time constant after inlining into the two
// entry points below. Every thread of the block reaches every __syncthreads:
// the early exits depend only on blockIdx, never on threadIdx.
__device__ __forceinline__ void scores_tiled_body(const float* Q, const float* K, float* S,
                                                  int H, int T, int d_k, float scale,
                                                  bool causal)
{
    // +1 column: thread tx reads Ks[tx][c], a column; padding puts the 16
    // rows in different shared-memory banks.
    __shared__ float Qs[SCORES_TILE][SCORES_TILE];
    __shared__ float Ks[SCORES_TILE][SCORES_TILE + 1];

    int tx = threadIdx.x, ty = threadIdx.y;
    int i0 = blockIdx.y * SCORES_TILE, j0 = blockIdx.x * SCORES_TILE;
    int i = i0 + ty, j = j0 + tx;
    // Tile entirely above the diagonal: its smallest j exceeds its largest i.
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
            // Thread (ty, tx) loads Q[i0+ty][c0+tx] and K[j0+ty][c0+tx];
            // zeros outside the matrix add nothing to the dot product.
            int c = c0 + tx;
            int krow = j0 + ty;
            Qs[ty][tx] = (i < T && c < d_k) ? q[(size_t)i * d_k + c] : 0.0f;
            Ks[ty][tx] = (krow < T && c < d_k) ? k[(size_t)krow * d_k + c] : 0.0f;
            __syncthreads();
            for (int cc = 0; cc < SCORES_TILE; ++cc) dot += Qs[ty][cc] * Ks[tx][cc];
            __syncthreads();  // the tile is overwritten in the next step
        }
        if (i < T && j < T)
            s[(size_t)i * T + j] = (causal && j > i) ? -INFINITY : dot * scale;
    }
}

extern "C" __global__ void scores_v2_tiled(const float* Q, const float* K, float* S,
                                           int H, int T, int d_k, float scale)
{
    scores_tiled_body(Q, K, S, H, T, d_k, scale, false);
}

extern "C" __global__ void scores_v2_tiled_causal(const float* Q, const float* K, float* S,
                                                  int H, int T, int d_k, float scale)
{
    scores_tiled_body(Q, K, S, H, T, d_k, scale, true);
}
