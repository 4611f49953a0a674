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
(function (root) {
  "use strict";
  var data = JSON.parse(root.querySelector("script.atensi-data").textContent);
  var img = root.querySelector("img.atensi-frame");
  var out = root.querySelector(".atensi-readout");
  var fig = root.querySelector(".atensi-figure");
  var controls = data.controls;
  var state = controls.map(function (c) { return c.start; });
  var inputs = controls.map(function (c) {
    return root.querySelector('[data-control="' + c.key + '"]');
  });
  var prefixes = null;
  var requested = false;
  var waiting = false;

  function key(s) { return s.join(","); }

  function ready(frames) {
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
    script.addEventListener("load", function () { ready(registry[data.id]); });
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
      el.max = opts.length - 1;
      el.value = opts.indexOf(state[n]);
      el._opts = opts;
      label(n);
    });
  }

  function show() {
    waiting = false;
    sync();
    var k = key(state);
    var f = data.frames[k];
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

  inputs.forEach(function (el, n) {
    el._opts = data.options[n];
    function read() {
      state[n] = controls[n].kind === "checkbox" ? (el.checked ? 1 : 0) : el._opts[+el.value];
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
  if (data.frames) ready(data);
})(document.currentScript.parentNode);
