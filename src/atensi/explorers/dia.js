// Siapa dia? The reference model (atensi.rujukan) run in the page (atensi.explorers.dia).
//
// Inlined as a classic <script> at the end of its .atensi-dia root, so
// document.currentScript finds the root. script.atensi-weights holds either the
// weights themselves (a notebook's output) or, in the built book, the address
// of a script file that registers them in window.atensiExplorerData
// (_ext/atensi_book/explorers.py). That file is loaded on the reader's first
// touch: a <script src> works from file://, a fetch does not, and a phone
// should not pay for the weights of a widget nobody uses.
//
// forward() is TinyGPT.forward of atensi.model for one sentence: token plus
// learned position embedding, per layer pre-layer-norm causal attention with
// 1/sqrt(d_k), W_O, then a GELU (tanh) MLP, each added to the residual; final
// layer norm and readout. JavaScript numbers are float64, the weights float32:
// the page agrees with NumPy's float32 forward pass to rounding.
//
// Weights that do not arrive, or do not fit the config they came with, leave
// the answer NumPy computed for the start sentence on the page, switch the
// controls off and say so in Indonesian, instead of computing garbage.
(function (root) {
  "use strict";
  var data = JSON.parse(root.querySelector("script.atensi-dia-data").textContent);
  var holder = JSON.parse(root.querySelector("script.atensi-weights").textContent);
  var out = root.querySelector(".atensi-dia-readout");
  var text = root.querySelector('input[data-dia="text"]');
  var selects = Array.prototype.slice.call(root.querySelectorAll("select[data-slot]"));
  var guessMode = root.querySelector('input[data-dia="guess"]');
  var guessBox = root.querySelector(".atensi-dia-guess");
  var QUESTION = ["siapa", "?"];
  var SENTENCE = 6;
  var AGAIN = " Muat ulang halaman, atau unduh salinan luring buku ini.";
  var LOST = "Bobot model gagal dimuat (berkasnya hilang atau rusak), jadi yang tampil hanya " +
    "jawaban untuk kalimat awal, dihitung saat buku dibangun, dan kontrolnya dimatikan." + AGAIN;
  var model = null;
  var requested = false;
  var broken = false;
  var pending = null;  // the sentence asked for before the weights arrived

  // keep: leave the readout on the page and add the message below it.
  function note(message, kind, keep) {
    if (!keep) out.innerHTML = "";
    var p = document.createElement("p");
    p.className = "atensi-error";
    p.textContent = message;
    out.appendChild(p);
    root.setAttribute("data-error", kind);
  }

  function formatId(x, digits) {
    var t = Math.abs(x).toFixed(digits).split(".");
    return (x < 0 && Number(t.join(".")) !== 0 ? "-" : "") +
      t[0].replace(/\B(?=(\d{3})+(?!\d))/g, ".") + (t[1] ? "," + t[1] : "");
  }

  // ---------------------------------------------------------------- weights

  function decode(p) {
    if (!p || typeof p.data !== "string" || !Array.isArray(p.shape)) return null;
    var bytes;
    try { bytes = atob(p.data); } catch (e) { return null; }
    var size = p.shape.reduce(function (a, b) { return a * b; }, 1);
    if (bytes.length !== 4 * size) return null;
    var raw = new Uint8Array(bytes.length);
    for (var n = 0; n < bytes.length; n++) raw[n] = bytes.charCodeAt(n);
    var values = new Float32Array(raw.buffer);  // little-endian, as weights_data writes
    for (var m = 0; m < values.length; m++) if (!isFinite(values[m])) return null;
    return values;
  }

  // The parameters the config implies (atensi.model.param_shapes), each decoded and
  // of that shape; null when anything is missing, damaged or of another size.
  function build(w) {
    if (!w || typeof w !== "object" || !w.config || !w.params || !Array.isArray(w.vocab)) {
      return null;
    }
    var c = w.config, D = c.d_model, F = null, V = c.vocab;
    if (!(D > 0 && c.n_head > 0 && D % c.n_head === 0 && c.n_layer > 0 &&
          w.vocab.length === V)) return null;
    if (c.positions !== "learned" && c.positions !== "none") return null;
    if (!w.params["l0.W1"] || !Array.isArray(w.params["l0.W1"].shape)) return null;
    F = w.params["l0.W1"].shape[1];
    var shapes = { wte: [V, D], "lnf.g": [D], "lnf.b": [D], Wout: [D, V], bout: [V] };
    if (c.positions === "learned") shapes.wpe = [c.T, D];
    for (var l = 0; l < c.n_layer; l++) {
      [["ln1.g", [D]], ["ln1.b", [D]], ["Wq", [D, D]], ["Wk", [D, D]], ["Wv", [D, D]],
       ["Wo", [D, D]], ["bo", [D]], ["ln2.g", [D]], ["ln2.b", [D]], ["W1", [D, F]], ["b1", [F]],
       ["W2", [F, D]], ["b2", [D]]].forEach(function (s) { shapes["l" + l + "." + s[0]] = s[1]; });
    }
    var p = {};
    var names = Object.keys(shapes);
    if (Object.keys(w.params).length !== names.length) return null;
    for (var n = 0; n < names.length; n++) {
      var given = w.params[names[n]];
      if (!given || String(given.shape) !== String(shapes[names[n]])) return null;
      p[names[n]] = decode(given);
      if (!p[names[n]]) return null;
    }
    var head = w.head;
    if (!Array.isArray(head) || !(head[0] >= 0 && head[0] < c.n_layer && head[1] >= 0 &&
        head[1] < c.n_head)) return null;
    var index = {};
    w.vocab.forEach(function (word, i) { index[word] = i; });
    return { c: c, p: p, D: D, F: F, V: V, head: head, vocab: w.vocab, index: index };
  }

  // ---------------------------------------------------------------- forward

  function layerNorm(x, g, b) {
    var D = x.length, mu = 0, v = 0, y = new Array(D);
    for (var i = 0; i < D; i++) mu += x[i];
    mu /= D;
    for (i = 0; i < D; i++) v += (x[i] - mu) * (x[i] - mu);
    var r = 1 / Math.sqrt(1e-5 + v / D);
    for (i = 0; i < D; i++) y[i] = (x[i] - mu) * r * g[i] + b[i];
    return y;
  }

  // y = x W (+ b), W row-major (len(x), cols)
  function matvec(x, W, cols, b) {
    var y = new Array(cols);
    for (var j = 0; j < cols; j++) y[j] = b ? b[j] : 0;
    for (var i = 0; i < x.length; i++) {
      var xi = x[i], off = i * cols;
      for (j = 0; j < cols; j++) y[j] += xi * W[off + j];
    }
    return y;
  }

  // Logits of every position and the attention weights of every layer and head.
  function forward(m, ids) {
    var c = m.c, p = m.p, D = m.D, T = ids.length, H = c.n_head, dk = D / H;
    var x = ids.map(function (t, i) {
      var r = new Array(D);
      for (var d = 0; d < D; d++) {
        r[d] = p.wte[t * D + d] + (c.positions === "learned" ? p.wpe[i * D + d] : 0);
      }
      return r;
    });
    var maps = [];
    for (var l = 0; l < c.n_layer; l++) {
      var k = "l" + l + ".";
      var h = x.map(function (r) { return layerNorm(r, p[k + "ln1.g"], p[k + "ln1.b"]); });
      var Q = h.map(function (r) { return matvec(r, p[k + "Wq"], D); });
      var K = h.map(function (r) { return matvec(r, p[k + "Wk"], D); });
      var Vv = h.map(function (r) { return matvec(r, p[k + "Wv"], D); });
      var A = [];
      var O = x.map(function () { return new Array(D).fill(0); });
      var factor = c.scale ? 1 / Math.sqrt(dk) : 1;
      for (var hh = 0; hh < H; hh++) {
        var rows = [];
        for (var i = 0; i < T; i++) {
          var s = [], top = -Infinity;
          for (var j = 0; j <= i; j++) {
            var dot = 0;
            for (var d = hh * dk; d < (hh + 1) * dk; d++) dot += Q[i][d] * K[j][d];
            s.push(dot * factor);
            if (s[j] > top) top = s[j];
          }
          var total = 0;
          for (j = 0; j <= i; j++) { s[j] = Math.exp(s[j] - top); total += s[j]; }
          var row = new Array(T).fill(0);
          for (j = 0; j <= i; j++) {
            row[j] = s[j] / total;
            for (d = hh * dk; d < (hh + 1) * dk; d++) O[i][d] += row[j] * Vv[j][d];
          }
          rows.push(row);
        }
        A.push(rows);
      }
      maps.push(A);
      x = x.map(function (r, i) {
        var a = matvec(O[i], p[k + "Wo"], D, p[k + "bo"]);
        var y = r.map(function (v, d) { return v + a[d]; });
        var u = matvec(layerNorm(y, p[k + "ln2.g"], p[k + "ln2.b"]), p[k + "W1"], m.F, p[k + "b1"]);
        var C = Math.sqrt(2 / Math.PI);
        var g = u.map(function (z) {
          return 0.5 * z * (1 + Math.tanh(C * (z + 0.044715 * z * z * z)));
        });
        var f = matvec(g, p[k + "W2"], D, p[k + "b2"]);
        return y.map(function (v, d) { return v + f[d]; });
      });
    }
    var logits = x.map(function (r) {
      return matvec(layerNorm(r, p["lnf.g"], p["lnf.b"]), p.Wout, m.V, p.bout);
    });
    return { logits: logits, maps: maps };
  }

  // ---------------------------------------------------------------- sentences

  function words(sentence) {
    return sentence.replace(/,/g, " , ").split(/\s+/).filter(function (w) { return w; });
  }

  // At most about 80 characters of what the reader typed; invisible characters
  // by their code, so that a right-to-left override cannot turn the message.
  function quote(t, limit) {
    limit = limit || 80;
    var chars = Array.from(t);
    if (chars.length > limit) chars = chars.slice(0, limit - 1).concat(["\u2026"]);
    return chars.map(function (c) {
      return /[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/
        .test(c) ? "<U+" + hex(c) + ">" : c;
    }).join("");
  }

  function hex(c) {
    var h = c.codePointAt(0).toString(16).toUpperCase();
    while (h.length < 4) h = "0" + h;
    return h;
  }

  // A character that is not what it looks like, named as atensi.rujukan names it.
  function describe(c) {
    var code = "U+" + hex(c), n = c.codePointAt(0);
    if (data.invisible[c]) return "karakter tak terlihat " + code + " (" + data.invisible[c] + ")";
    var script = n >= 0x400 && n < 0x530 ? "Kiril" : n >= 0x370 && n < 0x400 ? "Yunani" :
      n >= 0xff00 && n < 0xfff0 ? "lebar penuh" : null;
    var plain = data.lookalike[c] || c.normalize("NFKD").charAt(0);
    if (!/^[\x20-\x7e]$/.test(plain)) plain = "";
    if (/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2069]/.test(c)) {
      return "karakter tak terlihat " + code;
    }
    if (script || (plain && plain !== c)) {
      return "huruf " + code + " (" + (script || "bukan Latin") + ")" +
        (plain && plain !== c ? " yang mirip '" + plain + "'" : "");
    }
    return "karakter " + code;
  }

  function strange(word) {
    var chars = Array.from(word);
    for (var i = 0; i < chars.length; i++) {
      if (!/^[\x21-\x7e]$/.test(chars[i])) return describe(chars[i]);
    }
    return "";
  }

  // The sentence checked like atensi.rujukan does, with the same Indonesian messages;
  // names in any case (a phone capitalises only the first word). Returns {words} or {error}.
  function check(sentence) {
    var folded = {};
    data.names.forEach(function (n) { folded[n.toLowerCase()] = n; });
    var w = words(sentence).map(function (x) { return folded[x.toLowerCase()] || x; });
    var verbs = [], active = [], passive = [];
    data.verbs.forEach(function (pair) { active.push(pair[0]); passive.push(pair[1]); });
    verbs = active.concat(passive);
    var known = data.names.concat(verbs, data.completions, [",", "karena", "dia"]);
    var vocabulary = " Kosakatanya: nama " + data.names.join(", ") + "; kata kerja " +
      verbs.join(", ") + "; pelengkap " + data.completions.join(", ") +
      "; kata sambung ',' dan 'karena'.";
    var shown = quote(sentence.trim());
    if (!w.length) {
      return { error: "Kalimatnya kosong. Ketik misalnya \"Ani memanggil Budi , dia menoleh\"." };
    }
    for (var n = 0; n < w.length; n++) {
      if (known.indexOf(w[n]) < 0) {
        var odd = strange(w[n]);
        return { error: "Kalimat \"" + shown + "\" berisi kata yang tidak dikenal " +
          "model: '" + quote(w[n], 30) + "'." +
          (odd ? " Kata itu memuat " + odd + "; ketik ulang kata itu dengan huruf biasa." : "") +
          vocabulary };
      }
    }
    var ok = w.length === SENTENCE && data.names.indexOf(w[0]) >= 0 && verbs.indexOf(w[1]) >= 0 &&
      data.names.indexOf(w[2]) >= 0 && (w[3] === "," || w[3] === "karena") && w[4] === "dia" &&
      data.completions.indexOf(w[5]) >= 0;
    if (!ok) {
      return { error: "Kalimat \"" + shown + "\" tidak berbentuk 'Nama kata-kerja " +
        "Nama , dia pelengkap' atau 'Nama kata-kerja Nama karena dia pelengkap', misalnya " +
        "\"Ani memanggil Budi , dia menoleh\" atau \"Ani memanggil Budi karena dia bosan\"." };
    }
    if (w[3] !== data.link[w[5]]) {
      var want = data.link[w[5]];
      return { error: "Kalimat \"" + shown + "\": pelengkap '" + w[5] + "' disambung dengan '" +
        want + "', bukan '" + w[3] + "', misalnya \"" + w[0] + " " + w[1] + " " + w[2] +
        (want === "," ? " ," : " karena") + " dia " + w[5] + "\"." };
    }
    if (w[0] === w[2]) {
      return { error: "Kalimat \"" + shown + "\" memakai nama '" + w[0] + "' dua " +
        "kali; dia hanya bisa dipilih di antara dua nama berbeda." };
    }
    return { words: w };
  }

  // Whether the sentence was in the training data (atensi.rujukan.seen_in_training).
  function seen(w) {
    var activeOf = {};
    data.verbs.forEach(function (pair) {
      activeOf[pair[0]] = pair[0];
      activeOf[pair[1]] = pair[0];
    });
    var verb = activeOf[w[1]], passive = verb !== w[1];
    var actedOn = passive ? w[0] : w[2];
    var held = (data.held_out[verb] || []).indexOf(actedOn) >= 0 ||
      data.held_out_completion[verb] === w[5];
    return !held;
  }

  function compute(w) {
    var ids = w.concat(QUESTION).map(function (t) { return model.index[t]; });
    var run = forward(model, ids);
    var ask = ids.length - 1;
    var last = run.logits[ask];
    var best = 0, top = -Infinity;
    last.forEach(function (v, i) { if (v > top) { top = v; best = i; } });
    var total = 0;
    var e = last.map(function (v) { var x = Math.exp(v - top); total += x; return x; });
    return {
      sentence: w.join(" "),
      answer: model.vocab[best],
      row: run.maps[model.head[0]][model.head[1]][ask].slice(0, SENTENCE),
      rows: data.labels.map(function (lab) {
        return run.maps[lab[0]][lab[1]][ask].slice(0, SENTENCE);
      }),
      seen: seen(w),
      logits: last,
      names: data.names,
      probs: data.names.map(function (n) { return e[model.index[n]] / total; }),
    };
  }

  function el(tag, cls, parent, content) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (content != null) node.textContent = content;
    if (parent) parent.appendChild(node);
    return node;
  }

  function bars(ws, row, cls, parent) {
    var list = el("ol", cls, parent);
    ws.forEach(function (word, j) {
      var li = el("li", null, list);
      el("span", "atensi-dia-word", li, word);
      var bar = el("span", "atensi-dia-bar", li);
      el("span", null, bar).style.width = (100 * row[j]).toFixed(1) + "%";
      el("span", "atensi-dia-num", li, formatId(row[j], 2));
    });
  }

  // The same readout as atensi.explorers.dia.readout_html, built from the result.
  function draw(r) {
    out.innerHTML = "";
    root.removeAttribute("data-error");
    var answer = el("p", "atensi-dia-answer", out);
    answer.append("Menurut model, ");
    el("em", null, answer, "dia");
    answer.append(" = ");
    el("strong", null, answer, r.answer);
    var badge = el("p", "atensi-dia-badge", out, r.seen === false ? data.unseen : data.seen);
    badge.setAttribute("data-seen", String(r.seen !== false));
    var caption = el("p", "atensi-dia-caption", out, "Bobot atensi ");
    el("em", null, caption, "head");
    caption.append(" pemilih nama dari \"?\" ke setiap kata:");
    var wordsShown = r.sentence.split(" ");
    bars(wordsShown, r.row, "atensi-dia-row", out);
    if (r.rows && r.rows.length) {
      el("p", "atensi-dia-caption", out, "Setiap lapisan, dari \"?\" ke setiap kata:");
      var heads = el("div", "atensi-dia-heads", out);
      data.labels.forEach(function (lab, n) {
        var fig = el("figure", "atensi-dia-head", heads);
        el("figcaption", null, fig, "lapisan " + (lab[0] + 1) + (lab[2] ? ", " + lab[2] : ""));
        bars(wordsShown, r.rows[n], "atensi-dia-mini", fig);
      });
    }
    out.setAttribute("data-result", JSON.stringify(r));
    ask(r);
  }

  // "Tebak dulu": the reader commits to a name before the readout is shown.
  function ask(r) {
    if (!guessMode || !guessBox) return;
    var on = guessMode.checked && !broken;
    guessBox.hidden = !on;
    out.hidden = on;
    if (!on) return;
    var w = r.sentence.split(" ");
    Array.prototype.forEach.call(guessBox.querySelectorAll("button[data-name]"), function (b) {
      b.textContent = w[Number(b.getAttribute("data-name"))];
    });
  }

  function shown() {
    return out.hasAttribute("data-result") ? JSON.parse(out.getAttribute("data-result")) :
      data.start;
  }

  function answered(name) {
    var r = shown();
    guessBox.hidden = true;
    out.hidden = false;
    var right = name === r.answer;
    var p = document.createElement("p");
    p.className = "atensi-dia-verdict";
    p.setAttribute("data-right", String(right));
    p.textContent = "Tebakan Anda: " + name + ". " + (right ? "Sama dengan model." :
      "Model menjawab " + r.answer + ": lihat kata kerjanya (aktif atau pasif) dan " +
      "pelengkapnya (yang dikenai atau yang berbuat).");
    out.insertBefore(p, out.firstChild);
  }

  function show(sentence) {
    if (broken) return;
    var checked = check(sentence);
    // An invalid edit replaces any earlier valid one still waiting for the
    // weights: the reader's own text stays, with its message.
    if (checked.error) { pending = null; note(checked.error, "kalimat"); return; }
    if (!model) { pending = checked.words; return; }
    pending = null;
    var r = compute(checked.words);
    draw(r);
    selects.forEach(function (s) { s.value = checked.words[Number(s.getAttribute("data-slot"))]; });
    if (words(text.value).join(" ") !== r.sentence) text.value = r.sentence;
  }

  function lost() {
    broken = true;
    model = null;
    selects.forEach(function (s) { s.disabled = true; });
    text.disabled = true;
    var start = data.start.sentence.split(" ");
    selects.forEach(function (s) { s.value = start[Number(s.getAttribute("data-slot"))]; });
    text.value = data.start.sentence;
    draw(data.start);
    note(LOST, "bobot", true);
  }

  // Weights of another task or model, or tampered ones, do not answer for this
  // task: the vocabulary and T must be the task's, and the weights must give
  // the answer NumPy computed for the start sentence when the book was built.
  function trusted(m) {
    if (!m || String(m.vocab) !== String(data.vocab) || m.c.T !== data.T) return false;
    try {
      var r = compute(data.start.sentence.split(" "));
      if (r.answer !== data.start.answer) return false;
      for (var i = 0; i < r.logits.length; i++) {
        if (!(Math.abs(r.logits[i] - data.start.logits[i]) <= 1e-3)) return false;
      }
      for (i = 0; i < r.row.length; i++) {
        if (!(Math.abs(r.row[i] - data.start.row[i]) <= 1e-3)) return false;
      }
    } catch (e) { return false; }
    return true;
  }

  function ready(weights) {
    model = build(weights);
    if (!model || !trusted(model)) { lost(); return; }
    root.setAttribute("data-ready", "");
    if (pending) show(pending.join(" "));
  }

  function load() {
    if (requested) return;
    requested = true;
    if (holder.params) { ready(holder); return; }
    if (!holder.src) { lost(); return; }
    var registry = window.atensiExplorerData = window.atensiExplorerData || {};
    var script = document.createElement("script");
    script.src = holder.src;
    // A script cut short still fires "load" (after its syntax error): its entry is missing.
    script.addEventListener("load", function () { ready(registry[holder.id]); });
    script.addEventListener("error", lost);
    document.head.appendChild(script);
  }

  function fromSelects() {
    var w = words(text.value);
    if (w.length !== SENTENCE) w = data.start.sentence.split(" ");
    selects.forEach(function (s) { w[Number(s.getAttribute("data-slot"))] = s.value; });
    w[3] = data.link[w[5]];  // the completion brings its joining word
    text.value = w.join(" ");
    load();
    show(text.value);
  }

  selects.forEach(function (s) { s.addEventListener("change", fromSelects); });
  if (guessMode && guessBox) {
    guessMode.addEventListener("change", function () {
      load();
      ask(shown());
    });
    Array.prototype.forEach.call(guessBox.querySelectorAll("button[data-name]"), function (b) {
      b.addEventListener("click", function () { answered(b.textContent); });
    });
  }
  text.addEventListener("input", function () { load(); show(text.value); });
  ["pointerdown", "touchstart", "focusin", "keydown"].forEach(function (t) {
    root.addEventListener(t, load, { passive: true });
  });
})(document.currentScript.parentNode);
