// The Problem set's self-check on the static site (no kernel, no network).
// Each <div class="lesson-selfcheck" data-qid="q3"> becomes a labelled box:
// the reader types an answer and presses Check (or Enter). The page's JSON is
// lesson_lib's page_contract() (lesson_lib/coursework/check.py): for the
// book's version of each problem, the units an answer may carry with their
// sizes, the rules check() gives its verdicts by, and every message, written
// out by Python. This script reads only a plain number with one of those
// units, or a letter; anything else gets the contract's message saying to use
// check() in a notebook, never a verdict. An answer longer than the
// contract's max_chars gets its too_long verdict before anything reads it,
// and what is read is trimmed first and matched by patterns that read it in
// one pass (no two runs of spaces that could trade characters).
(function () {
  "use strict";

  var DATA_ID = "lesson-selfcheck-data";
  // A plain number (ASCII digits, commas only between groups of three, an
  // optional exponent) at the start of the trimmed answer; the rest is the unit.
  var NUMBER = /^[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/;
  var LETTER = /^\(?[ \t]*([A-Za-z])[ \t]*[).:]?$/;

  function own(table, key) { return Object.prototype.hasOwnProperty.call(table, key); }

  function isSpace(c) { return c === " " || c === "\t"; }

  // The text without the spaces and tabs around it, in one pass from each end.
  function trim(text) {
    var start = 0;
    var end = text.length;
    while (start < end && isSpace(text.charAt(start))) { start++; }
    while (end > start && isSpace(text.charAt(end - 1))) { end--; }
    return text.slice(start, end);
  }

  // The first rule the value (in SI units) meets, else the problem's fallback:
  // within its tolerance and, for a wrong one, nearer its value than the reference.
  function firstMatch(problem, value) {
    for (var i = 0; i < problem.rules.length; i++) {
      var rule = problem.rules[i];
      var off = Math.abs(value - rule.value);
      if (off <= rule.tolerance &&
          (rule.status !== "wrong" || off < Math.abs(value - problem.reference))) { return rule; }
    }
    return problem.otherwise;
  }

  function numberVerdict(problem, text) {
    var match = NUMBER.exec(text);
    if (!match) { return problem.unreadable; }
    var value = Number(match[0].split(",").join(""));
    // Only A-Z is folded: other letters may fold differently in Python.
    var spelling = trim(text.slice(match[0].length))
      .replace(/[A-Z]/g, function (c) { return c.toLowerCase(); });
    var unit = problem.unit;
    if (spelling) { unit = own(problem.spellings, spelling) ? problem.spellings[spelling] : null; }
    if (unit === null || !Number.isFinite(value)) { return problem.unreadable; }
    var verdict = firstMatch(problem, value * problem.units[unit]);
    if (unit !== problem.unit && verdict.name.indexOf("in ") === 0) {
      return writtenUnitVerdict(problem, value, unit);
    }
    return verdict;
  }

  // A number that is the answer in one unit, written with another ("7.23 us"
  // for 7.23 ms): the contract's unit_written verdict, as check() gives it.
  function writtenUnitVerdict(problem, number, written) {
    var entry = problem.unit_written;
    var units = Object.keys(problem.units);
    for (var i = 0; i < units.length; i++) {
      var other = units[i];
      var off = Math.abs(number * problem.units[other] - problem.reference);
      if (other !== written && off <= entry.rtol * Math.abs(problem.reference)) {
        return {
          status: "wrong",
          name: entry.name.replace("{written}", written),
          message: entry.message.replace("{other}", other).replace("{written}", written),
          mistake: entry.mistake
        };
      }
    }
    return problem.otherwise;
  }

  function choiceVerdict(problem, text) {
    var match = LETTER.exec(text);
    var letter = match ? match[1].toLowerCase() : null;
    return letter !== null && own(problem.choices, letter) ? problem.choices[letter] : problem.unreadable;
  }

  // Longer than max characters, counted as Python counts them (code points)?
  // A string of more than 2 x max UTF-16 units is, without looking at it.
  function tooLong(text, max) {
    if (text.length <= max) { return false; }
    if (text.length > 2 * max) { return true; }
    var count = 0;
    for (var i = 0; i < text.length; i++) {
      var unit = text.charCodeAt(i);
      if (unit >= 0xD800 && unit <= 0xDBFF && i + 1 < text.length) {
        var next = text.charCodeAt(i + 1);
        if (next >= 0xDC00 && next <= 0xDFFF) { i++; }
      }
      count++;
    }
    return count > max;
  }

  // The contract's verdict on one answer: {status, name, message}.
  function verdictFor(problem, text, maxChars) {
    if (tooLong(text, maxChars)) { return problem.too_long; }
    var trimmed = trim(text);
    if (!trimmed) { return problem.unanswered; }
    try {
      return problem.kind === "choice"
        ? choiceVerdict(problem, trimmed) : numberVerdict(problem, trimmed);
    } catch (err) { // the page must never break on an answer, nor guess a verdict
      return problem.unreadable;
    }
  }

  // ------------------------------------------------------------------- page

  function element(tag, className, text) {
    var el = document.createElement(tag);
    if (className) { el.className = className; }
    if (text) { el.textContent = text; }
    return el;
  }

  function showVerdict(box, look, qid, verdict) {
    var colourAndSymbol = own(look, verdict.status) ? look[verdict.status] : ["#000000", ""];
    var shown = box.querySelector(".lesson-selfcheck-verdict");
    var status = element("strong", "lesson-selfcheck-status",
      colourAndSymbol[1] + " " + qid + ": " + verdict.status + ".");
    status.style.color = colourAndSymbol[0];
    shown.textContent = "";
    shown.appendChild(status);
    shown.appendChild(document.createTextNode(" "));
    shown.appendChild(element("span", "lesson-selfcheck-message", verdict.message));
    shown.style.borderLeftColor = colourAndSymbol[0];
    shown.setAttribute("data-status", verdict.status);
    shown.setAttribute("data-rule", verdict.name);
    box.setAttribute("data-checks", String(Number(box.getAttribute("data-checks") || 0) + 1));
  }

  function build(box, contract) {
    var qid = box.getAttribute("data-qid");
    if (!own(contract.problems, qid)) {
      box.appendChild(element("p", "lesson-selfcheck-error",
        "This self-check does not know the problem " + JSON.stringify(qid) + "."));
      return;
    }
    var problem = contract.problems[qid];
    var id = "lesson-selfcheck-" + qid;
    var form = element("form", "lesson-selfcheck-form");
    form.setAttribute("novalidate", "");
    var label = element("label", "lesson-selfcheck-label",
      "Check your answer to " + qid + " here (the book's numbers):");
    label.htmlFor = id;
    var row = element("span", "lesson-selfcheck-row");
    var input = element("input", "lesson-selfcheck-input");
    input.type = "text";
    input.id = id;
    input.name = id;
    input.autocomplete = "off";
    input.spellcheck = false;
    input.setAttribute("autocapitalize", "off");
    input.setAttribute("aria-describedby", id + "-format");
    var button = element("button", "lesson-selfcheck-button", "Check");
    button.type = "submit";
    var format = element("span", "lesson-selfcheck-format", "Answer with " + problem.expected + ".");
    format.id = id + "-format";
    row.appendChild(input);
    row.appendChild(button);
    form.appendChild(label);
    form.appendChild(row);
    form.appendChild(format);
    var verdict = element("div", "lesson-selfcheck-verdict");
    verdict.setAttribute("role", "status");
    verdict.setAttribute("aria-live", "polite");
    verdict.setAttribute("aria-atomic", "true");
    box.appendChild(form);
    box.appendChild(verdict);
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      showVerdict(box, contract.look, qid, verdictFor(problem, input.value, contract.max_chars));
    });
    box.classList.add("lesson-selfcheck-ready");
  }

  function start() {
    var boxes = document.querySelectorAll("div.lesson-selfcheck[data-qid]");
    if (!boxes.length) { return; }
    var contract = null;
    try {
      contract = JSON.parse(document.getElementById(DATA_ID).textContent);
    } catch (err) {
      contract = null;
    }
    boxes.forEach(function (box) {
      if (contract) {
        build(box, contract);
      } else {
        box.appendChild(element("p", "lesson-selfcheck-error",
          "This self-check could not start (its data is missing); use check() in a notebook."));
      }
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
