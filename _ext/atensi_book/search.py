"""Search that understands Indonesian affixes: "menghitung" finds "hitung".

Sphinx has no Indonesian search language and falls back to English (Porter
stemming, English stop words). This registers one:

- **At index time** every word is reduced to its root by Sastrawi (the
  PySastrawi package, the maintained Python port of the Nazief–Adriani
  stemmer): "perkalian" → "kali", "dihitung" → "hitung".
- **At query time** the page's JavaScript must reduce the reader's words the
  same way. Porting Sastrawi (and its 30.000-word dictionary) to JavaScript
  would put hundreds of kB on every page, so the build writes, into
  ``language_data.js``, the root of every word that occurs in the book and
  differs from it. A query word found there gets exactly Sastrawi's root. For
  words the book does not contain, a small affix stripper tries the usual
  prefixes and suffixes and keeps the first candidate that is a root in the
  search index.

``tests/test_site.py`` checks in Chromium that both sides agree on the book's
whole vocabulary.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sphinx.search import SearchLanguage

# Frequent function words; they would match every page.
STOPWORDS = set(
    """
    yang dan di ke dari ini itu untuk dengan pada adalah akan atau juga tidak
    dalam sebagai oleh karena bila jika maka agar supaya sudah belum lalu
    kita kami anda ia dia mereka saja hanya setiap satu para pun lebih
    """.split()
)
CACHE_FILE = "atensi-akar-kata.json"  # in the doctree folder: survives incremental builds

# Query side. `Search` is the object of searchtools.js; its index is loaded
# before any query is stemmed.
JS_STEMMER = r"""
var AKAR_KATA = %(roots)s;
var Stemmer = function () {
  var prefixes = ["meny", "meng", "mem", "men", "me", "peng", "peny", "pem",
                  "pen", "per", "pe", "ber", "be", "ter", "te", "di", "ke", "se"];
  var recode = {"meny": "s", "peny": "s", "mem": "p", "pem": "p",
                "men": "t", "pen": "t", "meng": "k", "peng": "k"};
  var suffixes = ["lah", "kah", "tah", "pun", "nya", "ku", "mu", "kan", "an", "i"];
  function known(word) {
    var index = (typeof Search !== "undefined" && Search._index) ? Search._index.terms : null;
    return index !== null && Object.prototype.hasOwnProperty.call(index, word);
  }
  function stripSuffixes(word) {
    var out = [word];
    for (var round = 0; round < 3; round++) {
      var last = out[out.length - 1];
      for (var i = 0; i < suffixes.length; i++) {
        var s = suffixes[i];
        if (last.length > s.length + 2 && last.slice(-s.length) === s) {
          out.push(last.slice(0, -s.length));
          break;
        }
      }
    }
    return out;
  }
  function candidates(word) {
    var out = stripSuffixes(word);
    for (var round = 0; round < 2; round++) {
      var more = [];
      out.forEach(function (w) {
        prefixes.forEach(function (p) {
          if (w.length > p.length + 2 && w.indexOf(p) === 0) {
            var rest = w.slice(p.length);
            more.push(rest);
            if (recode[p]) more.push(recode[p] + rest);
          }
        });
      });
      more.forEach(function (w) { out = out.concat(stripSuffixes(w)); });
    }
    return out;
  }
  this.stemWord = function (word) {
    word = word.toLowerCase();
    if (Object.prototype.hasOwnProperty.call(AKAR_KATA, word)) return AKAR_KATA[word];
    if (known(word)) return word;
    // Stop words are never indexed; they stay as they are (Sastrawi keeps them too).
    if (typeof stopwords !== "undefined" && stopwords.indexOf(word) !== -1) return word;
    var list = candidates(word);
    for (var i = 1; i < list.length; i++) if (known(list[i])) return list[i];
    return word;
  };
};
"""


class SearchIndonesian(SearchLanguage):
    lang = "id"
    language_name = "Indonesian"
    stopwords = STOPWORDS
    roots: dict[str, str] = {}  # word -> root, for every word the book indexed

    def init(self, options):
        from Sastrawi.Stemmer.StemmerFactory import StemmerFactory

        self._sastrawi = StemmerFactory().create_stemmer()

    def stem(self, word: str) -> str:
        word = word.lower()
        root = SearchIndonesian.roots.get(word)
        if root is None:
            root = self._sastrawi.stem(word) or word
            SearchIndonesian.roots[word] = root
        return root

    # Sphinx writes language_data.js before the pages are indexed, so the
    # roots are filled in at the end of the build (``write_roots``).
    js_stemmer_code = JS_STEMMER % {"roots": "{}"}


def roots_js() -> str:
    differing = {w: r for w, r in sorted(SearchIndonesian.roots.items()) if w != r}
    return json.dumps(differing, ensure_ascii=False, separators=(",", ":"))


def load_roots(app):
    path = Path(app.doctreedir) / CACHE_FILE
    if path.exists():
        SearchIndonesian.roots.update(json.loads(path.read_text(encoding="utf-8")))


def write_roots(app) -> None:
    path = Path(app.doctreedir) / CACHE_FILE
    path.write_text(json.dumps(SearchIndonesian.roots, ensure_ascii=False), encoding="utf-8")
    language_data = Path(app.outdir) / "_static" / "language_data.js"
    text = language_data.read_text(encoding="utf-8")
    # A rebuild that copies no static files leaves last build's map in place:
    # replace whatever map is there.
    line = re.compile(r"^var AKAR_KATA = \{.*\};$", re.M)
    if not line.search(text):
        raise RuntimeError(f"{language_data}: baris 'var AKAR_KATA = ...;' tidak ditemukan")
    new = f"var AKAR_KATA = {roots_js()};"
    language_data.write_text(line.sub(lambda _: new, text, count=1), encoding="utf-8")
