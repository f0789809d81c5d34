// Draws the lesson's live explorers on the static site (no kernel, no network).
// Each <div class="lesson-explorer"> holds a Vega-Lite spec written by
// lesson_lib (lesson_lib/explorers/myst.py). Every number in it was computed
// by lesson_lib for every state of the controls; this script only draws the
// chart with the vendored vega-embed and repeats the chart's message in a
// live region, so screen readers hear what changed.
(function () {
  "use strict";

  var MESSAGE_CLASS = "message_marks";

  function messageText(chart) {
    var marks = chart.querySelectorAll("g." + MESSAGE_CLASS + " text");
    var lines = [];
    marks.forEach(function (text) {
      var spans = text.querySelectorAll("tspan");
      if (spans.length) {
        spans.forEach(function (s) { lines.push(s.textContent); });
      } else {
        lines.push(text.textContent);
      }
    });
    return lines.join(" ");
  }

  function fail(box, error) {
    var p = document.createElement("p");
    p.className = "lesson-explorer-error";
    p.setAttribute("role", "alert");
    p.textContent = "This explorer could not be drawn (" + error + "); " +
      "the figure and table beside it show the lesson's values.";
    box.appendChild(p);
    if (window.console) { console.warn("lesson explorer:", error); }
  }

  function draw(box) {
    var chart = box.querySelector(".lesson-explorer-chart");
    var status = box.querySelector(".lesson-explorer-status");
    var spec;
    try {
      spec = JSON.parse(box.querySelector(".lesson-explorer-spec").textContent);
    } catch (e) {
      fail(box, "its data is unreadable");
      return;
    }
    if (typeof window.vegaEmbed !== "function") {
      fail(box, "the Vega scripts did not load");
      return;
    }
    window.vegaEmbed(chart, spec, { actions: false, renderer: "svg" }).then(function (result) {
      var view = result.view;
      var pending = false;
      function update() {
        pending = false;
        status.textContent = messageText(chart);
        box.setAttribute("data-state-serial", String(Number(box.getAttribute("data-state-serial") || 0) + 1));
      }
      function changed() {
        if (pending) { return; }
        pending = true;
        view.runAsync().then(update);
      }
      (spec.params || []).forEach(function (p) {
        if (p.bind) { view.addSignalListener(p.name, changed); }
      });
      update();
      box.classList.add("lesson-explorer-ready");
    }).catch(function (e) { fail(box, String(e && e.message || e)); });
  }

  function start() {
    document.querySelectorAll("div.lesson-explorer").forEach(draw);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
