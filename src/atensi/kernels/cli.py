"""Baris perintah ``python -m atensi.kernels``: kompilasi NVRTC dan laporan ptxas.

    python -m atensi.kernels kernels/scores.cu          laporan satu berkas (sm_90)
    python -m atensi.kernels --arch sm_80               semua berkas di kernels/
    python -m atensi.kernels --tabel                    tabel ptxas sm_80 dan sm_90
    python -m atensi.kernels --sass [berkas.cu ...]     campuran instruksi SASS statis
    python -m atensi.kernels --daftar                   semua kernel di registri (tanpa kompilasi)
    python -m atensi.kernels --profil [NAMA ...]        hitungan profiler di emulator dan batasnya

Kesalahan (berkas tidak ada, NVRTC tidak ada, argumen salah) dilaporkan dalam
satu baris bahasa Indonesia, tanpa *traceback*. :func:`main` mengembalikan
kode keluar (0 berhasil, 1 gagal, 2 argumen tidak sah).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from atensi.arguments import Parser
from atensi.kernels.compiling import CompileError, compile_report, ptxas_table
from atensi.kernels import registry
from atensi.kernels.loading import kernel_path, kernels_dir


def _cli_file_problem(file: str):
    """One Indonesian line when ``file`` cannot be compiled, else None.

    Relative paths are read from the current folder, never silently from
    somewhere else; when the name exists in kernels/, the line says so.
    """
    path = Path(file)
    if not path.exists():
        hint = ""
        other = kernels_dir().parent / path
        if not path.is_absolute() and other.is_file():
            hint = f" Maksud Anda {other}? Jalankan dari akar repo atau tulis path lengkapnya."
        return f"Berkas '{file}' tidak ada (dicari dari folder {Path.cwd()}).{hint}"
    if path.is_dir():
        return f"'{file}' adalah folder, bukan berkas .cu. Sebutkan berkasnya, misalnya {file}/scores.cu."
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        return (f"Berkas '{file}' bukan teks UTF-8 (byte tak sah di posisi {err.start}). "
                "Simpan ulang sebagai UTF-8.")
    except OSError as err:
        return f"Berkas '{file}' tidak bisa dibaca: {err.strerror}."
    return None


def _profil(names) -> int:
    from atensi.kernels import profil

    known = {k.name for k in registry.KERNELS}
    unknown = [n for n in names if n not in known]
    if unknown:
        print(f"Kernel '{unknown[0]}' tidak ada di registri. Lihat daftarnya dengan "
              "python -m atensi.kernels --daftar.", file=sys.stderr)
        return 2
    try:
        print(profil.table(names or None), end="")
    except Exception as err:  # a compile error, binutils missing: one line
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        print(f"Profil gagal: {first}", file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    parser = Parser(
        prog="python -m atensi.kernels",
        description="Kompilasi kernel dengan NVRTC dan tampilkan laporan ptxas.",
        usage_line="python -m atensi.kernels [--arch sm_XX | --tabel | --sass | --daftar | --profil] "
                   "[berkas.cu ... | NAMA ...]",
    )
    parser.add_argument("files", nargs="*", help="berkas .cu (bawaan: semua di kernels/)")
    parser.add_argument("--arch", default="sm_90", help="arsitektur, misalnya sm_80 (bawaan sm_90)")
    parser.add_argument("--tabel", action="store_true",
                        help="satu tabel ptxas untuk sm_80 dan sm_90 (register, shared, spill, okupansi)")
    parser.add_argument("--sass", action="store_true",
                        help="campuran instruksi SASS statis per kernel dan bagian FFMA (batasnya: --profil)")
    parser.add_argument("--daftar", action="store_true",
                        help="satu baris per kernel dari registri: berkas, nama, block (tanpa kompilasi)")
    parser.add_argument("--profil", action="store_true",
                        help="jalankan kernel registri (NAMA, bawaan semuanya) di emulator dan cetak hitungan "
                             "ala Nsight Compute per baris .cu, serta batas kecepatan dari hitungan itu")
    args = parser.parse_args(argv)
    # One mode per run: a second one would be silently dropped (and --profil
    # runs every kernel for minutes before the reader sees that).
    modes = [f"--{m}" for m in ("profil", "daftar", "sass", "tabel") if getattr(args, m)]
    if len(modes) > 1:
        parser.fail(f"{' dan '.join(modes)} tidak bisa dipakai bersama: pilih satu, misalnya "
                    f"python -m atensi.kernels {modes[0]}")
    if not re.fullmatch(r"sm_\d+a?", args.arch):
        parser.fail(f"argumen '--arch' harus berbentuk 'sm_XX' (misalnya sm_90), tetapi yang "
                    f"diterima {args.arch!r}")
    if args.arch != "sm_90" and (args.profil or args.daftar or args.tabel):
        parser.fail(f"--arch tidak berlaku untuk {modes[0]} (yang memakai --arch: kompilasi satu "
                    "berkas dan --sass); hapus --arch")
    if args.daftar and args.files:
        parser.fail(f"--daftar tidak menerima berkas atau nama kernel, tetapi yang diberikan "
                    f"{' '.join(args.files)[:80]}; jalankan python -m atensi.kernels --daftar saja")
    if args.profil:
        return _profil(args.files)
    if args.daftar:
        print(registry.table())
        return 0
    if args.sass:
        from atensi.kernels.sass import mix_table

        problems = [p for p in map(_cli_file_problem, args.files) if p]
        if problems:
            print(problems[0], file=sys.stderr)
            return 1
        try:
            print(mix_table([str(Path(f).resolve()) for f in args.files] or None, arch=args.arch))
        except Exception as err:  # NVRTC or nvdisasm missing, a compile error: one line
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            print(f"Laporan SASS gagal: {first}", file=sys.stderr)
            return 1
        return 0
    if args.tabel:
        try:
            print(ptxas_table(args.files or None))
        except Exception as err:  # NVRTC missing, a compile error: one line
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            print(f"Tabel ptxas gagal: {first}", file=sys.stderr)
            return 1
        return 0
    try:
        files = args.files or sorted(str(kernel_path(f)) for f in registry.files())
    except FileNotFoundError as err:
        print(str(err).splitlines()[0], file=sys.stderr)
        return 1
    status = 0
    for file in files:
        problem = _cli_file_problem(file)
        if problem:
            print(problem, file=sys.stderr)
            status = 1
            continue
        try:
            report = compile_report(Path(file).resolve(), arch=args.arch)
        except CompileError as err:
            print(err, file=sys.stderr)
            status = 1
            continue
        except Exception as err:  # NVRTC missing and the like: one line, no traceback
            first = str(err).splitlines()[0] if str(err) else type(err).__name__
            print(f"Kompilasi {file} gagal: {first}", file=sys.stderr)
            status = 1
            continue
        print(report)
        print(report.log)
    return status
