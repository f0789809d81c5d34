// Renders TeX to SVG with the vendored MathJax, at build time (static_math.py).
// Reads [{tex, display}] as JSON on stdin; writes {html: [...], css} on stdout:
// each formula as an <mjx-container> with its SVG (glyphs inline, so no font
// is fetched) and hidden MathML for screen readers, and the stylesheet they need.
// Usage: node static_math.js path/to/mathjax/es5/node-main.js
"use strict";
const main = process.argv[2];
let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const items = JSON.parse(input);
  require(main)
    .init({
      loader: { load: ["input/tex", "output/svg", "a11y/assistive-mml"] },
      svg: { fontCache: "local" },
      startup: { typeset: false },
    })
    .then((MathJax) => {
      const adaptor = MathJax.startup.adaptor;
      const html = items.map((item) =>
        adaptor.outerHTML(MathJax.tex2svg(item.tex, { display: item.display })),
      );
      const css = adaptor.textContent(MathJax.svgStylesheet());
      process.stdout.write(JSON.stringify({ html, css }));
    })
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
});
