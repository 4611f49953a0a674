// Kembaran statis penjelajah atensi (atensi.explorers.framework).
//
// Inlined as a classic <script> at the end of its .atensi-explorer root, so
// document.currentScript finds the root, also when a notebook inserts it.
// The JSON in script.atensi-data holds the controls and either every frame
// (a notebook's output) or, in the built book, the address of a script file
// with the frames (_ext/atensi_book/explorers.py). That file is loaded when
// the reader first touches the explorer: a <script src> works from file://,
// a fetch does not.
//
// Frames are looked up by the key "i,j,k" of control value indices. Earlier
// controls take precedence: a range offers only the values for which a frame
// exists given the controls before it (row i runs to T - 1, T is never limited
// by row i), and keeps its value if it can, else the largest one below.
// A choice (a fieldset of radio buttons, one per value) follows the same rule:
// a value without a frame is switched off, the browser's radio group skips it.
//
// Files can be missing or damaged (a partial copy of the site, an interrupted
// download, a deploy still on its way). The frame table is checked against
// what the page expects (data.count: frames and pictures) before it is used;
// a table that does not arrive or does not fit leaves the start frame on show
// and switches the controls off. A picture that does not load sends the
// explorer back to the last frame whose picture did, or hides the picture.
// Either way the readout says so, and label, picture and readout always
// belong to one frame.
//
// "Tebak dulu" (data.guess, optional): the reader picks an option before the
// outcome is shown; then the verdict and its explanation appear and the
// controls move to the state where the outcome is on show. The page holds the
// right option only as a hash (FNV-1a of "salt:index", as framework.answer_hash)
// and the explanation base64-encoded, so neither can be read in its source.
(function (root) {
  "use strict";
  var data = JSON.parse(root.querySelector("script.atensi-data").textContent);
  var img = root.querySelector("img.atensi-frame");
  var out = root.querySelector(".atensi-readout");
  var fig = root.querySelector(".atensi-figure");
  var controls = data.controls;
  var start = controls.map(function (c) { return c.start; });
  var state = start.slice();
  var shown = start.slice();  // the state whose frame is on the page
  var good = null;  // {state, src}: the last frame whose picture loaded
  var inputs = controls.map(function (c) {
    return root.querySelector('[data-control="' + c.key + '"]');
  });
  var prefixes = null;
  var requested = false;
  var waiting = false;
  var broken = false;
  var AGAIN = " Muat ulang halaman, atau unduh salinan luring buku ini.";
  var TABLE_LOST = "Bingkai penjelajah ini gagal dimuat (berkasnya hilang atau rusak), " +
    "jadi hanya posisi awal yang tampil dan kontrolnya dimatikan." + AGAIN;
  var PICTURE_BACK = "Gambar untuk posisi yang dipilih gagal dimuat, jadi penjelajah " +
    "kembali ke posisi sebelumnya." + AGAIN;
  var PICTURE_LOST = "Gambar untuk posisi ini gagal dimuat." + AGAIN;

  function key(s) { return s.join(","); }

  function note(text, kind) {
    Array.prototype.forEach.call(out.querySelectorAll(".atensi-error"), function (p) { p.remove(); });
    var p = document.createElement("p");
    p.className = "atensi-error";
    p.textContent = text;
    out.appendChild(p);
    root.setAttribute("data-error", kind);
  }

  function isIndex(v, n) { return typeof v === "number" && v % 1 === 0 && v >= 0 && v < n; }

  // Whether a frame table fits this explorer: the counts the page expects,
  // keys of one index per control, pictures that exist, readouts as text.
  function fits(t) {
    if (!t || typeof t !== "object" || !t.frames || typeof t.frames !== "object") return false;
    var pictures = data.src ? t.urls : t.images;
    if (!Array.isArray(pictures) || !pictures.length) return false;
    if (!pictures.every(function (p) { return typeof p === "string" && p.length > 0; })) return false;
    var keys = Object.keys(t.frames);
    if (data.count && (keys.length !== data.count[0] || pictures.length !== data.count[1])) return false;
    if (!t.frames[key(start)]) return false;
    return keys.every(function (k) {
      var p = k.split(",");
      if (p.length !== controls.length) return false;
      for (var n = 0; n < p.length; n++) {
        if (String(Number(p[n])) !== p[n] || !isIndex(Number(p[n]), controls[n].values)) return false;
      }
      var f = t.frames[k];
      return Array.isArray(f) && isIndex(f[0], pictures.length) && typeof f[1] === "string" &&
        (f[2] == null || (Array.isArray(f[2]) && f[2].every(function (b) {
          return Array.isArray(b) && b.length === 4 &&
            b.every(function (x) { return typeof x === "number" && isFinite(x); });
        })));
    });
  }

  // No usable frame table: the start frame stays, the controls show it and stop.
  function lost() {
    broken = true;
    waiting = false;
    state = shown.slice();
    controls.forEach(function (c, n) {
      var el = inputs[n];
      if (c.kind === "checkbox") el.checked = state[n] === 1;
      else if (c.kind === "choice") pick(n, el._opts);
      else { el.value = el._opts.indexOf(state[n]); label(n); }
      el.disabled = true;  // a disabled fieldset switches off every radio in it
    });
    note(TABLE_LOST, "bingkai");
  }

  function pictureLoaded() {
    if (!img.getAttribute("src")) return;
    good = { state: shown.slice(), src: img.getAttribute("src") };
  }

  function pictureFailed() {
    var src = img.getAttribute("src");
    if (!src) return;
    if (good && good.src !== src && prefixes) {  // back to the last picture that showed
      state = good.state.slice();
      show();
      note(PICTURE_BACK, "gambar");
    } else {  // nothing to go back to: no picture rather than a broken one
      good = null;
      img.classList.add("atensi-missing");
      if (!broken) note(PICTURE_LOST, "gambar");  // else the readout already says why
    }
  }

  function ready(frames) {
    if (!fits(frames)) { lost(); return; }
    data.frames = frames.frames;
    data.images = frames.images;
    data.urls = frames.urls;
    prefixes = {};
    Object.keys(data.frames).forEach(function (k) {
      var p = k.split(",");
      for (var n = 1; n <= p.length; n++) prefixes[p.slice(0, n).join(",")] = true;
    });
    root.setAttribute("data-ready", "");
    if (data.urls) {  // warm the browser cache: the next frames show at once
      data.urls.forEach(function (u) { new Image().src = u; });
    }
    if (waiting) show();
  }

  function load() {
    if (requested || !data.src) return;
    requested = true;
    var registry = window.atensiExplorerData = window.atensiExplorerData || {};
    var script = document.createElement("script");
    script.src = data.src;
    // A script cut short still fires "load" (after its syntax error): its entry is missing.
    script.addEventListener("load", function () { ready(registry[data.id]); });
    script.addEventListener("error", lost);
    document.head.appendChild(script);
  }

  function options(n) {
    var r = [];
    for (var v = 0; v < controls[n].values; v++) {
      if (prefixes[key(state.slice(0, n).concat([v]))]) r.push(v);
    }
    return r;
  }

  function label(n) {
    root.querySelector('[data-value-for="' + controls[n].key + '"]').textContent =
      controls[n].shown[state[n]];
  }

  // The radio of the current value checked; those without a frame switched off.
  function pick(n, opts) {
    Array.prototype.forEach.call(inputs[n].querySelectorAll("input[type=radio]"), function (r) {
      var v = Number(r.value);
      r.checked = v === state[n];
      r.disabled = opts.indexOf(v) < 0;
    });
  }

  function sync() {
    controls.forEach(function (c, n) {
      var el = inputs[n];
      if (c.kind === "checkbox") { el.checked = state[n] === 1; return; }
      var opts = options(n);
      if (opts.indexOf(state[n]) < 0) {
        var best = opts[0];
        opts.forEach(function (v) { if (v <= state[n]) best = v; });
        state[n] = best;
      }
      el._opts = opts;
      if (c.kind === "choice") { pick(n, opts); return; }
      el.max = opts.length - 1;
      el.value = opts.indexOf(state[n]);
      label(n);
    });
  }

  function show() {
    waiting = false;
    if (broken) return;
    sync();
    var k = key(state);
    var f = data.frames[k];
    shown = state.slice();
    root.removeAttribute("data-error");  // a new frame: an earlier picture's failure is no longer on show
    img.classList.remove("atensi-missing");
    img.src = data.urls ? data.urls[f[0]] : "data:" + data.mime + ";base64," + data.images[f[0]];
    img.setAttribute("data-frame", k);
    out.innerHTML = f[1];
    Array.prototype.forEach.call(fig.querySelectorAll(".atensi-mark"), function (m) { m.remove(); });
    (f[2] || []).forEach(function (b) {
      var m = document.createElement("div");
      m.className = "atensi-mark";
      m.style.left = (100 * b[0]) + "%";
      m.style.top = (100 * b[1]) + "%";
      m.style.width = (100 * b[2]) + "%";
      m.style.height = (100 * b[3]) + "%";
      fig.appendChild(m);
    });
  }

  function fnv(text) {
    var bytes = unescape(encodeURIComponent(text)), h = 0x811c9dc5;
    for (var i = 0; i < bytes.length; i++) {
      h ^= bytes.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return ("0000000" + h.toString(16)).slice(-8);
  }

  function answered(chosen) {
    var g = data.guess;
    var box = root.querySelector(".atensi-guess");
    Array.prototype.forEach.call(box.querySelectorAll("button"), function (b) {
      b.disabled = true;
      if (b.getAttribute("data-guess") === String(chosen)) b.setAttribute("aria-pressed", "true");
    });
    if (chosen !== null) {
      var right = -1;
      for (var n = 0; n < g.choices.length; n++) if (fnv(g.salt + ":" + n) === g.hash) right = n;
      var why = decodeURIComponent(escape(atob(g.why)));
      var p = box.querySelector(".atensi-verdict");
      p.textContent = (chosen === right ? "Tepat." : "Belum tepat: jawabannya \u00ab" +
        g.choices[right] + "\u00bb, bukan \u00ab" + g.choices[chosen] + "\u00bb.") + " " + why;
      p.setAttribute("data-right", String(chosen === right));
      p.hidden = false;
    }
    root.setAttribute("data-guessed", chosen === null ? "skip" : String(chosen));
    if (broken) return;
    state = g.reveal.slice();
    if (prefixes) show(); else { waiting = true; load(); }
  }

  if (data.guess) {
    Array.prototype.forEach.call(root.querySelectorAll(".atensi-guess button"), function (b) {
      b.addEventListener("click", function () {
        var v = b.getAttribute("data-guess");
        answered(v === "skip" ? null : Number(v));
      });
    });
  }

  inputs.forEach(function (el, n) {
    el._opts = data.options[n];
    function read() {
      if (broken) return;
      var kind = controls[n].kind;
      if (kind === "choice") {
        var on = el.querySelector("input[type=radio]:checked");
        if (!on) return;
        state[n] = Number(on.value);
      } else {
        state[n] = kind === "checkbox" ? (el.checked ? 1 : 0) : el._opts[+el.value];
      }
      if (prefixes) { show(); return; }
      if (controls[n].kind === "range") label(n);
      waiting = true;  // shown as soon as the frames arrive
      load();
    }
    el.addEventListener("input", read);
    el.addEventListener("change", read);
  });
  ["pointerdown", "touchstart", "focusin", "keydown"].forEach(function (t) {
    root.addEventListener(t, load, { passive: true });
  });
  img.addEventListener("load", pictureLoaded);
  img.addEventListener("error", pictureFailed);
  // The start picture may have loaded, or failed, before this script ran.
  if (img.complete && img.getAttribute("src")) {
    if (img.naturalWidth) pictureLoaded(); else pictureFailed();
  }
  if (data.frames || data.images) ready(data);
})(document.currentScript.parentNode);
