#!/usr/bin/env bash
# Lighthouse (mobil) untuk Pendahuluan dan satu bab dari buku yang sudah
# dibangun (_build/html), memakai Chromium dari distribusi. Mencetak skor
# performance, accessibility, best-practices dan SEO. Target: ≥ 90/95/95/95.
#
#   bash scripts/audit_site.sh [halaman ...]     (bawaan: pendahuluan softmax)
#
# Lighthouse 12.2.3 dipasang sekali dengan npm ke .cache/lighthouse (butuh
# Node.js 18+ dan akses ke registri npm saat pertama kali). Laporan JSON
# lengkapnya disimpan di _build/lighthouse/.
set -euo pipefail
cd "$(dirname "$0")/.."

HTML=${ATENSI_BOOK_HTML:-_build/html}  # or another build of the book
LH_DIR=.cache/lighthouse
CHROME=${CHROME_PATH:-/usr/bin/chromium}
pages=("$@")
[ ${#pages[@]} -gt 0 ] || pages=(pendahuluan softmax)

[ -f "$HTML/index.html" ] || { echo "Bangun bukunya dulu: make book" >&2; exit 1; }
[ -x "$CHROME" ] || { echo "Chromium tidak ada di $CHROME: sudo apt-get install chromium" >&2; exit 1; }
command -v node >/dev/null || { echo "Node.js tidak ada: sudo apt-get install nodejs npm" >&2; exit 1; }
if [ ! -x "$LH_DIR/node_modules/.bin/lighthouse" ]; then
  mkdir -p "$LH_DIR"
  npm install --prefix "$LH_DIR" --no-audit --no-fund --silent -E lighthouse@12.2.3
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 scripts/serve_gzip.py "$port" "$HTML" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
sleep 1

out=_build/lighthouse
mkdir -p "$out"
printf '%-14s %12s %14s %15s %6s\n' halaman performance accessibility best-practices seo
for page in "${pages[@]}"; do
  CHROME_PATH=$CHROME "$LH_DIR/node_modules/.bin/lighthouse" \
    "http://127.0.0.1:$port/chapters/$page.html" \
    --quiet --output=json --output-path="$out/$page.json" \
    --only-categories=performance,accessibility,best-practices,seo \
    --chrome-flags="--headless=new --no-sandbox --disable-gpu --disable-background-networking --disable-component-update --disable-sync --no-first-run" \
    >/dev/null 2>&1 || { echo "Lighthouse gagal pada $page" >&2; exit 1; }
  python3 - "$out/$page.json" "$page" <<'PY'
import json, sys
cats = json.load(open(sys.argv[1]))["categories"]
s = [round(100 * cats[c]["score"]) for c in ("performance", "accessibility", "best-practices", "seo")]
print(f"{sys.argv[2]:<14} {s[0]:>12} {s[1]:>14} {s[2]:>15} {s[3]:>6}")
PY
done
