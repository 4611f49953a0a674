// weighted_sum.cu — the output of the head: each row of V weighted by A, summed.
//
// Math:    O[h][i][c] = sum_j A[h][i][j] * V[h][j][c]        (O = A V)
// Shapes:  A (H, T, T), V (H, T, d_k) -> O (H, T, d_k); float32, C-contiguous
//          (row-major): A[h][i][j] is A[(h*T + i)*T + j], V[h][j][c] is
//          V[(h*T + j)*d_k + c]. H = product of the leading axes.
//
// Thread mapping: one thread per output element (i, c).
//          block = (32, 8): threadIdx.x -> c (a warp reads 32 neighbouring
//          values of one V row: coalesced), threadIdx.y -> i
//          grid  = (ceil(d_k/32), ceil(T/8), min(H, 65535)); z loops over heads
//          (h += gridDim.z) so any H works. Threads past d_k or T do nothing.
//          A weight of exactly 0 (a masked key) still costs a multiply: the
//          kernel does not assume A is causal.
//
// Versions in this file:
//   weighted_sum_v1   the only one: T multiply-adds per thread, straight from
//                     global memory.
//
// Compile (NVRTC, the compiler CuPy uses; atensi.kernels.compile_report runs exactly this):
//   nvrtcCreateProgram(&p, src, "kernels/weighted_sum.cu", 0, NULL, NULL);
//   nvrtcCompileProgram(p, 3, {"-std=c++17", "-arch=sm_90", "-Xptxas=-v"});
//   python -m atensi.kernels kernels/weighted_sum.cu     # prints the ptxas report

extern "C" __global__ void weighted_sum_v1(const float* A, const float* V, float* O,
                                           int H, int T, int d_k)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= T || c >= d_k) return;
    for (int h = blockIdx.z; h < H; h += gridDim.z) {
        const float* a = A + ((size_t)h * T + i) * T;
        const float* v = V + (size_t)h * T * d_k + c;
        float acc = 0.0f;
        for (int j = 0; j < T; ++j) acc += a[j] * v[(size_t)j * d_k];
        O[((size_t)h * T + i) * d_k + c] = acc;
    }
}
