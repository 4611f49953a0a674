// Glossary on tap (_ext/atensi_book/glossary_popover.py): a term link opens its
// one-line definition beside it; the full entry is one more link away.
(() => {
  const data = document.querySelector("script.glosarium-data");
  if (!data) return;
  const terms = JSON.parse(data.textContent);
  let open = null; // {box, link}

  function close(returnFocus) {
    if (!open) return;
    const { box, link } = open;
    open = null;
    box.remove();
    link.setAttribute("aria-expanded", "false");
    if (returnFocus) link.focus();
  }

  function show(link, entry) {
    close(false);
    const box = document.createElement("div");
    box.className = "glosarium-popover";
    box.setAttribute("role", "dialog");
    box.id = "glosarium-popover";
    const title = document.createElement("p");
    title.className = "glosarium-judul";
    title.id = "glosarium-popover-judul";
    title.textContent = entry.istilah;
    box.setAttribute("aria-labelledby", title.id);
    const meaning = document.createElement("p");
    meaning.textContent = entry.arti;
    const actions = document.createElement("p");
    actions.className = "glosarium-aksi";
    const full = document.createElement("a");
    full.href = link.getAttribute("href");
    full.textContent = "Entri lengkap di Glosarium";
    const shut = document.createElement("button");
    shut.type = "button";
    shut.textContent = "Tutup";
    shut.addEventListener("click", () => close(true));
    actions.append(full, shut);
    box.append(title, meaning, actions);
    // Placed under the term, within the screen; focus moves into it, so a
    // screen reader reads it next wherever it sits in the document.
    document.body.append(box);
    const at = link.getBoundingClientRect();
    const width = box.getBoundingClientRect().width;
    const screen = document.documentElement.clientWidth;
    box.style.top = `${at.bottom + window.scrollY + 4}px`;
    box.style.left = `${Math.max(8, Math.min(at.left, screen - width - 8)) + window.scrollX}px`;
    link.setAttribute("aria-expanded", "true");
    link.setAttribute("aria-controls", box.id);
    open = { box, link };
    full.focus();
  }

  document.querySelectorAll("a.glosarium-istilah").forEach((link) => {
    const anchor = (link.getAttribute("href") || "").split("#")[1];
    const entry = anchor && terms[decodeURIComponent(anchor)];
    if (!entry) return;
    link.setAttribute("aria-haspopup", "dialog");
    link.setAttribute("aria-expanded", "false");
    link.addEventListener("click", (event) => {
      if (event.ctrlKey || event.metaKey || event.shiftKey) return; // a new tab still works
      event.preventDefault();
      if (open && open.link === link) close(true);
      else show(link, entry);
    });
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") close(true);
  });
  document.addEventListener("click", (event) => {
    if (open && !open.box.contains(event.target) && !open.link.contains(event.target)) close(false);
  });
})();
