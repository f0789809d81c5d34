// Loaded before require.js and the widget renderer (embed-amd.js) on pages
// with saved widget state; tools/fetch_assets.py copies it next to them.
(function () {
  "use strict";
  // 1. Each AMD module inside embed-amd.js finds its icon fonts in the folder
  //    of the URI RequireJS gives that module (by default relative to the
  //    page, wrong below the site root), and html-manager also reads
  //    __jupyter_widgets_assets_path__: point them all at this folder. The
  //    modules are already defined, so nothing is fetched from these paths.
  var base = document.currentScript.src.replace(/[^/]*$/, "");
  window.__jupyter_widgets_assets_path__ = base;
  window.require = {
    paths: {
      "@jupyter-widgets/base": base + "base",
      "@jupyter-widgets/controls": base + "controls",
      "@jupyter-widgets/output": base + "output",
      "@jupyter-widgets/html-manager": base + "html-manager",
      "@jupyter-widgets/html-manager/dist": base.replace(/\/$/, ""),
    },
  };

  // 2. The renderer typesets labels with the MathJax 2 call
  //    MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]); the site loads
  //    MathJax 3, which has no Hub. Give it one that calls typesetPromise.
  var pending = [];
  function typeset(elements) {
    var mj = window.MathJax;
    mj.startup.promise.then(function () {
      return mj.typesetPromise(elements);
    });
  }
  function queue(job) {
    var element = job && job[2];
    var mj = window.MathJax;
    if (mj && mj.version && mj.typesetPromise) {
      typeset(element ? [element] : undefined);
    } else if (element) {
      pending.push(element);
    }
  }
  function install() {
    var mj = window.MathJax;
    if (mj && mj.version && !mj.Hub) {
      mj.Hub = { Queue: queue };
    }
    if (mj && mj.version && mj.typesetPromise && pending.length) {
      typeset(pending.splice(0));
    }
  }
  // Before MathJax 3 loads (it is deferred), window.MathJax is its config
  // object; MathJax moves that to MathJax.config, so this stub is dropped.
  if (window.MathJax && !window.MathJax.version && !window.MathJax.Hub) {
    window.MathJax.Hub = { Queue: queue };
  }
  document.addEventListener("DOMContentLoaded", install);
  window.addEventListener("load", install);

  // 3. Accessible names the renderer leaves out. A slider's handle
  //    (role="slider") gets its label's text. A picture gets the "alt" that
  //    lesson_lib's AltImage keeps in the saved widget state: each rendered
  //    widget sits just before its view script, and a box's children are
  //    rendered in the order of the model's "children".
  var states = null;
  function widgetStates() {
    if (states === null) {
      states = {};
      var sel = 'script[type="application/vnd.jupyter.widget-state+json"]';
      document.querySelectorAll(sel).forEach(function (s) {
        try {
          var st = JSON.parse(s.textContent).state || {};
          Object.keys(st).forEach(function (k) {
            states[k] = st[k];
          });
        } catch (e) {
          // not our business: the renderer reports bad state itself
        }
      });
    }
    return states;
  }
  function walk(id, el) {
    var model = widgetStates()[id];
    if (!model || !el) {
      return;
    }
    var st = model.state || {};
    if (st.alt && el.tagName === "IMG" && !el.hasAttribute("alt")) {
      el.setAttribute("alt", st.alt);
    }
    if (Array.isArray(st.children)) {
      st.children.forEach(function (ref, i) {
        walk(String(ref).replace(/^IPY_MODEL_/, ""), el.children[i]);
      });
    }
  }
  function label(root) {
    root.querySelectorAll(".widget-slider .noUi-handle:not([aria-label])").forEach(function (h) {
      var box = h.closest(".widget-slider");
      var text = box && box.querySelector(".widget-label");
      if (text && text.textContent.trim()) {
        h.setAttribute("aria-label", text.textContent.trim());
      }
    });
    var views = 'script[type="application/vnd.jupyter.widget-view+json"]';
    root.querySelectorAll(views).forEach(function (s) {
      var area = s.previousElementSibling;
      if (area && area.classList.contains("widget-subarea")) {
        try {
          walk(JSON.parse(s.textContent).model_id, area.firstElementChild);
        } catch (e) {
          // a view without a readable model id has nothing to label
        }
      }
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    label(document);
    new MutationObserver(function () {
      label(document);
    }).observe(document.body, { childList: true, subtree: true });
  });
})();
