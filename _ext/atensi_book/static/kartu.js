// "Lanjutkan membaca" (_ext/atensi_book/chapter_card.py): each chapter remembers,
// on the device, the last section the reader reached; the front page offers it.
(() => {
  const KEY = "atensi-terakhir";
  const card = document.querySelector(".kartu-bab");
  if (!card) return;
  const chapter = card.getAttribute("data-bab");
  const root = card.getAttribute("data-akar"); // the front page, relative to this one

  function read() {
    try { return JSON.parse(localStorage.getItem(KEY) || "null"); } catch (e) { return null; }
  }

  const offer = card.querySelector(".kartu-lanjut");
  if (offer) {
    const last = read();
    if (last && last.bab && last.bab !== chapter && last.alamat) {
      // Addresses are kept relative to the front page, so they work from
      // file://, from the offline zip and on the site alike.
      const link = document.createElement("a");
      link.href = last.alamat + (last.bagian ? "#" + encodeURIComponent(last.bagian) : "");
      link.textContent = last.judul + (last.judulBagian ? ` — ${last.judulBagian}` : "");
      offer.append("Lanjutkan membaca: ", link);
      offer.hidden = false;
    }
    return;
  }

  // The section whose heading was last scrolled past the top of the screen.
  const title = (document.querySelector("main h1") || {}).textContent || document.title;
  const here = (() => {
    // This page's address as the front page would link to it.
    const from = new URL(root, location.href);
    const base = from.href.slice(0, from.href.lastIndexOf("/") + 1);
    const page = location.href.split("#")[0];
    return page.startsWith(base) ? page.slice(base.length) : null;
  })();
  if (!here) return;
  let pending = null;
  function remember() {
    pending = null;
    let section = null;
    for (const heading of document.querySelectorAll("main section[id] > h2, main section[id] > h3")) {
      if (heading.getBoundingClientRect().top > 80) break;
      section = heading.parentElement;
    }
    const value = {
      bab: chapter, alamat: here, judul: title.replace(/[#¶]\s*$/, "").trim(),
      bagian: section ? section.id : "",
      judulBagian: section ? section.firstElementChild.textContent.replace(/[#¶]\s*$/, "").trim() : "",
    };
    try { localStorage.setItem(KEY, JSON.stringify(value)); } catch (e) { /* storage off */ }
  }
  remember();
  window.addEventListener("scroll", () => { if (!pending) pending = setTimeout(remember, 400); }, { passive: true });
})();
