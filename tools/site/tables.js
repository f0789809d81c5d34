// Wide tables scroll sideways inside their box; this adds a visible cue above
// each table that does not fit, and removes it when the table fits again
// (on load and whenever the window is resized).
//
// On a phone (tables.css) a table keeps its words whole and scrolls instead.
(function () {
  "use strict";
  var HINT = "lesson-scroll-hint";

  function scroller(table) {
    for (var el = table.parentElement; el && el.tagName !== "ARTICLE"; el = el.parentElement) {
      var o = getComputedStyle(el).overflowX;
      if (o === "auto" || o === "scroll") { return el; }
    }
    return null;
  }

  function mark() {
    document.querySelectorAll("article table").forEach(function (table) {
      var box = scroller(table);
      if (!box) { return; }
      var hint = box.previousElementSibling;
      var has = hint && hint.classList.contains(HINT);
      var wide = box.scrollWidth > box.clientWidth + 1;
      if (wide && !has) {
        hint = document.createElement("p");
        hint.className = HINT;
        hint.textContent = "\u2194 This table is wider than the page: scroll it sideways for more columns.";
        box.parentNode.insertBefore(hint, box);
        box.classList.add("lesson-scrolls");
        if (!box.hasAttribute("tabindex")) {
          box.setAttribute("tabindex", "0");  // keyboard users can scroll it too
          box.setAttribute("role", "region");
          box.setAttribute("aria-label", "wide table, scrolls sideways");
        }
      } else if (!wide && has) {
        hint.remove();
        box.classList.remove("lesson-scrolls");
      }
    });
  }

  var timer = null;
  window.addEventListener("resize", function () {
    clearTimeout(timer);
    timer = setTimeout(mark, 150);
  });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", mark);
  } else {
    mark();
  }
})();
