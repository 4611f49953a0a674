#!/usr/bin/env bash
# Paket sistem yang dibutuhkan target make: memasang yang belum ada, atau
# berhenti sebelum pekerjaan lain dengan satu perintah yang perlu dijalankan.
#
#   bash scripts/paket_sistem.sh book [pdf zip test ...]
#
# Dipanggil oleh `make book`, `make test`, `make pdf`, `make zip` (sebelum
# .venv dibuat) dan oleh `.ci/run`. Dijalankan sebagai root: apt-get langsung;
# bila tidak: lewat sudo (yang bisa menanyakan kata sandi).
#
# The one list of system packages lives here. Each package has a check that
# needs no package manager, so a machine with everything in place pays a few
# milliseconds. For tests (tests/test_ci.py), without root:
#   ATENSI_CHROMIUM    the browser's path (default /usr/bin/chromium)
#   ATENSI_MATH_FONT   the math font's path (default: where Debian and TeX Live put it)
# apt-get, sudo and id are found on PATH, where a test puts its stubs.
set -euo pipefail

chromium="${ATENSI_CHROMIUM:-/usr/bin/chromium}"
python="${PYTHON:-python3}"
venv="${VENV:-.venv}"
if [ -n "${ATENSI_MATH_FONT:-}" ]; then
  fonts=("$ATENSI_MATH_FONT")
else
  # The same two places _ext/atensi_book/formulas.py reads the font from.
  fonts=(/usr/share/texmf/fonts/opentype/public/lm-math/latinmodern-math.otf
         /usr/share/texlive/texmf-dist/fonts/opentype/public/lm-math/latinmodern-math.otf)
fi

# What each make target needs. The book: g++ runs the chapters' CUDA kernels
# on the CPU, Node.js typesets the formulas at build time, fonts-lmodern is the
# formula font. The PDF and the tests open pages in Chromium; the tests also
# copy the repository with git. The zip only needs the virtual environment.
needs_for() {
  case "$1" in
    book) echo "make python3-venv g++ nodejs fonts-lmodern" ;;
    pdf) echo "make python3-venv g++ nodejs fonts-lmodern chromium" ;;
    test) echo "make python3-venv g++ nodejs fonts-lmodern chromium git" ;;
    zip) echo "make python3-venv" ;;
    check | notebooks | lab | train | clean) echo "make" ;;
    *) return 1 ;;
  esac
}

has_font() {
  local font
  for font in "${fonts[@]}"; do
    [ -f "$font" ] && return 0
  done
  return 1
}

present() {
  case "$1" in
    fonts-lmodern) has_font ;;
    chromium) [ -x "$chromium" ] ;;
    nodejs) command -v node >/dev/null ;;
    g++) command -v g++ >/dev/null ;;
    make) command -v make >/dev/null ;;
    git) command -v git >/dev/null ;;
    # Needed only to create the virtual environment.
    python3-venv) [ -x "$venv/bin/python" ] || "$python" -c "import ensurepip, venv" 2>/dev/null ;;
  esac
}

[ $# -gt 0 ] || set -- book
wanted=()
for target in "$@"; do
  if ! needs_for "$target" >/dev/null; then
    echo "scripts/paket_sistem.sh: target '$target' tidak dikenal; yang dikenal: book, pdf, test, zip, check, notebooks, lab, train, clean." >&2
    exit 2
  fi
  for package in $(needs_for "$target"); do
    case " ${wanted[*]-} " in *" $package "*) ;; *) wanted+=("$package") ;; esac
  done
done

missing=()
for package in "${wanted[@]}"; do
  present "$package" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

again="make $*"
install="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"

stop() {
  {
    echo
    echo "Paket sistem untuk '$again' belum terpasang: ${missing[*]}."
    echo "$1"
    echo "Belum ada yang dibangun."
  } >&2
  exit 1
}

if ! command -v apt-get >/dev/null; then
  stop "Distribusi ini tidak memakai apt-get, jadi paket itu tidak bisa dipasang otomatis.
Pasang padanannya dengan pengelola paket distribusi Anda (Node.js 18 atau lebih baru,
font Latin Modern Math, Chromium, g++, git, modul venv Python), lalu jalankan lagi: $again"
fi

as_root=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || stop "Tanpa hak root dan tanpa sudo, paket itu tidak bisa dipasang dari sini.
Jalankan sebagai root:
  $install
lalu jalankan lagi: $again"
  as_root=(sudo)
  echo "Memasang paket sistem lewat sudo (mungkin diminta kata sandi): ${missing[*]}"
else
  echo "Memasang paket sistem: ${missing[*]}"
fi

export DEBIAN_FRONTEND=noninteractive
if ! "${as_root[@]}" apt-get update || \
   ! "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
  stop "apt-get gagal memasangnya (lihat pesan di atas). Perbaiki lalu jalankan:
  $install
lalu jalankan lagi: $again"
fi

# Ubuntu installs Chromium as a snap under another name; the tests and the PDF
# use /usr/bin/chromium.
if [ ! -x "$chromium" ] && [ -z "${ATENSI_CHROMIUM:-}" ]; then
  other="$(command -v chromium-browser || command -v chromium || true)"
  [ -z "$other" ] || "${as_root[@]}" ln -sf "$other" /usr/bin/chromium
fi

still=()
for package in "${missing[@]}"; do
  present "$package" || still+=("$package")
done
if [ ${#still[@]} -gt 0 ]; then
  missing=("${still[@]}")
  install="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
  stop "apt-get selesai, tetapi paket itu masih belum ada. Periksa sumber paket (sources.list), lalu jalankan:
  $install
lalu jalankan lagi: $again"
fi
echo "Paket sistem terpasang: ${missing[*]}"
