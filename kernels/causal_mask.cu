// causal_mask.cu — hide the future: S[h][i][j] = -inf wherever j > i.
//
// Math:    out[h][i][j] = -inf           if j > i   (key j comes after query i)
//          out[h][i][j] = S[h][i][j]     otherwise
// Shapes:  S, out (H, T, T), float32, C-contiguous (row-major):
//          S[h][i][j] is S[(h*T + i)*T + j]. H = product of the leading axes.
//          out may be S itself (in place) or a separate array of the same shape.
//
// Thread mapping: one thread per element (i, j).
//          block = (16, 16): threadIdx.x -> j, threadIdx.y -> i
//          grid  = (ceil(T/16), ceil(T/16), min(H, 65535)); z loops over heads
//          (h += gridDim.z) so any H works. Threads past T do nothing.
//
// Versions in this file:
//   causal_mask_v1   the only one: one comparison and one store per element.
//                    The engine writes -1e9 in its loop; -INFINITY is exact:
//                    exp(-inf) = 0, so a masked key gets weight 0, not 1e-9-ish.
//
// Compile (NVRTC, the compiler CuPy uses; atensi.kernels.compile_report runs exactly this):
//   nvrtcCreateProgram(&p, src, "kernels/causal_mask.cu", 0, NULL, NULL);
//   nvrtcCompileProgram(p, 3, {"-std=c++17", "-arch=sm_90", "-Xptxas=-v"});
//   python -m atensi.kernels kernels/causal_mask.cu     # prints the ptxas report

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

extern "C" __global__ void causal_mask_v1(const float* S, float* out, int H, int T)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= T || j >= T) return;
    for (int h = blockIdx.z; h < H; h += gridDim.z) {
        size_t idx = ((size_t)h * T + i) * T + j;
        out[idx] = (j > i) ? -INFINITY : S[idx];
    }
}
