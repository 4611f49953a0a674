// rope.cu — rotary position embedding (RoPE, Su dkk. 2021) untuk Q atau K:
// setiap pasangan komponen diputar sebesar sudut yang sebanding dengan posisi.
//
// Rumus (Math):
//          p = offset + (baris mod T)              posisi token di barisnya
//          w_m = base^(-2m / d_k),  theta = p * w_m    m = 0 .. d_k/2 - 1
//          out[r][2m]   = X[r][2m] cos(theta) - X[r][2m+1] sin(theta)
//          out[r][2m+1] = X[r][2m] sin(theta) + X[r][2m+1] cos(theta)
//          Akibatnya dot(out_q[i], out_k[j]) hanya bergantung pada i - j.
// Bentuk (Shapes):
//          X, out (H, T, d_k), d_k genap; float32, C-contiguous (baris demi
//          baris): X[h][t][c] ada di X[(h*T + t)*d_k + c]. H = hasil kali
//          semua sumbu depan, rows = H*T baris. out tidak boleh sama dengan X
//          bila dipanggil dari atensi.kernels (selalu array baru).
//
// Pemetaan thread (Thread mapping): satu thread per (baris, pasangan m).
//          Indeks datar n = baris * (d_k/2) + m; block = 256 thread,
//          grid  = min(ceil(rows * d_k/2 / 256), 2^31 - 1). Thread berputar
//          (n += gridDim.x * blockDim.x), jadi berapa pun barisnya bisa.
//          Thread berurutan membaca pasangan berurutan: baca/tulis coalesced.
//          Tanpa shared memory dan tanpa __syncthreads: setiap pasangan berdiri
//          sendiri.
//
// Versi dalam berkas ini (Versions):
//   rope_v1   satu-satunya: sudut dihitung di tempat dalam double (float32
//             akan meleset p * 6e-8 radian: hampir 1 radian di p = 2^23).
//             Sudut diukur dalam putaran dan putaran utuhnya dibuang (rint),
//             jadi __sinf/__cosf yang cepat hanya melihat [-pi, pi], tempat
//             galatnya ~4e-7; sinf biasa akan memakai jalur lambat dengan
//             memori lokal untuk sudut besar. Hasilnya sama dengan
//             reference.rope sampai ~1e-6 * |x| di posisi mana pun. Posisi di
//             atas 2^24 ditolak sebelum peluncuran.
//
// Kompilasi (NVRTC, kompilator yang dipakai CuPy; atensi.kernels.compile_report
// menjalankan persis ini):
//   nvrtcCreateProgram(&p, src, "kernels/rope.cu", 0, NULL, NULL);
//   nvrtcCompileProgram(p, 3, {"-std=c++17", "-arch=sm_90", "-Xptxas=-v"});
//   python -m atensi.kernels kernels/rope.cu     # mencetak laporan ptxas

extern "C" __global__ void rope_v1(const float* X, float* out, int rows, int T,
                                   int d_k, int offset, float base)
{
    int pairs = d_k / 2;                              // pasangan per baris
    size_t n_total = (size_t)rows * pairs;            // bisa > 2^31
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t n = (size_t)blockIdx.x * blockDim.x + threadIdx.x; n < n_total;
         n += stride) {
        int row = (int)(n / pairs);                   // baris (h, t) datar
        int m = (int)(n % pairs);                     // pasangan ke-m
        int p = offset + row % T;                     // posisi token ini
        // Frekuensi dalam putaran per posisi, w_m / (2 pi), dan sudutnya dalam
        // double: p * w_m mencapai 2^24 radian, dan float32 di sana hanya
        // menyimpan sudut sampai ~1 radian.
        double turns_per_pos = pow((double)base, -(double)(2 * m) / (double)d_k)
                               * 0.15915494309189535;
        double turns = (double)p * turns_per_pos;     // sudut, dalam putaran
        turns -= rint(turns);                         // putaran utuh tak mengubah apa pun
        float theta = 6.28318531f * (float)turns;     // sudut dalam [-pi, pi]
        float c = __cosf(theta), s = __sinf(theta);   // cepat dan teliti di [-pi, pi]
        size_t at = (size_t)row * d_k + 2 * m;
        float x0 = X[at], x1 = X[at + 1];
        out[at] = x0 * c - x1 * s;                    // putar (x0, x1)
        out[at + 1] = x0 * s + x1 * c;
    }
}
