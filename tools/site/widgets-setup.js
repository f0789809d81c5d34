// Loaded before require.js and the widget renderer (embed-amd.js) on pages
// with saved widget state; tools/fetch_assets.py copies it next to them.
(function () {
  "use strict";
  // 1. embed-amd.js finds its icon fonts from the URI RequireJS gives its AMD
  //    module (by default relative to the page, wrong below the site root)
  //    and from __jupyter_widgets_assets_path__: point both at this folder.
  var base = document.currentScript.src.replace(/[^/]*$/, "");
  window.__jupyter_widgets_assets_path__ = base;
  window.require = {
    paths: { "@jupyter-widgets/html-manager/dist": base.replace(/\/$/, "") },
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
})();
