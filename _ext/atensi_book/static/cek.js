// "Cek pemahaman" questions and the reader's progress (_ext/atensi_book/questions.py).
// The page holds salted FNV-1a hashes of the right answer and masked feedback;
// both are read only once the reader has answered. Progress stays on the device.
(() => {
  const KEY = "atensi-cek";

  function fnv1a(text) {
    let h = 0x811c9dc5;
    for (const byte of new TextEncoder().encode(text)) {
      h ^= byte;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    return h.toString(16).padStart(8, "0");
  }

  function unmask(masked, seed) {
    let state = parseInt(fnv1a(seed), 16) || 1;
    const raw = atob(masked);
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) {
      state ^= state << 13; state >>>= 0;
      state ^= state >>> 17;
      state ^= state << 5; state >>>= 0;
      bytes[i] = raw.charCodeAt(i) ^ (state & 0xff);
    }
    return new TextDecoder().decode(bytes);
  }

  // Typed numbers: "0,66", "0.66", "1.048.576", "1.048,5".
  function parseNumber(text) {
    // A unit the reader typed after the number ("48 MiB", "33 %") is the one asked for.
    let t = text.trim().replace(/\u2212/g, "-").replace(/\s*(%|[A-Za-z]+)$/, "").replace(/\s/g, "");
    if (t.includes(",")) t = t.replace(/\./g, "").replace(",", ".");
    else if ((t.match(/\./g) || []).length > 1) t = t.replace(/\./g, "");
    if (!/^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t)) return NaN;
    return Number(t);
  }

  function load() {
    try { return JSON.parse(localStorage.getItem(KEY) || "{}") || {}; } catch (e) { return {}; }
  }
  let memory = load(); // when storage is off, progress lasts for this page
  function save(id, chapter, right) {
    const before = memory[id];
    memory[id] = { bab: chapter, benar: right || Boolean(before && before.benar) };
    try { localStorage.setItem(KEY, JSON.stringify(memory)); } catch (e) { /* storage off */ }
    showProgress();
  }

  // Every element .cek-kemajuan[data-bab][data-jumlah] says how far the reader is.
  function showProgress() {
    document.querySelectorAll(".cek-kemajuan[data-bab]").forEach((el) => {
      const chapter = el.getAttribute("data-bab");
      const total = Number(el.getAttribute("data-jumlah"));
      const mine = Object.values(memory).filter((q) => q && q.bab === chapter);
      const right = mine.filter((q) => q.benar).length;
      el.textContent = `${mine.length} dari ${total} dijawab, ${right} benar`;
    });
    document.querySelectorAll(".cek-reset").forEach((button) => {
      button.hidden = Object.keys(memory).length === 0;
    });
  }

  function setup(box) {
    const data = JSON.parse(box.querySelector("script.cek-data").textContent);
    const check = box.querySelector(".cek-periksa");
    const reveal = box.querySelector(".cek-lihat");
    const feedback = box.querySelector(".cek-umpan");
    const say = (text, right) => {
      feedback.textContent = text;
      feedback.classList.toggle("cek-benar", right === true);
      feedback.classList.toggle("cek-salah", right === false);
    };
    check.addEventListener("click", () => {
      const salt = data.garam;
      if (data.jenis === "pilihan") {
        const chosen = box.querySelector("input[type=radio]:checked");
        if (!chosen) { say("Pilih satu jawaban dulu."); return; }
        const i = Number(chosen.value);
        const right = fnv1a(`${salt}:${i}`) === data.kunci;
        const why = unmask(data.umpan[i], `${salt}:umpan:${i}`);
        say(`${right ? "Benar." : "Belum tepat."} ${why}`, right);
        save(data.id, data.bab, right);
        return;
      }
      const input = box.querySelector("input[type=text]");
      const value = parseNumber(input.value);
      if (!Number.isFinite(value)) {
        say("Tulis satu bilangan, misalnya 0,25 atau 0.25.");
        input.setAttribute("aria-invalid", "true");
        return;
      }
      input.removeAttribute("aria-invalid");
      const hash = fnv1a(`${salt}:${Math.floor(value / data.lebar)}`);
      const right = data.kunci.includes(hash);
      let why;
      if (right) why = unmask(data.umpan[1], `${salt}:umpan:benar`);
      else if (data.keliru && data.keliru.includes(hash)) why = unmask(data.umpan[2], `${salt}:umpan:keliru`);
      else why = unmask(data.umpan[0], `${salt}:umpan:salah`);
      say(`${right ? "Benar." : "Belum tepat."} ${why}`, right);
      reveal.hidden = right;
      save(data.id, data.bab, right);
    });
    reveal.addEventListener("click", () => {
      say(`Jawabannya ${unmask(data.jawaban, `${data.garam}:jawaban`)}.`);
      reveal.hidden = true;
    });
  }

  document.querySelectorAll(".cek-pemahaman").forEach(setup);
  document.addEventListener("click", (event) => {
    if (!event.target.closest(".cek-reset")) return;
    memory = {};
    try { localStorage.removeItem(KEY); } catch (e) { /* storage off */ }
    showProgress();
  });
  showProgress();
})();
