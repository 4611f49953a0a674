// causal_mask.cu — tutup masa depan: S[h][i][j] = -inf di mana pun j > i.
//
// Rumus (Math):
//          out[h][i][j] = -inf           bila j > i  (key j datang sesudah query i)
//          out[h][i][j] = S[h][i][j]     selain itu  (masa lalu dan diri sendiri)
// Bentuk (Shapes):
//          S, out (H, T, T), float32, C-contiguous (baris demi baris):
//          S[h][i][j] ada di S[(h*T + i)*T + j]. H = hasil kali sumbu-sumbu depan.
//          out boleh S itu sendiri (di tempat) atau array lain berbentuk sama.
//
// Pemetaan thread (Thread mapping): satu thread per entri (i, j).
//          block = (16, 16): threadIdx.x -> j, threadIdx.y -> i
//          grid  = (ceil(T/16), ceil(T/16), min(H, 65535)); z berpindah ke
//          head berikutnya (h += gridDim.z), jadi H berapa pun bisa dikerjakan.
//          Thread di luar T tidak mengerjakan apa pun.
//
// Versi dalam berkas ini (Versions):
//   causal_mask_v1   satu-satunya: satu perbandingan dan satu penulisan per entri.
//                    Menulis -INFINITY yang sesungguhnya, bukan -1e9: exp(-inf) = 0
//                    tepat, jadi key yang ditutup mendapat bobot 0, bukan "hampir 0".
//
// Kompilasi (NVRTC, kompilator yang dipakai CuPy; atensi.kernels.compile_report
// menjalankan persis ini):
//   nvrtcCreateProgram(&p, src, "kernels/causal_mask.cu", 0, NULL, NULL);
//   nvrtcCompileProgram(p, 3, {"-std=c++17", "-arch=sm_90", "-Xptxas=-v"});
//   python -m atensi.kernels kernels/causal_mask.cu     # mencetak laporan ptxas

// NVRTC tidak mengenal INFINITY (nvcc mengenalnya): pola bit +inf float32.
#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif

extern "C" __global__ void causal_mask_v1(const float* S, float* out, int H, int T)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;   // kolom: posisi key
    int i = blockIdx.y * blockDim.y + threadIdx.y;   // baris: posisi query
    if (i >= T || j >= T) return;                    // thread di luar matriks
    for (int h = blockIdx.z; h < H; h += gridDim.z) {
        size_t idx = ((size_t)h * T + i) * T + j;    // size_t: H*T*T bisa > 2^31
        out[idx] = (j > i) ? -INFINITY : S[idx];     // masa depan -> -inf
    }
}
