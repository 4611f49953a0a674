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
//   weighted_sum_v1   T perkalian-tambah per thread, langsung dari memori
//                     global.
//   weighted_sum_v2_tiled, weighted_sum_v2_tiled_causal
//                     diubin seperti GEMM: satu block menghitung ubin
//                     keluaran 64 x 64 (baris i x kolom c) dengan 256 thread;
//                     ubin A (64 x 16) dan ubin V (16 x 64) dimuat bersama ke
//                     shared memory, lalu setiap thread menghitung ubin kecil
//                     4 x 4 di register (baris ty + 16p, kolom tx + 16q).
//                     Setiap nilai yang dimuat dipakai 64 kali, bukan sekali.
//                     Varian _causal menganggap A[i][j] = 0 untuk j > i tanpa
//                     membacanya: ubin key yang seluruhnya di masa depan
//                     dilewati, jadi kira-kira separuh kerja hilang.
//                     block = (256, 1, 1), grid = (ceil(d_k/64), ceil(T/64),
//                     min(H, 65535)), sumbu z berputar atas head.
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

// ---- v2: ubin seperti GEMM -------------------------------------------

#ifndef WS_BM
#define WS_BM 64  // baris keluaran (i) per block
#endif
#ifndef WS_BN
#define WS_BN 64  // kolom keluaran (c) per block
#endif
#ifndef WS_BK
#define WS_BK 16  // key (j) per langkah ubin
#endif
#ifndef WS_THREADS
#define WS_THREADS 256  // 16 x 16 thread, masing-masing 4 x 4 keluaran
#endif
// Tata letak thread di bawah: tx, ty = t % 16, t / 16; 4 x 4 keluaran per thread; tx memuat
// kolom As[tx], dan WS_THREADS / WS_BN baris Vs per putaran, 4 putaran.
static_assert(WS_THREADS == 16 * 16 && WS_BM == 16 * 4 && WS_BN == 16 * 4 && WS_BK == 16 &&
                  WS_THREADS / WS_BN * 4 == WS_BK,
              "weighted_sum v2: 16 x 16 thread dengan 4 x 4 keluaran: WS_THREADS = 256, "
              "WS_BM = WS_BN = 64, WS_BK = 16");

// Badan v2. `causal` menjadi konstanta saat kompilasi di kedua kernel di
// bawah. Jalan pintas hanya bergantung pada blockIdx, jadi setiap thread
// block sampai di setiap __syncthreads.
__device__ __forceinline__ void weighted_sum_tiled_body(
    const float* A, const float* V, float* O,
    int H, int T, int d_k, bool causal)
{
    // As disimpan terbalik (As[j][i]): thread membaca satu baris As untuk
    // empat baris keluarannya. +1 kolom mengurangi bentrokan bank saat
    // menulis.
    __shared__ float As[WS_BK][WS_BM + 1];
    __shared__ float Vs[WS_BK][WS_BN];

    int t = threadIdx.x;
    int tx = t % 16, ty = t / 16;
    int i0 = blockIdx.y * WS_BM, c0 = blockIdx.x * WS_BN;
    // Kausal: baris i0 .. i0+63 hanya butuh key j <= i0 + 63.
    int j_end = causal ? min(T, i0 + WS_BM) : T;

    for (int h = blockIdx.z; h < H; h += gridDim.z) {
        const float* a = A + (size_t)h * T * T;
        const float* v = V + (size_t)h * T * d_k;
        float acc[4][4];
        for (int p = 0; p < 4; ++p)
            for (int q = 0; q < 4; ++q) acc[p][q] = 0.0f;

        for (int j0 = 0; j0 < j_end; j0 += WS_BK) {
            // Setiap thread memuat 4 nilai A dan 4 nilai V. Untuk A, 16
            // thread berurutan (tx) membaca 16 nilai bersebelahan dari satu
            // baris (coalesced); di luar matriks, atau di masa depan bila
            // kausal, nilainya 0 dan memori tidak dibaca.
            int j = j0 + tx;
            for (int p = 0; p < 4; ++p) {
                int r = ty + 16 * p, i = i0 + r;
                bool ok = i < T && j < T && (!causal || j <= i);
                As[tx][r] = ok ? a[(size_t)i * T + j] : 0.0f;
            }
            // V: 64 thread berurutan membaca 64 kolom satu baris V.
            int cc = t % WS_BN, c = c0 + cc;
            for (int e = 0; e < 4; ++e) {
                int jj = t / WS_BN + 4 * e, jv = j0 + jj;
                Vs[jj][cc] = (jv < T && c < d_k)
                           ? v[(size_t)jv * d_k + c] : 0.0f;
            }
            __syncthreads();
            for (int jj = 0; jj < WS_BK; ++jj) {
                float ar[4], vr[4];
                for (int p = 0; p < 4; ++p) ar[p] = As[jj][ty + 16 * p];
                for (int q = 0; q < 4; ++q) vr[q] = Vs[jj][tx + 16 * q];
                for (int p = 0; p < 4; ++p)
                    for (int q = 0; q < 4; ++q) acc[p][q] += ar[p] * vr[q];
            }
            __syncthreads();  // ubin ditimpa pada langkah berikutnya
        }

        float* o = O + (size_t)h * T * d_k;
        for (int p = 0; p < 4; ++p) {
            int i = i0 + ty + 16 * p;
            for (int q = 0; q < 4; ++q) {
                int c = c0 + tx + 16 * q;
                if (i < T && c < d_k) o[(size_t)i * d_k + c] = acc[p][q];
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(WS_THREADS)
weighted_sum_v2_tiled(const float* A, const float* V, float* O,
                      int H, int T, int d_k)
{
    weighted_sum_tiled_body(A, V, O, H, T, d_k, false);
}

extern "C" __global__ void __launch_bounds__(WS_THREADS)
weighted_sum_v2_tiled_causal(const float* A, const float* V, float* O,
                             int H, int T, int d_k)
{
    weighted_sum_tiled_body(A, V, O, H, T, d_k, true);
}
