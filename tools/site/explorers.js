// Draws the lesson's live explorers on the static site (no kernel, no network).
// Each <div class="lesson-explorer"> holds a Vega-Lite spec written by
// lesson_lib (lesson_lib/explorers/myst.py). Every number in it was computed
// by lesson_lib for every state of the controls; this script only draws the
// chart with the vendored vega-embed and repeats the chart's message in a
// live region, so screen readers hear what changed.
//
// On a column narrower than the chart (a phone), the chart is drawn again
// for the column (the box gets the class lesson-explorer-narrow): panels side
// by side are stacked, each view is made at most as wide as the column less
// what its axes and labels take, legends list one entry per line, a title too
// long for the column is broken over lines, and the message leaves the chart:
// the live region shows it as text, line by line, between the chart and the
// controls. Text keeps its size and nothing scrolls sideways. A chart laid out
// in fixed pixels says in its spec how it is drawn there (usermeta.narrow,
// written by lesson_lib: parameters to set, sizes of named views, views whose
// text is shown as page text); only a chart that still does not fit is scaled
// down whole. When the column's width changes (a phone turned sideways, a
// resized window) every explorer is drawn again for the new width, keeping
// the state of its controls.
//
// Nothing heavy comes with the page: when an explorer nears the viewport the
// Vega scripts and its spec (a script beside the page, named by the spec
// element's data-src, filling window.lessonExplorerSpecs) are inserted as
// <script src> elements, which also load from file://.
(function () {
  "use strict";

  var HERE = document.currentScript && document.currentScript.src;
  var VEGA = ["vega.min.js", "vega-lite.min.js", "vega-embed.min.js"];
  // Start loading this far before an explorer scrolls into view.
  var NEAR = "400px 0px";

  var MESSAGE_MARKS = "message_marks";
  var MESSAGE_FIELD = "_message";
  var NARROW = "lesson-explorer-narrow";
  var SCALED = "lesson-explorer-scaled";
  var NOTES = "lesson-explorer-notes";
  var MIN_WIDTH = 120;
  var TRIES = 5;
  // A title's characters per line on a narrow column: its font size times
  // this is about the width of a character of Vega's sans-serif.
  var CHAR_EM = 0.55;
  // Wait this long after the last resize event before drawing again.
  var RESIZE_DELAY_MS = 150;

  function narrowHints(spec) {
    return (spec.usermeta && spec.usermeta.narrow) || null;
  }

  // The mark items of a view's marks (Vega names them <view>_marks), in order.
  function markItems(view, name) {
    var found = [];
    (function walk(node) {
      if (!node) { return; }
      if (node.marktype && node.name === name) {
        found = found.concat(node.items || []);
        return;
      }
      (node.items || []).forEach(walk);
    })(view.scenegraph().root);
    return found;
  }

  // The message of the current state, from the message mark's data, line
  // by line, whether or not the chart draws it.
  function messageText(view) {
    var found = null;
    (function walk(node) {
      if (!node || found !== null) { return; }
      if (node.marktype && node.name === MESSAGE_MARKS) {
        found = (node.items || []).map(function (item) {
          return String(item.datum && item.datum[MESSAGE_FIELD]);
        }).join("\n");
        return;
      }
      (node.items || []).forEach(walk);
    })(view.scenegraph().root);
    return found || "";
  }

  // The paragraphs of a view drawn as lines of text: consecutive lines with
  // one value of the join field make one paragraph, in the colour drawn.
  function viewParagraphs(view, asText) {
    var paragraphs = [];
    markItems(view, asText.view + "_marks").forEach(function (item) {
      var d = item.datum || {};
      var last = paragraphs[paragraphs.length - 1];
      var text = String(d[asText.text] === undefined ? "" : d[asText.text]);
      if (last && last.join === d[asText.join]) {
        last.text += " " + text;
      } else {
        paragraphs.push({ join: d[asText.join], text: text, color: item.fill });
      }
    });
    return paragraphs;
  }

  // On a narrow column, the views the spec names as text, under the message.
  function showViewsAsText(box, view, hints) {
    var old = box.querySelector("." + NOTES);
    if (old) { old.remove(); }
    if (!hints || !box.classList.contains(NARROW)) { return; }
    var list = document.createElement("ul");
    list.className = NOTES;
    (hints.asText || []).forEach(function (asText) {
      viewParagraphs(view, asText).forEach(function (p) {
        var li = document.createElement("li");
        li.textContent = p.text;
        if (typeof p.color === "string") { li.style.color = p.color; }
        list.appendChild(li);
      });
    });
    box.querySelector(".lesson-explorer-status").after(list);
  }

  // A copy of the spec with each bound parameter's value set from values.
  function withValues(spec, values) {
    var copy = JSON.parse(JSON.stringify(spec));
    (copy.params || []).forEach(function (p) {
      if (p.bind && Object.prototype.hasOwnProperty.call(values, p.name)) {
        p.value = values[p.name];
      }
    });
    return copy;
  }

  // Words of text in lines of at most chars characters.
  function wrap(text, chars) {
    var lines = [];
    text.split(" ").forEach(function (word) {
      var last = lines.length - 1;
      if (last >= 0 && (lines[last] + " " + word).length <= chars) {
        lines[last] += " " + word;
      } else {
        lines.push(word);
      }
    });
    return lines;
  }

  // A copy of the spec for a column room px wide: panels side by side stacked,
  // every view at most cap px wide (at least MIN_WIDTH), titles in lines that
  // fit, legends one entry per line, and the message's text left out of the
  // drawing; then the spec's own narrow layout, if it has one.
  function narrowSpec(spec, room, cap) {
    var copy = JSON.parse(JSON.stringify(spec));
    var hints = narrowHints(spec);
    var views = (hints && hints.views) || {};
    var asText = ((hints && hints.asText) || []).map(function (a) { return a.view; });
    (function walk(node) {
      if (Array.isArray(node)) { node.forEach(walk); return; }
      if (!node || typeof node !== "object") { return; }
      if (Array.isArray(node.hconcat)) {
        node.vconcat = node.hconcat;
        delete node.hconcat;
      }
      var isView = ["mark", "layer", "vconcat", "concat"].some(function (k) { return k in node; });
      if (isView && typeof node.width === "number") {
        node.width = Math.max(MIN_WIDTH, Math.min(node.width, cap));
      }
      var title = node.title;
      if (isView && title && typeof title.text === "string") {
        title.text = wrap(title.text, Math.floor(room / ((title.fontSize || 13) * CHAR_EM)));
      }
      if (node.legend && typeof node.legend === "object") {
        node.legend.direction = "vertical";
        node.legend.columns = 1;
      }
      if (typeof node.name === "string" && Object.prototype.hasOwnProperty.call(views, node.name)) {
        Object.keys(views[node.name]).forEach(function (k) { node[k] = views[node.name][k]; });
      }
      if ((node.name === "message" || asText.indexOf(node.name) >= 0) && node.encoding) {
        node.encoding.text = { value: "" };
        node.height = 1;
      }
      Object.keys(node).forEach(function (k) {
        if (k !== "data" && k !== "legend" && k !== "title") { walk(node[k]); }
      });
    })(copy);
    var params = (hints && hints.params) || {};
    (copy.params || []).forEach(function (p) {
      if (Object.prototype.hasOwnProperty.call(params, p.name)) { p.value = params[p.name]; }
    });
    return copy;
  }

  // The width the box offers its chart, CSS px. The chart's own element is an
  // inline block (vega-embed's style) as wide as what it holds, so it cannot say.
  function roomOf(box) {
    var s = getComputedStyle(box);
    return box.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
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

  var loading = {};

  // A promise of a script inserted once into the page (in order with the others).
  function script(src) {
    if (!loading[src]) {
      loading[src] = new Promise(function (resolve, reject) {
        var el = document.createElement("script");
        el.src = src;
        el.async = false;
        el.onload = resolve;
        el.onerror = function () { reject(new Error("could not load " + src)); };
        document.head.appendChild(el);
      });
    }
    return loading[src];
  }

  // One CSV field as Python's csv module writes it: quoted when it must be.
  function field(text) {
    return /[",\r\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text;
  }

  // A data file stores each CSV table column by column ("lessonColumns": the
  // header and the columns, tools/lesson_site/weight.py), which gzip shrinks
  // to a third; put it back as the CSV text lesson_lib wrote.
  function byRows(part) {
    if (Array.isArray(part)) { return part.map(byRows); }
    if (!part || typeof part !== "object") { return part; }
    var out = {};
    Object.keys(part).forEach(function (key) { out[key] = byRows(part[key]); });
    if (out.lessonColumns) {
      var header = out.lessonColumns[0];
      var columns = out.lessonColumns[1].map(function (column) {
        return typeof column === "string" ? column.split(",") : column;
      });
      var lines = [header.map(field).join(",")];
      var count = columns.length ? columns[0].length : 0;
      for (var i = 0; i < count; i++) {
        lines.push(columns.map(function (column) { return field(column[i]); }).join(","));
      }
      out.values = lines.join("\n") + "\n";
      delete out.lessonColumns;
    }
    return out;
  }

  // The explorer's spec: in the page, or in the script its data-src names.
  function specOf(box) {
    var el = box.querySelector(".lesson-explorer-spec");
    var src = el && el.getAttribute("data-src");
    if (!src) { return Promise.resolve(JSON.parse(el.textContent)); }
    return script(new URL(src, document.baseURI).href).then(function () {
      var specs = window.lessonExplorerSpecs || {};
      if (!specs[src]) { throw new Error("its data is unreadable"); }
      return byRows(specs[src]);
    });
  }

  function vega() {
    var base = new URL("../vega/", HERE || document.baseURI).href;
    return Promise.all(VEGA.map(function (name) { return script(base + name); }));
  }

  // A view whose height follows the state: the signal <view>_height takes the
  // value of the spec's parameter <view>_fit where it has one (lesson_lib writes it).
  function fitHeights(vg) {
    var names = (vg.signals || []).map(function (s) { return s.name; });
    (vg.signals || []).forEach(function (s) {
      var fit = s.name.replace(/_height$/, "_fit");
      if (fit !== s.name && names.indexOf(fit) >= 0) { s.update = fit; }
    });
    return vg;
  }

  function draw(box, spec) {
    var chart = box.querySelector(".lesson-explorer-chart");
    var status = box.querySelector(".lesson-explorer-status");
    if (typeof window.vegaEmbed !== "function") {
      fail(box, "the Vega scripts did not load");
      return null;
    }
    var hints = narrowHints(spec);
    // The controls go under the message, which a narrow chart leaves out.
    var controls = document.createElement("div");
    controls.className = "lesson-explorer-controls vega-bindings";
    status.after(controls);
    var options = { actions: false, renderer: "svg", bind: controls, patch: fitHeights };
    var current = null; // the drawn view
    var drawnFor = -1; // the column width it was drawn for
    var pending = false;

    // Draw the spec; while the drawing is wider than the column, draw it again
    // for the column, its views narrower by what it overflowed and 4 px to
    // spare (more where the last try gained less than it took off, as where a
    // label sits at a share of a view's width), up to TRIES times; a drawing
    // still too wide then is scaled down whole.
    function embed(base, attempt, cap, tries, last) {
      controls.textContent = "";
      return window.vegaEmbed(chart, attempt, options).then(function (result) {
        var room = roomOf(box);
        var width = drawnWidth(chart);
        if (width <= room + 0.5 || box.classList.contains(SCALED)) { return result; }
        result.view.finalize();
        box.classList.add(NARROW);
        if (tries >= TRIES) {
          box.classList.add(SCALED);
          return embed(base, attempt, cap, tries);
        }
        var gain = last ? (last.width - width) / (last.cap - cap) : 1;
        var next = tries === 0 ? room - 40 :
          cap - Math.ceil((width - room) / Math.min(1, Math.max(0.25, gain || 1))) - 4;
        return embed(base, narrowSpec(base, room, next), next, tries + 1,
                     { cap: cap, width: width });
      });
    }

    function update() {
      pending = false;
      if (!current) { return; }
      status.textContent = messageText(current);
      showViewsAsText(box, current, hints);
      box.setAttribute("data-state-serial", String(Number(box.getAttribute("data-state-serial") || 0) + 1));
    }

    // The bound parameters' values of the drawn view (the controls' state).
    function values() {
      var out = {};
      if (!current) { return out; }
      (spec.params || []).forEach(function (p) {
        if (p.bind) { out[p.name] = current.signal(p.name); }
      });
      return out;
    }

    function render(state) {
      var base = withValues(spec, state);
      box.classList.remove(NARROW, SCALED);
      var old = box.querySelector("." + NOTES);
      if (old) { old.remove(); }
      return embed(base, base, Infinity, 0).then(function (result) {
        var view = result.view;
        current = view;
        // The room as the drawing left it (a page scroll bar may have come or gone).
        drawnFor = roomOf(box);
        function changed() {
          if (pending || current !== view) { return; }
          pending = true;
          view.runAsync().then(update);
        }
        (spec.params || []).forEach(function (p) {
          if (p.bind) { view.addSignalListener(p.name, changed); }
        });
        update();
        box.setAttribute("data-drawn-width", String(drawnFor));
        box.classList.add("lesson-explorer-ready");
      }).catch(function (e) { fail(box, String(e && e.message || e)); });
    }

    render({});
    return {
      // Draw again when the column's width changed, in the same state.
      refit: function () {
        if (!current || Math.abs(roomOf(box) - drawnFor) < 1) { return; }
        var state = values();
        current.finalize();
        current = null;
        render(state);
      },
    };
  }

  function start() {
    var drawn = [];
    function show(box) {
      Promise.all([Promise.resolve(box).then(specOf), vega()]).then(function (loaded) {
        var explorer = draw(box, loaded[0]);
        if (explorer) { drawn.push(explorer); }
      }).catch(function (e) { fail(box, String(e && e.message || e)); });
    }
    var boxes = document.querySelectorAll("div.lesson-explorer");
    if (!("IntersectionObserver" in window)) {
      boxes.forEach(show);
    } else {
      var watch = new IntersectionObserver(function (entries) {
        entries.forEach(function (entry) {
          if (!entry.isIntersecting) { return; }
          watch.unobserve(entry.target);
          show(entry.target);
        });
      }, { rootMargin: NEAR });
      boxes.forEach(function (box) { watch.observe(box); });
    }
    var timer = null;
    function resized() {
      clearTimeout(timer);
      timer = setTimeout(function () {
        drawn.forEach(function (explorer) { explorer.refit(); });
      }, RESIZE_DELAY_MS);
    }
    window.addEventListener("resize", resized);
    window.addEventListener("orientationchange", resized);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
