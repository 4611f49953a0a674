// Taman bermain 2-D untuk contoh berjalan (atensi.explorers.playground).
//
// One ES module, two hosts:
// - the static book: the page inlines this file as <script type="module">
//   (deferred by the browser); each .atensi-playground root is built when it
//   first comes near the screen, and computes in the page with compute();
// - Jupyter: anywidget imports the default export; the page only draws and
//   sends the moved vectors, Python computes with atensi.reference.
// compute() is the JavaScript twin of those formulas, for one row i:
//   S_ij = q_i · k_j (× 1/√d_k), masked: S_ij = −∞ for j > i,
//   A_ij = exp(S_ij − max) / Σ, o_i = Σ_j A_ij v_j.

const SVG = "http://www.w3.org/2000/svg";
const MINUS_INF = "\u2212\u221e";

export function compute(Q, K, V, row, scale, mask) {
  const d = K[0].length;
  const factor = scale ? 1 / Math.sqrt(d) : 1;
  const scores = K.map((k) => {
    let dot = 0;
    for (let c = 0; c < d; c++) dot += Q[row][c] * k[c];
    return dot * factor;
  });
  const masked = scores.map((s, j) => (mask && j > row ? -Infinity : s));
  const top = Math.max(...masked);
  const e = masked.map((s) => (s === -Infinity ? 0 : Math.exp(s - top)));
  const total = e.reduce((a, b) => a + b, 0);
  const weights = e.map((x) => x / total);
  const output = [];
  for (let c = 0; c < d; c++) {
    let acc = 0;
    for (let j = 0; j < V.length; j++) acc += weights[j] * V[j][c];
    output.push(acc);
  }
  return { scores, masked, weights, output };
}

// Indonesian numbers, like atensi.formatting.id_float: 1.234,567.
export function formatId(x, digits) {
  if (x === -Infinity || x === null) return MINUS_INF;
  const text = Math.abs(x).toFixed(digits);
  const [whole, frac] = text.split(".");
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ".");
  const negative = x < 0 && Number(text) !== 0;
  return (negative ? "-" : "") + grouped + (frac ? "," + frac : "");
}

// Points on the same spot get one label: "k memanggil, menoleh" on the first
// of them, "" on the others. points: [x, y] each; names: one per point.
export function mergeCoincident(points, names) {
  const first = new Map();
  const texts = names.map(() => "");
  points.forEach((p, j) => {
    const spot = p.join(";");
    if (first.has(spot)) texts[first.get(spot)] += ", " + names[j];
    else { first.set(spot, j); texts[j] = names[j]; }
  });
  return texts;
}

// Labels that would still overlap (points close together, not on one spot)
// move whole lines away from their point, 1 down, 1 up, 2 down, ..., in the
// order given, so the first ones keep their place. boxes: {x, y, width, height}
// with y the baseline, as SVG text; marks: boxes in the same form that no label
// may cover (the points themselves). Returns the new baselines, inside [top, bottom].
export function stackLabels(boxes, lineHeight, top, bottom, marks = []) {
  const placed = marks.slice();
  const overlaps = (b, y) => placed.some((p) =>
    b.x < p.x + p.width && p.x < b.x + b.width && y - b.height < p.y && p.y - p.height < y);
  return boxes.map((b) => {
    let y = b.y;
    for (let n = 1; b.width > 0 && overlaps(b, y) && n <= 40; n++) {
      const lines = n % 2 ? (n + 1) / 2 : -n / 2;
      const tried = b.y + lines * lineHeight;
      if (tried - b.height >= top && tried <= bottom) y = tried;
    }
    if (b.width > 0) placed.push({ ...b, y });
    return y;
  });
}

function el(tag, attrs, parent, ns) {
  const node = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, value);
  if (parent) parent.appendChild(node);
  return node;
}

function svgEl(tag, attrs, parent) {
  return el(tag, attrs, parent, SVG);
}

function copy(M) {
  return M.map((r) => r.slice());
}

// Builds the playground inside root. data: tokens, axes, row, Q, K, V, limits,
// step, key_step, targets, start. hooks.compute(state) gives the result, or
// null when it will arrive later through view.show(result).
export function mount(root, data, hooks) {
  const [lo, hi] = data.limits;
  const size = 320, pad = 30, span = size - 2 * pad;
  const px = (x) => pad + ((x - lo) / (hi - lo)) * span;
  const py = (y) => size - pad - ((y - lo) / (hi - lo)) * span;
  const row = data.row;
  const tokens = data.tokens;
  const state = {
    Q: copy(data.Q), K: copy(data.K), target: data.start.target,
    scale: data.start.scale, mask: data.start.mask,
  };
  const uid = "pg" + Math.random().toString(36).slice(2, 9);
  // The page's placeholder goes; its <style> and data stay.
  for (const child of Array.from(root.children)) if (!child.matches("style, script")) child.remove();

  el("div", { class: "atensi-pg-title" }, root).textContent = data.title;
  const controls = el("div", { class: "atensi-pg-controls" }, root);
  const pick = el("label", {}, controls);
  pick.append("yang digeser ");
  const select = el("select", { "data-pg": "target" }, pick);
  for (const t of data.targets) el("option", { value: t.id }, select).textContent = t.label;
  select.value = state.target;
  function checkbox(key, label) {
    const box = el("label", {}, controls);
    const input = el("input", { type: "checkbox", "data-pg": key }, box);
    input.checked = state[key];
    box.append(" " + label);
    input.addEventListener("change", () => { state[key] = input.checked; update(); });
    return input;
  }
  checkbox("scale", "bagi dengan \u221ad_k");
  checkbox("mask", "pakai mask");
  const reset = el("button", { type: "button", "data-pg": "reset" }, controls);
  reset.textContent = "kembalikan";

  const plane = svgEl("svg", {
    class: "atensi-pg-plane", viewBox: `0 0 ${size} ${size}`, role: "group",
    "aria-label": `Bidang dua dimensi: sumbu ${data.axes[0]} mendatar, sumbu ${data.axes[1]} tegak`,
  }, root);
  for (let v = Math.ceil(lo); v <= hi; v++) {
    const axis = v === 0 ? " atensi-pg-axis" : "";
    svgEl("line", { class: "atensi-pg-grid" + axis, x1: px(v), x2: px(v), y1: py(lo), y2: py(hi) }, plane);
    svgEl("line", { class: "atensi-pg-grid" + axis, x1: px(lo), x2: px(hi), y1: py(v), y2: py(v) }, plane);
    svgEl("text", { class: "atensi-pg-tick", x: px(v), y: size - pad + 14, "text-anchor": "middle" }, plane)
      .textContent = String(v).replace("-", "\u2212");
    svgEl("text", { class: "atensi-pg-tick", x: pad - 6, y: py(v) + 4, "text-anchor": "end" }, plane)
      .textContent = String(v).replace("-", "\u2212");
  }
  svgEl("text", { class: "atensi-pg-axis-name", x: size - pad, y: size - 4, "text-anchor": "end" }, plane)
    .textContent = data.axes[0] + " \u2192";
  svgEl("text", { class: "atensi-pg-axis-name", x: 4, y: pad - 12 }, plane)
    .textContent = "\u2191 " + data.axes[1];

  const defs = svgEl("defs", {}, plane);
  // Arrow heads take their colour from the stylesheet, as their lines do: the
  // dark theme recolours both.
  for (const name of ["q", "o"]) {
    const marker = svgEl("marker", {
      id: `${uid}-${name}`, viewBox: "0 0 10 10", refX: 9, refY: 5,
      markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse",
    }, defs);
    svgEl("path", { d: "M0,0 L10,5 L0,10 z", class: `atensi-pg-head-${name}` }, marker);
  }
  data.V.forEach((v) => svgEl("circle", { class: "atensi-pg-value", cx: px(v[0]), cy: py(v[1]), r: 4 }, plane));
  const keys = state.K.map(() => {
    const g = svgEl("g", { class: "atensi-pg-key" }, plane);
    const mark = svgEl("rect", { width: 10, height: 10 }, g);
    const label = svgEl("text", {}, g);
    return { g, mark, label };
  });
  const qLine = svgEl("line", { class: "atensi-pg-query", "marker-end": `url(#${uid}-q)` }, plane);
  const qLabel = svgEl("text", { class: "atensi-pg-query-label" }, plane);
  qLabel.textContent = "q " + tokens[row];
  const oLine = svgEl("line", { class: "atensi-pg-output", "marker-end": `url(#${uid}-o)` }, plane);
  const oLabel = svgEl("text", { class: "atensi-pg-output-label" }, plane);
  oLabel.textContent = "o " + tokens[row];

  // The handle sits on the vector being moved: a wide invisible disc for a
  // finger, a dashed ring to see it, and the keyboard focus.
  const handle = svgEl("g", { class: "atensi-pg-handle", tabindex: 0, role: "slider", "data-pg": "handle" }, plane);
  svgEl("circle", { class: "atensi-pg-hit", r: 22 }, handle);
  svgEl("circle", { class: "atensi-pg-ring", r: 11 }, handle);

  const legend = el("p", { class: "atensi-pg-legend" }, root);
  legend.innerHTML = '<span class="atensi-pg-sw q"></span>query ' +
    '<span class="atensi-pg-sw k"></span>key <span class="atensi-pg-sw v"></span>value ' +
    '<span class="atensi-pg-sw o"></span>keluaran';
  const where = el("p", { class: "atensi-pg-where", id: uid + "-where" }, root);
  const formula = el("p", { class: "atensi-pg-note" }, root);
  // At 360 px the four columns may not fit: the table scrolls in its own box
  // (reachable by keyboard), the page around it does not.
  const tableBox = el("div", { class: "atensi-pg-tablebox", tabindex: "0", role: "region",
                               "aria-label": "Tabel skor, mask dan bobot" }, root);
  const table = el("table", { class: "atensi-pg-table" }, tableBox);
  el("caption", {}, table).textContent = `Baris ${tokens[row]}: skor, mask dan bobot`;
  const head = el("tr", {}, el("thead", {}, table));
  for (const name of ["key", "skor", "setelah mask", "bobot"]) el("th", { scope: "col" }, head).textContent = name;
  const body = el("tbody", {}, table);
  const cells = tokens.map((token, j) => {
    const tr = el("tr", {}, body);
    el("th", { scope: "row" }, tr).textContent = token;
    const score = el("td", { "data-pg": "score" }, tr);
    const masked = el("td", { "data-pg": "masked" }, tr);
    const wcell = el("td", {}, tr);
    const track = el("span", { class: "atensi-pg-track" }, wcell);
    const fill = el("span", { class: "atensi-pg-fill" }, track);
    const weight = el("span", { "data-pg": "weight" }, wcell);
    return { tr, score, masked, fill, weight };
  });
  const out = el("p", { class: "atensi-pg-out", "aria-live": "polite" }, root);
  handle.setAttribute("aria-describedby", uid + "-where");

  function moved() {
    const kind = state.target[0], n = Number(state.target.slice(1));
    return kind === "Q" ? state.Q[n] : state.K[n];
  }
  function targetLabel() {
    return data.targets.find((t) => t.id === state.target).label;
  }

  // Every label beside its point, then moved apart where two would overlap.
  let output = null;
  const fontPx = 11; // .atensi-pg-plane font-size
  function width(node) {
    const text = node.textContent;
    if (!text) return 0;
    const measured = node.getComputedTextLength ? node.getComputedTextLength() : 0;
    return measured > 0 ? measured : 0.6 * fontPx * text.length; // not laid out yet
  }
  function placeLabels() {
    const q = state.Q[row];
    const wanted = [[qLabel, px(q[0]) + 8, py(q[1]) - 8]];
    if (output) wanted.push([oLabel, px(output[0]) - 4, py(output[1]) + 18]);
    state.K.forEach((k, j) => wanted.push([keys[j].label, px(k[0]) + 6, py(k[1]) - 8]));
    // A text's box reaches a little below its baseline (g, p, y).
    const descent = 3;
    const boxes = wanted.map(([node, x, y]) => ({ x, y: y + descent, width: width(node), height: fontPx + descent }));
    const square = ([x, y], half) => ({ x: px(x) - half, y: py(y) + half, width: 2 * half, height: 2 * half });
    const marks = state.K.map((k) => square(k, 5)).concat(data.V.map((v) => square(v, 4)));
    const ys = stackLabels(boxes, fontPx + descent, 0, size, marks);
    wanted.forEach(([node, x], n) => { node.setAttribute("x", x); node.setAttribute("y", ys[n] - descent); });
  }

  function draw() {
    const q = state.Q[row];
    qLine.setAttribute("x1", px(0)); qLine.setAttribute("y1", py(0));
    qLine.setAttribute("x2", px(q[0])); qLine.setAttribute("y2", py(q[1]));
    const names = mergeCoincident(state.K, tokens);
    state.K.forEach((k, j) => {
      keys[j].mark.setAttribute("x", px(k[0]) - 5); keys[j].mark.setAttribute("y", py(k[1]) - 5);
      keys[j].label.textContent = names[j] ? "k " + names[j] : "";
    });
    placeLabels();
    const p = moved();
    handle.setAttribute("transform", `translate(${px(p[0])},${py(p[1])})`);
    handle.setAttribute("aria-label", `Geser ${targetLabel()} (tombol panah)`);
    handle.setAttribute("aria-valuemin", lo); handle.setAttribute("aria-valuemax", hi);
    handle.setAttribute("aria-valuenow", p[0]);
    handle.setAttribute("aria-valuetext", `${formatId(p[0], 2)}; ${formatId(p[1], 2)}`);
    where.innerHTML = `${targetLabel()} = (<span data-pg="x">${formatId(p[0], 2)}</span>; ` +
      `<span data-pg="y">${formatId(p[1], 2)}</span>)`;
    formula.textContent = state.scale
      ? `skor = q ${tokens[row]} \u00b7 k \u00f7 \u221ad_k (d_k = ${data.K[0].length})`
      : `skor = q ${tokens[row]} \u00b7 k, tanpa pembagian`;
  }

  function show(result) {
    if (!result) return;
    tokens.forEach((token, j) => {
      const c = cells[j];
      const off = result.masked[j] === null || result.masked[j] === -Infinity;
      c.tr.classList.toggle("is-masked", off);
      c.score.textContent = formatId(result.scores[j], 3);
      c.masked.textContent = off ? MINUS_INF : formatId(result.masked[j], 3);
      c.weight.textContent = formatId(result.weights[j], 3);
      c.fill.style.width = (100 * result.weights[j]).toFixed(1) + "%";
    });
    const o = result.output;
    out.innerHTML = `keluaran o<sub>${tokens[row]}</sub> = \u03a3 bobot \u00d7 value = ` +
      `(<span data-pg="o0">${formatId(o[0], 3)}</span>; <span data-pg="o1">${formatId(o[1], 3)}</span>)`;
    oLine.setAttribute("x1", px(0)); oLine.setAttribute("y1", py(0));
    oLine.setAttribute("x2", px(o[0])); oLine.setAttribute("y2", py(o[1]));
    output = o;
    placeLabels();
    root.setAttribute("data-result", JSON.stringify(result, (k, v) => (v === -Infinity ? null : v)));
  }

  function update() {
    draw();
    show(hooks.compute({ Q: copy(state.Q), K: copy(state.K), scale: state.scale, mask: state.mask }));
  }

  const clamp = (v) => Math.min(hi, Math.max(lo, v));
  const snap = (v, step) => Number((Math.round(clamp(v) / step) * step).toFixed(2));
  function place(x, y, step) {
    const p = moved();
    p[0] = snap(x, step); p[1] = snap(y, step);
    update();
  }
  function toPlane(ev) {
    const m = plane.getScreenCTM().inverse();
    const s = new DOMPoint(ev.clientX, ev.clientY).matrixTransform(m);
    return [lo + ((s.x - pad) / span) * (hi - lo), lo + ((size - pad - s.y) / span) * (hi - lo)];
  }

  // The whole plane is the drag surface: a finger lands anywhere, the point
  // jumps there and follows. (Browsers ignore touch-action on SVG children,
  // so the plane as a whole does not scroll the page.)
  let dragging = null;
  plane.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 && ev.pointerType === "mouse") return;
    dragging = ev.pointerId;
    plane.setPointerCapture(ev.pointerId);
    plane.classList.add("is-dragging");
    ev.preventDefault();
    handle.focus({ preventScroll: true });
    const [x, y] = toPlane(ev);
    place(x, y, data.step);
  });
  plane.addEventListener("pointermove", (ev) => {
    if (dragging !== ev.pointerId) return;
    const [x, y] = toPlane(ev);
    place(x, y, data.step);
  });
  const stop = (ev) => {
    if (dragging !== ev.pointerId) return;
    dragging = null;
    plane.classList.remove("is-dragging");
  };
  plane.addEventListener("pointerup", stop);
  plane.addEventListener("pointercancel", stop);
  handle.addEventListener("keydown", (ev) => {
    const step = data.key_step * (ev.shiftKey ? 5 : 1);
    const p = moved();
    const moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, step], ArrowDown: [0, -step] };
    if (!(ev.key in moves)) return;
    ev.preventDefault();
    place(p[0] + moves[ev.key][0], p[1] + moves[ev.key][1], data.key_step);
  });
  select.addEventListener("change", () => { state.target = select.value; update(); });
  reset.addEventListener("click", () => {
    state.Q = copy(data.Q); state.K = copy(data.K);
    update();
  });
  update();
  root.setAttribute("data-ready", "yes");
  return { show, state };
}

// The page's data, as playground.py writes it: a page copied or saved only in
// part can hold a damaged one, which must not half-build the playground.
function fits(data) {
  const finite = (x) => typeof x === "number" && Number.isFinite(x);
  const vectors = (M, T) => Array.isArray(M) && M.length === T &&
    M.every((v) => Array.isArray(v) && v.length === 2 && v.every(finite));
  if (!data || typeof data !== "object" || !Array.isArray(data.tokens)) return false;
  const T = data.tokens.length;
  return T > 0 && typeof data.title === "string" && Array.isArray(data.axes) &&
    data.axes.length === 2 && Number.isInteger(data.row) && data.row >= 0 && data.row < T &&
    vectors(data.Q, T) && vectors(data.K, T) && vectors(data.V, T) &&
    Array.isArray(data.limits) && data.limits.length === 2 && data.limits.every(finite) &&
    data.limits[0] < data.limits[1] && finite(data.step) && data.step > 0 &&
    finite(data.key_step) && data.key_step > 0 && Array.isArray(data.targets) &&
    data.targets.length > 0 && !!data.start && typeof data.start === "object" &&
    data.targets.some((t) => t && t.id === data.start.target);
}

function broken(root) {
  for (const child of Array.from(root.children)) if (!child.matches("style, script")) child.remove();
  el("p", {
    class: "atensi-pg-error",
  }, root).textContent =
    "Taman bermain ini gagal dibangun: datanya di halaman rusak atau tidak lengkap. " +
    "Muat ulang halaman, atau unduh salinan luring buku ini.";
  root.setAttribute("data-ready", "rusak");
}

// The book: every playground on the page, built when it nears the screen.
function start(root) {
  let data = null;
  try {
    data = JSON.parse(root.querySelector("script.atensi-playground-data").textContent);
  } catch (err) {
    data = null;
  }
  if (!fits(data)) return broken(root);
  mount(root, data, {
    compute: (s) => compute(s.Q, s.K, data.V, data.row, s.scale, s.mask),
  });
}

function boot() {
  document.querySelectorAll(".atensi-playground[data-host='static']:not([data-ready])").forEach((root) => {
    root.setAttribute("data-ready", "waiting");
    if (!("IntersectionObserver" in window)) return start(root);
    const watch = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting)) return;
      watch.disconnect();
      start(root);
    }, { rootMargin: "400px 0px" });
    watch.observe(root);
  });
}

if (typeof document !== "undefined") {
  window.atensiPlayground = { compute, formatId, mergeCoincident, stackLabels };
  boot();
}

// Jupyter (anywidget): Python computes, the page draws and sends the vectors.
const widget = {
  render({ model, el: host }) {
    const root = el("div", { class: "atensi-playground", "data-host": "live" }, host);
    const view = mount(root, model.get("data"), {
      compute(s) {
        model.set("Q", s.Q); model.set("K", s.K);
        model.set("scale", s.scale); model.set("mask", s.mask);
        model.save_changes();
        return null;
      },
    });
    const refresh = () => view.show(model.get("result"));
    model.on("change:result", refresh);
    refresh();
    return () => model.off("change:result", refresh);
  },
};

export default widget;
