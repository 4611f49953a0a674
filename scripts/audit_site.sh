#!/usr/bin/env bash
# Lighthouse (mobil) untuk halaman buku yang sudah dibangun (_build/html),
# memakai Chromium dari distribusi. Mencetak skor performance, accessibility,
# best-practices dan SEO (median dari RUNS=5 run) dan beban mesin (load average).
# Target: ≥ 95/95/95/95.
#
#   bash scripts/audit_site.sh [halaman ...]     (bawaan: pendahuluan softmax)
#   bash scripts/audit_site.sh semua             (setiap halaman di _build/html/chapters)
#   bash scripts/audit_site.sh kerangka          (tema saja: halaman bab dengan artikel
#                                                 kosong, batas atas skor setiap bab)
#
# Membandingkan beberapa build: BUILDS="_build/html-a _build/html-b" mengukur
# halaman yang sama di tiap build bergiliran (A, B, A, B, ...), supaya beban
# mesin yang naik-turun mengenai semua build dengan adil.
#
# Lighthouse 12.2.3 dipasang sekali dengan npm ke .cache/lighthouse (butuh
# Node.js 18+ dan akses ke registri npm saat pertama kali). Laporan JSON
# lengkapnya disimpan di _build/lighthouse/.
set -euo pipefail
cd "$(dirname "$0")/.."

read -r -a builds <<< "${BUILDS:-${ATENSI_BOOK_HTML:-_build/html}}"
LH_DIR=.cache/lighthouse
CHROME=${CHROME_PATH:-/usr/bin/chromium}
pages=("$@")
[ ${#pages[@]} -gt 0 ] || pages=(pendahuluan softmax)
if [ "${pages[*]}" = semua ]; then
  pages=()
  for f in "${builds[0]}"/chapters/*.html; do pages+=("$(basename "$f" .html)"); done
fi

for html in "${builds[@]}"; do
  [ -f "$html/index.html" ] || { echo "Tidak ada buku di $html. Bangun bukunya dulu: make book" >&2; exit 1; }
done
[ -x "$CHROME" ] || { echo "Chromium tidak ada di $CHROME: sudo apt-get install chromium" >&2; exit 1; }
command -v node >/dev/null || { echo "Node.js tidak ada: sudo apt-get install nodejs npm" >&2; exit 1; }
if [ ! -x "$LH_DIR/node_modules/.bin/lighthouse" ]; then
  mkdir -p "$LH_DIR"
  npm install --prefix "$LH_DIR" --no-audit --no-fund --silent -E lighthouse@12.2.3
fi

servers=()
ports=()
mirrors=$(mktemp -d)
trap 'kill "${servers[@]}" 2>/dev/null; rm -rf "$mirrors"' EXIT
for b in "${!builds[@]}"; do
  # Each build is served through a mirror of links that adds one page,
  # chapters/kerangka.html: the intro with its article emptied. Its score is
  # the theme's own ceiling, which no chapter can pass whatever its content.
  mirror="$mirrors/$b"
  mkdir -p "$mirror/chapters"
  for entry in "${builds[$b]}"/* "${builds[$b]}"/chapters/*; do
    rel=${entry#"${builds[$b]}"/}
    [ "$rel" = chapters ] || ln -s "$(realpath "$entry")" "$mirror/$rel"
  done
  python3 - "${builds[$b]}/chapters/pendahuluan.html" "$mirror/chapters/kerangka.html" <<'PY'
import re, sys
page = open(sys.argv[1], encoding="utf-8").read()

def emptied(article):
    # Every anchor stays, empty, so that the theme's table of contents still finds them.
    sections = "".join(f'<div id="{name}"></div>'
                       for name in re.findall(r' id="([^"]+)"', article[2])[1:])
    return (article[1] + '<section id="kerangka"><h1>Kerangka</h1>'
            '<p>Halaman bab tanpa isi: hanya tema buku.</p>' + sections + '</section>' + article[3])

page, found = re.subn(r'(<article class="bd-article"[^>]*>)(.*?)(</article>)', emptied, page,
                      flags=re.S)
if found != 1:
    sys.exit(f"{sys.argv[1]}: <article class=\"bd-article\"> tidak ditemukan")
open(sys.argv[2], "w", encoding="utf-8").write(page)
PY
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  python3 scripts/serve_gzip.py "$port" "$mirror" &
  servers+=($!)
  ports+=("$port")
done
sleep 1

out=_build/lighthouse
# One report folder per build, named by its place in BUILDS and its path:
# /tmp/a/_build/html and /tmp/b/_build/html both end in "html", and reports
# named by the last part alone overwrote each other (both builds then showed
# the same runs).
label() {
  local path
  path=$(realpath -m "${builds[$1]}")
  path=${path#/}
  echo "$1-${path//\//_}"
}
# Lighthouse's simulated throttling multiplies the CPU time it observes, so one
# run on a shared 2-core machine swings by 20 points: each page is measured
# RUNS times and the median run is reported (Lighthouse's own advice).
runs=${RUNS:-5}
echo "beban mesin sebelum: $(cut -d' ' -f1-3 /proc/loadavg)"
# KB: bytes the median run transferred, so that two builds can be told apart.
printf '%-14s %-22s %12s %14s %15s %6s %6s   %s\n' halaman build performance accessibility best-practices seo KB "(performance tiap run)"
for page in "${pages[@]}"; do
  for i in $(seq "$runs"); do
    for b in "${!builds[@]}"; do
      dir="$out/$(label "$b")"
      mkdir -p "$dir"
      CHROME_PATH=$CHROME "$LH_DIR/node_modules/.bin/lighthouse" \
        "http://127.0.0.1:${ports[$b]}/chapters/$page.html" \
        --quiet --output=json --output-path="$dir/$page-$i.json" \
        --only-categories=performance,accessibility,best-practices,seo \
        --chrome-flags="--headless=new --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --disable-sync --no-first-run" \
        >/dev/null 2>&1 || { echo "Lighthouse gagal pada $page (${builds[$b]})" >&2; exit 1; }
    done
  done
  for b in "${!builds[@]}"; do
    html=${builds[$b]}
    python3 - "$out/$(label "$b")" "$page" "$runs" "$html" <<'PY'
import json, shutil, sys
out, page, runs, build = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
names = ("performance", "accessibility", "best-practices", "seo")
scores, sent = [], {}
for i in range(1, runs + 1):
    report = json.load(open(f"{out}/{page}-{i}.json"))
    cats = report["categories"]
    scores.append((i, [round(100 * cats[c]["score"]) for c in names]))
    sent[i] = report["audits"]["total-byte-weight"]["numericValue"] / 1024
scores.sort(key=lambda run: run[1][0])
median_run, s = scores[len(scores) // 2]
shutil.copy(f"{out}/{page}-{median_run}.json", f"{out}/{page}.json")
each = " ".join(str(run[1][0]) for run in sorted(scores))
print(f"{page:<14} {build:<22} {s[0]:>12} {s[1]:>14} {s[2]:>15} {s[3]:>6} {sent[median_run]:>6.0f}   ({each})")
PY
  done
done
echo "beban mesin sesudah: $(cut -d' ' -f1-3 /proc/loadavg)"
