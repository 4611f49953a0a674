// weighted_sum.cu — keluaran head: baris-baris V diberi bobot dari A, lalu
// dijumlahkan.
//
// Rumus (Math):
//          O[h][i][c] = sum_j A[h][i][j] * V[h][j][c]        (O = A V)
// Bentuk (Shapes):
//          A (H, T, T), V (H, T, d_k) -> O (H, T, d_k); float32, C-contiguous
//          (baris demi baris): A[h][i][j] ada di A[(h*T + i)*T + j],
//          V[h][j][c] ada di V[(h*T + j)*d_k + c]. H = hasil kali semua
//          sumbu depan.
//
// Pemetaan thread (Thread mapping): satu thread per elemen keluaran (i, c).
//          block = (32, 8): threadIdx.x -> c (satu warp membaca 32 nilai
//          bersebelahan dari satu baris V: coalesced), threadIdx.y -> i
//          grid  = (ceil(d_k/32), ceil(T/8), min(H, 65535)); sumbu z berputar
//          atas head (h += gridDim.z), jadi H berapa pun bisa. Thread yang
//          melewati d_k atau T tidak mengerjakan apa-apa.
//          Bobot yang tepat 0 (key yang dimask) tetap dikalikan: kernel ini
//          tidak menganggap A kausal.
//
// Versi dalam berkas ini (Versions):
//   weighted_sum_v1   satu-satunya: T perkalian-tambah per thread, langsung
//                     dari memori global.
//
// Kompilasi (NVRTC, kompiler yang dipakai CuPy; atensi.kernels.compile_report
// menjalankan persis ini):
//   nvrtcCreateProgram(&p, src, "kernels/weighted_sum.cu", 0, NULL, NULL);
//   nvrtcCompileProgram(p, 3, {"-std=c++17", "-arch=sm_90", "-Xptxas=-v"});
//   python -m atensi.kernels kernels/weighted_sum.cu   # laporan ptxas

extern "C" __global__ void weighted_sum_v1(const float* A, const float* V,
                                           float* O, int H, int T, int d_k)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;  // kolom keluaran
    int i = blockIdx.y * blockDim.y + threadIdx.y;  // baris (posisi)
    if (i >= T || c >= d_k) return;  // di luar matriks: tidak ada kerja
    for (int h = blockIdx.z; h < H; h += gridDim.z) {
        // a: baris i dari A milik head h; v: kolom c dari V milik head h.
        const float* a = A + ((size_t)h * T + i) * T;
        const float* v = V + (size_t)h * T * d_k + c;
        float acc = 0.0f;
        for (int j = 0; j < T; ++j) acc += a[j] * v[(size_t)j * d_k];
        O[((size_t)h * T + i) * d_k + c] = acc;
    }
}
