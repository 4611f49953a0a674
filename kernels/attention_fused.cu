// attention_fused.cu — the whole head in one kernel: O = softmax(mask(Q Kᵀ / √d_k)) V,
// without ever storing the (T, T) scores or weights (flash-style, float32).
//
// Math (online softmax). For one query row i, keys j = 0, 1, ... arrive one at a time:
//          s_j  = dot(Q[i], K[j]) * scale               scale = 1/sqrtf(d_k) or 1
//          m_j  = max(m_{j-1}, s_j)                      running maximum, m_{-1} = -inf
//          l_j  = l_{j-1} * exp(m_{j-1} - m_j) + exp(s_j - m_j)          running sum
//          o_j  = o_{j-1} * exp(m_{j-1} - m_j) + exp(s_j - m_j) * V[j]   (d_k values)
//          O[i] = o_last / l_last
//      Whenever the maximum grows, l and o are rescaled so that every term stays
//      measured against the same maximum; the result equals the three-step
//      softmax exactly (in exact arithmetic). Causal: keys j > i are skipped.
//
// Shapes:  Q, K, V, O (H, T, d_k), float32, C-contiguous (row-major):
//          Q[h][i][c] is Q[(h*T + i)*d_k + c]. H = every leading axis flattened.
//          Supported: 1 <= d_k <= 128 (FUSED_MAX_DK), any T >= 1, any H.
//          Memory: O(T·d_k) in global memory, no (T, T) buffer anywhere.
//
// Thread mapping: block = (128, 1, 1); R = 128 / P query rows per block, where P
//          neighbouring lanes share one query row (P = 2, or 4 for d_k > 64).
//          grid = (ceil(T / R), min(H, 65535), 1): one block per (query tile, head);
//          blocks loop over heads (h += gridDim.y), so any H works.
//          Each of the P threads of a row owns DH = D/P of the row's D padded
//          columns (D = 32, 64 or 128, the smallest that holds d_k) and keeps its
//          part of q and of the accumulator o in registers (DH <= 32 floats each:
//          no spills). The P partial dot products are added with __shfl_xor_sync
//          (1 or 2 steps), so every thread of the row knows s_j and updates m, l
//          and its part of o itself. __launch_bounds__(128, 3) keeps registers at
//          or below 168 per thread, so three blocks (12 warps) fit on one SM.
//          Keys come in tiles of FUSED_BK = 32 rows of K and V, loaded by the whole
//          block into shared memory (zero-padded past T and past d_k, so padding
//          adds nothing to dot products or to o), then read by every row.
//          In shared memory the P parts of a tile row are DH + FUSED_SKEW floats
//          apart: the P threads read their parts of K[j] at the same moment, and
//          without the 4-float skew those 16-byte reads would fall into the same
//          banks (a P-way bank conflict).
//          Causal: the query tile [q0, q0+R) needs keys j < q0+R only, so key
//          tiles entirely above the diagonal are never loaded; inside the diagonal
//          tiles each row skips j > i.
//
// Versions in this file (same code, one per padded width D):
//   attention_fused_d32   d_k <= 32,  P = 2, R = 64 rows per block
//   attention_fused_d64   d_k <= 64,  P = 2, R = 64 rows per block
//   attention_fused_d128  d_k <= 128, P = 4, R = 32 rows per block
//   Arguments: (Q, K, V, O, int T, int d_k, int H, float scale, int causal).
//
// Compile (NVRTC, the compiler CuPy uses; atensi.kernels.compile_report runs exactly this):
//   nvrtcCreateProgram(&p, src, "kernels/attention_fused.cu", 0, NULL, NULL);
//   nvrtcCompileProgram(p, 3, {"-std=c++17", "-arch=sm_90", "-Xptxas=-v"});
//   python -m atensi.kernels kernels/attention_fused.cu     # prints the ptxas report

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

#define FUSED_THREADS 128  // threads per block
#define FUSED_BK 32        // keys per shared-memory tile
#define FUSED_MAX_DK 128
#define FUSED_SKEW 4       // floats between the parts of a tile row (see the header)
#define FULL_WARP 0xffffffffu

// Floats in one K or V tile: FUSED_BK rows of P parts, each DH + FUSED_SKEW long.
#define FUSED_TILE(D, P) (FUSED_BK * ((D) + (P) * FUSED_SKEW))

template <int D, int P>
__device__ __forceinline__ void attention_fused_body(
    const float* Q, const float* K, const float* V, float* O,
    int T, int d_k, int H, float scale, int causal, float* Ks, float* Vs)
{
    constexpr int DH = D / P;                  // columns owned by one thread
    constexpr int R = FUSED_THREADS / P;       // query rows per block
    constexpr int RS = D + P * FUSED_SKEW;     // floats per tile row in shared memory
    const int tid = threadIdx.x;
    const int part = tid % P;
    const int c0 = part * DH;                  // this thread's first column ...
    const int s0 = part * (DH + FUSED_SKEW);   // ... and where that part sits in a tile row
    const int q0 = blockIdx.x * R;             // first query row of the tile
    const int row = q0 + tid / P;
    const bool row_ok = row < T;
    // Causal: no row of this tile looks past its last row.
    const int k_end = causal ? min(q0 + R, T) : T;

    for (int h = blockIdx.y; h < H; h += gridDim.y) {
        const size_t head = (size_t)h * T * d_k;

        float q[DH], o[DH];
#pragma unroll
        for (int c = 0; c < DH; ++c) {
            q[c] = (row_ok && c0 + c < d_k) ? Q[head + (size_t)row * d_k + c0 + c] : 0.0f;
            o[c] = 0.0f;
        }
        float m = -INFINITY, l = 0.0f;

        for (int k0 = 0; k0 < k_end; k0 += FUSED_BK) {
            __syncthreads();  // the previous tile has been read by everyone
            for (int e = tid; e < FUSED_BK * D; e += FUSED_THREADS) {
                const int j = k0 + e / D, c = e % D;
                const bool ok = j < T && c < d_k;
                const size_t g = head + (size_t)j * d_k + c;
                const int at = (e / D) * RS + c + (c / DH) * FUSED_SKEW;
                Ks[at] = ok ? K[g] : 0.0f;
                Vs[at] = ok ? V[g] : 0.0f;
            }
            __syncthreads();

            // Same count for the whole block, so every lane reaches the shuffles.
            const int n = min(FUSED_BK, k_end - k0);
            for (int jj = 0; jj < n; ++jj) {
                const float* kj = (const float*)__builtin_assume_aligned(Ks + jj * RS + s0, 16);
                float part0 = 0.0f, part1 = 0.0f;  // two chains hide FMA latency
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

                const int j = k0 + jj;
                if (!row_ok || (causal && j > row)) continue;  // future key: weight 0
                if (s > m) {  // the maximum grows: bring l and o to the new scale
                    const float alpha = expf(m - s);  // exp(-inf) = 0 on the first key
                    l *= alpha;
#pragma unroll
                    for (int c = 0; c < DH; ++c) o[c] *= alpha;
                    m = s;
                }
                const float p = expf(s - m);
                l += p;
                const float* vj = (const float*)__builtin_assume_aligned(Vs + jj * RS + s0, 16);
#pragma unroll
                for (int c = 0; c < DH; ++c) o[c] += p * vj[c];
            }
        }

        if (row_ok) {
            // l >= 1 for every row that saw a key (its maximum gives exp(0)); guard anyway.
            const float inv = l > 0.0f ? 1.0f / l : 0.0f;
#pragma unroll
            for (int c = 0; c < DH; ++c)
                if (c0 + c < d_k) O[head + (size_t)row * d_k + c0 + c] = o[c] * inv;
        }
    }
}

// Three blocks of 128 threads per SM at least: registers stay <= 168 (see the header).
extern "C" __global__ void __launch_bounds__(FUSED_THREADS, 3)
attention_fused_d32(const float* Q, const float* K, const float* V, float* O,
                    int T, int d_k, int H, float scale, int causal)
{
    alignas(16) __shared__ float Ks[FUSED_TILE(32, 2)];
    alignas(16) __shared__ float Vs[FUSED_TILE(32, 2)];
    attention_fused_body<32, 2>(Q, K, V, O, T, d_k, H, scale, causal, Ks, Vs);
}

extern "C" __global__ void __launch_bounds__(FUSED_THREADS, 3)
attention_fused_d64(const float* Q, const float* K, const float* V, float* O,
                    int T, int d_k, int H, float scale, int causal)
{
    alignas(16) __shared__ float Ks[FUSED_TILE(64, 2)];
    alignas(16) __shared__ float Vs[FUSED_TILE(64, 2)];
    attention_fused_body<64, 2>(Q, K, V, O, T, d_k, H, scale, causal, Ks, Vs);
}

extern "C" __global__ void __launch_bounds__(FUSED_THREADS, 3)
attention_fused_d128(const float* Q, const float* K, const float* V, float* O,
                     int T, int d_k, int H, float scale, int causal)
{
    alignas(16) __shared__ float Ks[FUSED_TILE(128, 4)];
    alignas(16) __shared__ float Vs[FUSED_TILE(128, 4)];
    attention_fused_body<128, 4>(Q, K, V, O, T, d_k, H, scale, causal, Ks, Vs);
}
