// TeX -> MathML with MathJax under Node.js, for formulas.py.
// stdin:  {"mathjax": "<es5 folder>", "items": [[tex, display], ...]}
// stdout: {"mathml": ["<math ...>", ...]}
const fs = require("fs");
const job = JSON.parse(fs.readFileSync(0, "utf8"));

global.MathJax = {
  loader: {
    paths: { mathjax: job.mathjax },
    require: require,
    // liteDOM: no browser here. Only the TeX input: the browser draws the MathML.
    load: ["adaptors/liteDOM", "input/tex-full"],
  },
  tex: {
    // Without "noundefined" an unknown macro is an error the build reports,
    // not red text in the page. bussproofs needs an output jax to measure with.
    packages: { "[-]": ["noundefined", "bussproofs"] },
  },
  startup: { typeset: false },
};
require(job.mathjax + "/startup.js");

MathJax.startup.promise
  .then(() => {
    const mathml = job.items.map(([tex, display]) => MathJax.tex2mml(tex, { display }));
    process.stdout.write(JSON.stringify({ mathml }));
  })
  .catch((err) => {
    console.error(err && err.message ? err.message : String(err));
    process.exit(1);
  });
