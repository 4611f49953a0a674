// Shrink display equations that are wider than their box, down to 60 %
// (_ext/atensi_book/formulas.py). Beyond that they scroll sideways.
(() => {
  const SMALLEST = 0.6;

  function fit() {
    document.querySelectorAll("div.math > div.rumus").forEach((box) => {
      if (!box.dataset.fullSize) box.dataset.fullSize = getComputedStyle(box).fontSize;
      const full = parseFloat(box.dataset.fullSize);
      box.style.fontSize = `${full}px`;
      const ratio = box.clientWidth / box.scrollWidth;
      if (ratio < 1) box.style.fontSize = `${full * Math.max(SMALLEST, ratio * 0.98)}px`;
    });
  }

  // The formulas are MathML in the page; their widths are final once the
  // math font has arrived.
  window.addEventListener("load", () => {
    document.fonts.ready.then(() => {
      fit();
      let pending = null;
      window.addEventListener("resize", () => {
        clearTimeout(pending);
        pending = setTimeout(fit, 100);
      });
    });
  });
})();
