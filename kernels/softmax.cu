// softmax.cu — turn each row of scores into attention weights that sum to 1.
//
// Math:    m = max_j S[r][j]                       (row maximum, for stability)
//          A[r][j] = exp(S[r][j] - m) / sum_k exp(S[r][k] - m)
//          A row that is entirely -inf (nothing visible) becomes all zeros, never NaN.
// Shapes:  S, A (rows, n), float32, C-contiguous (row-major): S[r][j] is S[r*n + j].
//          For weights of shape (H, T, T): rows = H*T, n = T (softmax is per row,
//          so heads need no special treatment).
//
// Thread mapping: one block per row; the block's threads stride over the row
//          (j = threadIdx.x, threadIdx.x + blockDim.x, ...), so n may exceed the block.
//          block = (B, 1, 1), grid = (min(rows, 2^31 - 1), 1, 1); blocks loop over
//          rows (r += gridDim.x), so any number of rows works.
//          The host picks B = next power of two >= n, clamped to [32, 256].
//          softmax_v1_shared needs B a power of two <= 1024; softmax_v2_warp needs
//          B a multiple of 32 <= 1024.
//          Three passes over the row: maximum, sum of exponentials (stored in A),
//          division by the sum. Each thread rereads only the entries it wrote.
//
// Versions in this file:
//   softmax_v1_shared  block-wide maximum and sum by a tree reduction in shared
//                      memory: log2(B) steps, a __syncthreads after each.
//   softmax_v2_warp    the same three passes; each warp of 32 threads reduces with
//                      __shfl_xor_sync (registers, no shared memory, no barrier),
//                      then the B/32 warp results are combined through shared memory.
//
// Compile (NVRTC, the compiler CuPy uses; atensi.kernels.compile_report runs exactly this):
//   nvrtcCreateProgram(&p, src, "kernels/softmax.cu", 0, NULL, NULL);
//   nvrtcCompileProgram(p, 3, {"-std=c++17", "-arch=sm_90", "-Xptxas=-v"});
//   python -m atensi.kernels kernels/softmax.cu     # prints the ptxas report

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

#define SOFTMAX_MAX_BLOCK 1024
#define FULL_WARP 0xffffffffu

// ---- v1: shared-memory tree reductions -------------------------------------

// Tree reduction of red[0..blockDim.x) into red[0]; blockDim.x a power of two.
// Called by every thread of the block.
__device__ __forceinline__ float block_reduce_shared(float* red, float v, bool is_max)
{
    int tid = threadIdx.x;
    red[tid] = v;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (tid < stride)
            red[tid] = is_max ? fmaxf(red[tid], red[tid + stride]) : red[tid] + red[tid + stride];
        __syncthreads();
    }
    float result = red[0];
    __syncthreads();  // everyone has read red[0] before red is written again
    return result;
}

extern "C" __global__ void softmax_v1_shared(const float* S, float* A, int rows, int n)
{
    __shared__ float red[SOFTMAX_MAX_BLOCK];
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* s = S + (size_t)r * n;
        float* a = A + (size_t)r * n;

        float m = -INFINITY;
        for (int j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, s[j]);
        float row_max = block_reduce_shared(red, m, true);

        // Same value in every thread, so the whole block takes this branch.
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

        for (int j = threadIdx.x; j < n; j += blockDim.x) a[j] = a[j] / total;
    }
}

// ---- v2: warp shuffles ------------------------------------------------------

// Butterfly over the 32 lanes: after 5 steps every lane holds the warp's result.
__device__ __forceinline__ float warp_reduce(float v, bool is_max)
{
    for (int offset = 16; offset > 0; offset /= 2) {
        float other = __shfl_xor_sync(FULL_WARP, v, offset);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    return v;
}

// Each warp reduces in registers, lane 0 posts the warp's result, then every
// warp reduces the posted results itself (no second broadcast needed).
// blockDim.x must be a multiple of 32 so every shuffle sees a full warp.
__device__ __forceinline__ float block_reduce_warp(float* warp_results, float v, bool is_max)
{
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int n_warps = blockDim.x / 32;
    v = warp_reduce(v, is_max);
    if (lane == 0) warp_results[warp] = v;
    __syncthreads();
    float identity = is_max ? -INFINITY : 0.0f;
    v = warp_reduce(lane < n_warps ? warp_results[lane] : identity, is_max);
    __syncthreads();  // everyone has read warp_results before it is written again
    return v;
}

extern "C" __global__ void softmax_v2_warp(const float* S, float* A, int rows, int n)
{
    __shared__ float warp_results[SOFTMAX_MAX_BLOCK / 32];
    for (int r = blockIdx.x; r < rows; r += gridDim.x) {
        const float* s = S + (size_t)r * n;
        float* a = A + (size_t)r * n;

        float m = -INFINITY;
        for (int j = threadIdx.x; j < n; j += blockDim.x) m = fmaxf(m, s[j]);
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

        for (int j = threadIdx.x; j < n; j += blockDim.x) a[j] = a[j] / total;
    }
}
