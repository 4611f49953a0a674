// Typeset TeX with MathJax under Node.js, for formulas.py.
// stdin:  {"mathjax": "<es5 folder>", "fontURL": "<url>", "items": [[tex, display], ...]}
// stdout: {"html": ["<mjx-container ...>", ...], "css": "<the CHTML stylesheet>"}
const fs = require("fs");
const job = JSON.parse(fs.readFileSync(0, "utf8"));

global.MathJax = {
  loader: {
    paths: { mathjax: job.mathjax },
    require: require,
    // liteDOM: no browser here. assistive-mml: a hidden MathML copy of each
    // formula for screen readers, as MathJax adds in the browser.
    load: ["adaptors/liteDOM", "input/tex-full", "output/chtml", "a11y/assistive-mml"],
  },
  // Without "noundefined" an unknown macro is an error the build reports,
  // not red text in the page.
  tex: { packages: { "[-]": ["noundefined"] } },
  chtml: { fontURL: job.fontURL, adaptiveCSS: true },
  startup: { typeset: false },
};
require(job.mathjax + "/startup.js");

MathJax.startup.promise
  .then(() => {
    const adaptor = MathJax.startup.adaptor;
    const html = job.items.map(([tex, display]) =>
      adaptor.outerHTML(MathJax.tex2chtml(tex, { display })));
    // Only the glyphs and sizes the formulas above use ("adaptive" CSS).
    const css = adaptor.textContent(MathJax.chtmlStylesheet());
    process.stdout.write(JSON.stringify({ html, css }));
  })
  .catch((err) => {
    console.error(err && err.message ? err.message : String(err));
    process.exit(1);
  });
