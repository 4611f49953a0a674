// Shrink display equations that are wider than their box, down to 60 %
// (_ext/atensi_book/formulas.py). Beyond that they scroll sideways.
(() => {
  const SMALLEST = 0.6;

  function fit() {
    document.querySelectorAll("div.math > mjx-container").forEach((box) => {
      if (!box.dataset.fullSize) box.dataset.fullSize = getComputedStyle(box).fontSize;
      const full = parseFloat(box.dataset.fullSize);
      box.style.fontSize = `${full}px`;
      const ratio = box.clientWidth / box.scrollWidth;
      if (ratio < 1) box.style.fontSize = `${full * Math.max(SMALLEST, ratio * 0.98)}px`;
    });
  }

  function start() {
    fit();
    let pending = null;
    window.addEventListener("resize", () => {
      clearTimeout(pending);
      pending = setTimeout(fit, 100);
    });
  }

  // Math typeset at build time (prerender_math.py) is already in the page;
  // MathJax in the browser (no Node.js at build time) has to finish first.
  window.addEventListener("load", () => {
    const startup = window.MathJax && window.MathJax.startup;
    if (startup && startup.promise) startup.promise.then(start);
    else start();
  });
})();
