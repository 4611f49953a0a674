// Buttons of the folded code (_ext/atensi_book/folding.py). The fold state is
// already on <html data-kode>, set before the first paint; this only reacts.
(() => {
  const KEY = "atensi-kode";
  const root = document.documentElement;
  const pageState = () => root.getAttribute("data-kode") || "buka";
  const cellState = (cell) => cell.getAttribute("data-kode") || pageState();

  function sync() {
    document.querySelectorAll(".lipat-tombol").forEach((button) => {
      const cell = button.closest(".lipat");
      button.setAttribute("aria-expanded", String(cellState(cell) === "buka"));
    });
  }

  document.addEventListener("click", (event) => {
    const one = event.target.closest(".lipat-tombol");
    if (one) {
      const cell = one.closest(".lipat");
      cell.setAttribute("data-kode", cellState(cell) === "buka" ? "lipat" : "buka");
      sync();
      return;
    }
    const all = event.target.closest(".lipat-semua");
    if (all) {
      const next = pageState() === "buka" ? "lipat" : "buka";
      root.setAttribute("data-kode", next);
      document.querySelectorAll(".lipat[data-kode]").forEach((cell) => cell.removeAttribute("data-kode"));
      try { localStorage.setItem(KEY, next); } catch (e) { /* storage off: this page only */ }
      sync();
    }
  });
  // A link to code inside a folded cell (#anchor) opens that cell.
  function openTarget() {
    const target = location.hash && document.getElementById(decodeURIComponent(location.hash.slice(1)));
    const cell = target && target.closest(".lipat");
    if (cell && cellState(cell) === "lipat") {
      cell.setAttribute("data-kode", "buka");
      sync();
    }
  }
  window.addEventListener("hashchange", openTarget);
  sync();
  openTarget();
})();
