// Draws the lesson's live explorers on the static site (no kernel, no network).
// Each <div class="lesson-explorer"> holds a Vega-Lite spec written by
// lesson_lib (lesson_lib/explorers/myst.py). Every number in it was computed
// by lesson_lib for every state of the controls; this script only draws the
// chart with the vendored vega-embed and repeats the chart's message in a
// live region, so screen readers hear what changed.
//
// On a column narrower than the chart (a phone), the chart is drawn again with
// every width in the spec scaled down until it fits, the message leaves the
// chart and the live region shows it as wrapped text under the controls
// (the box gets the class lesson-explorer-narrow): nothing scrolls sideways.
(function () {
  "use strict";

  var MESSAGE_MARKS = "message_marks";
  var MESSAGE_FIELD = "_message";
  var NARROW = "lesson-explorer-narrow";
  var SCALED = "lesson-explorer-scaled";
  var MIN_WIDTH = 120;
  var TRIES = 4;

  // The message of the current state, from the message mark's data (lines
  // joined by spaces), whether or not the chart draws it.
  function messageText(view) {
    var found = null;
    (function walk(node) {
      if (!node || found !== null) { return; }
      if (node.marktype && node.name === MESSAGE_MARKS) {
        found = (node.items || []).map(function (item) {
          return String(item.datum && item.datum[MESSAGE_FIELD]).split("\n").join(" ");
        }).join(" ");
        return;
      }
      (node.items || []).forEach(walk);
    })(view.scenegraph().root);
    return found || "";
  }

  // A copy of the spec with every width scaled by factor (at least MIN_WIDTH
  // pixels), legends one entry per line, and the message's text left out of
  // the drawing.
  function narrowSpec(spec, factor) {
    var copy = JSON.parse(JSON.stringify(spec));
    (function walk(node) {
      if (Array.isArray(node)) { node.forEach(walk); return; }
      if (!node || typeof node !== "object") { return; }
      if (typeof node.width === "number") {
        node.width = Math.max(MIN_WIDTH, Math.floor(node.width * factor));
      }
      if (node.legend && typeof node.legend === "object") {
        node.legend.direction = "vertical";
        node.legend.columns = 1;
      }
      if (node.name === "message" && node.encoding) {
        node.encoding.text = { value: "" };
        node.height = 1;
      }
      Object.keys(node).forEach(function (k) {
        if (k !== "data" && k !== "legend") { walk(node[k]); }
      });
    })(copy);
    return copy;
  }

  function drawnWidth(chart) {
    var svg = chart.querySelector("svg");
    return svg ? svg.getBoundingClientRect().width : 0;
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
    var options = { actions: false, renderer: "svg" };
    // Draw the spec; while the drawing is wider than the column, draw it again
    // narrower. A chart laid out in fixed pixels does not get narrower with its
    // widths: after TRIES it is drawn at its own width and scaled down whole.
    function embed(current, factor, tries) {
      return window.vegaEmbed(chart, current, options).then(function (result) {
        var room = chart.clientWidth;
        var width = drawnWidth(chart);
        if (width <= room + 0.5 || box.classList.contains(SCALED)) { return result; }
        result.view.finalize();
        box.classList.add(NARROW);
        if (tries >= TRIES) {
          box.classList.add(SCALED);
          return embed(narrowSpec(spec, 1), 1, tries);
        }
        var next = factor * Math.max(0.5, (room - 2) / width);
        return embed(narrowSpec(spec, next), next, tries + 1);
      });
    }
    embed(spec, 1, 0).then(function (result) {
      var view = result.view;
      var pending = false;
      function update() {
        pending = false;
        status.textContent = messageText(view);
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
