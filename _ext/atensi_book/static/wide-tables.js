// A hint above every table or printed output that is wider than its box
// (_ext/atensi_book/__init__.py): the box scrolls sideways, and on a phone the reader
// would not otherwise know that columns are hidden.
(() => {
  const BOXES = ".pst-scrollable-table-container, div.tabel-lebar, table.tabel-lebar, div.cell_output pre";
  const HINT = "⇆ geser ke samping untuk melihat semuanya";

  function mark() {
    document.querySelectorAll(BOXES).forEach((box) => {
      const wide = box.scrollWidth > box.clientWidth + 1;
      const hint = box.previousElementSibling;
      const hasHint = hint && hint.classList.contains("geser-petunjuk");
      if (wide && !hasHint) {
        const note = document.createElement("span");
        note.className = "geser-petunjuk";
        note.setAttribute("aria-hidden", "true");
        note.textContent = HINT;
        box.before(note);
      } else if (!wide && hasHint) {
        hint.remove();
      }
    });
  }

  let pending = null;
  window.addEventListener("load", mark);
  // A table inside a dropdown has no width until the reader opens it.
  document.addEventListener("click", () => setTimeout(mark, 50));
  document.addEventListener("toggle", () => setTimeout(mark, 50), true);
  window.addEventListener("resize", () => {
    clearTimeout(pending);
    pending = setTimeout(mark, 150);
  });
})();
