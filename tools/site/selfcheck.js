// The Problem set's self-check on the static site (no kernel, no network).
// Each <div class="lesson-selfcheck" data-qid="q3"> becomes a labelled box:
// the reader types an answer, with or without a unit, presses Check (or
// Enter) and gets the verdict and message lesson_lib's check("q3", text)
// gives for the book's version. Everything it compares with, and every
// sentence it says, comes from the JSON lesson_lib wrote into the page
// (lesson_lib/coursework/static_check.py); this script only reads the text
// the way check.py does and fills the checker's own message templates.
(function () {
  "use strict";

  var DATA_ID = "lesson-selfcheck-data";

  // ---------------------------------------------------------------- reading

  function Unreadable(message) {
    this.message = message;
  }

  // The checker's reading of text, built from the page's data.
  function Checker(data) {
    var flags = "u";
    var whitespace = new Set(Array.from(data.whitespace));
    var zeros = data.digit_zeros;
    var aliases = new Map(Object.entries(data.aliases));
    var folds = new Map(Object.entries(data.folds));
    var units = new Map(Object.entries(data.units));
    var full = function (source) { return new RegExp("^(?:" + source + ")$", flags); };
    var ANSWER = full(data.patterns.answer);
    var THOUSANDS = full(data.patterns.thousands);
    var LETTER = full(data.patterns.letter);
    var NONPRINTABLE = /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]$/u;
    var S = data.status;

    // Python's str.strip(): Unicode white space at both ends.
    function strip(text) {
      var start = 0;
      var end = text.length;
      while (start < end && whitespace.has(text[start])) { start += 1; }
      while (end > start && whitespace.has(text[end - 1])) { end -= 1; }
      return text.slice(start, end);
    }

    // Python's str.casefold(), for every character a unit spelling can hold.
    function casefold(text) {
      var out = "";
      for (var ch of text) { out += folds.has(ch) ? folds.get(ch) : ch; }
      return out;
    }

    function hex(code, width) {
      var digits = code.toString(16);
      while (digits.length < width) { digits = "0" + digits; }
      return digits;
    }

    // Python's repr() of a str.
    function repr(text) {
      var quote = text.indexOf("'") >= 0 && text.indexOf('"') < 0 ? '"' : "'";
      var out = quote;
      for (var ch of text) {
        var code = ch.codePointAt(0);
        if (ch === quote || ch === "\\") { out += "\\" + ch; }
        else if (ch === "\t") { out += "\\t"; }
        else if (ch === "\n") { out += "\\n"; }
        else if (ch === "\r") { out += "\\r"; }
        else if (code < 0x20 || code === 0x7f) { out += "\\x" + hex(code, 2); }
        else if (code < 0x7f || !NONPRINTABLE.test(ch)) { out += ch; }
        else if (code <= 0xff) { out += "\\x" + hex(code, 2); }
        else if (code <= 0xffff) { out += "\\u" + hex(code, 4); }
        else { out += "\\U" + hex(code, 8); }
      }
      return out + quote;
    }

    // The exact decimal value of a positive finite double: digits x 10^exponent.
    function exactDecimal(x) {
      var view = new DataView(new ArrayBuffer(8));
      view.setFloat64(0, x);
      var high = view.getUint32(0);
      var low = view.getUint32(4);
      var biased = (high >>> 20) & 0x7ff;
      var mantissa = (BigInt(high & 0xfffff) << 32n) | BigInt(low);
      if (biased === 0) { biased = 1; } else { mantissa |= 1n << 52n; }
      var power = biased - 1075; // x = mantissa * 2^power
      if (power >= 0) { return { digits: (mantissa << BigInt(power)).toString(), exponent: 0 }; }
      return { digits: (mantissa * 5n ** BigInt(-power)).toString(), exponent: power };
    }

    // Python's format(x, ".{precision}g"): round half to even on the exact value.
    function formatG(x, precision) {
      if (Number.isNaN(x)) { return "nan"; }
      if (x < 0 || Object.is(x, -0)) { return "-" + formatG(-x, precision); }
      if (x === Infinity) { return "inf"; }
      if (x === 0) { return "0"; }
      var exact = exactDecimal(x);
      var digits = exact.digits;
      var point = digits.length - 1 + exact.exponent; // x = d.ddd x 10^point
      var kept;
      if (digits.length > precision) {
        var head = digits.slice(0, precision);
        var rest = digits.slice(precision);
        var up = rest[0] > "5" ||
          (rest[0] === "5" && (/[1-9]/.test(rest.slice(1)) || Number(head[head.length - 1]) % 2 === 1));
        kept = (BigInt(head) + (up ? 1n : 0n)).toString();
        if (kept.length > precision) { kept = kept.slice(0, precision); point += 1; }
      } else {
        kept = digits;
        while (kept.length < precision) { kept += "0"; }
      }
      var trim = function (s) { return s.replace(/0+$/, ""); };
      if (point >= -4 && point < precision) {
        var whole, fraction;
        if (point >= 0) {
          whole = kept.slice(0, point + 1);
          fraction = trim(kept.slice(point + 1));
        } else {
          whole = "0";
          fraction = trim("0".repeat(-point - 1) + kept);
        }
        return fraction ? whole + "." + fraction : whole;
      }
      var mantissa = trim(kept.slice(1));
      var size = String(Math.abs(point));
      return kept[0] + (mantissa ? "." + mantissa : "") + "e" + (point < 0 ? "-" : "+") +
        (size.length < 2 ? "0" + size : size);
    }

    // Python's template.format(**values) for the fields the checker's templates use.
    function fill(name, values) {
      return data.messages[name].replace(/\{(\w+)(?:!(r))?(?::([^}]*))?\}/g,
        function (field, key, conversion, spec) {
          var value = values[key];
          if (conversion === "r") { return repr(String(value)); }
          if (spec === ".6g") { return formatG(value, 6); }
          if (spec) { throw new Error("unsupported format " + field); }
          return String(value);
        });
    }

    function unitOf(name) { return units.has(name) ? units.get(name) : null; }

    // Unicode digits as ASCII, for Number().
    function asciiDigits(text) {
      var out = "";
      for (var ch of text) {
        var code = ch.codePointAt(0);
        var digit = null;
        if (code >= 0x80) {
          for (var i = 0; i < zeros.length; i++) {
            if (code >= zeros[i] && code < zeros[i] + 10) { digit = String(code - zeros[i]); break; }
          }
        }
        out += digit === null ? ch : digit;
      }
      return out;
    }

    function readNumber(problem, text) {
      var expected = problem.expected;
      var match = ANSWER.exec(text);
      if (!match) { throw new Unreadable(fill("no_number", { text: text, expected: expected })); }
      var digits = match[1];
      var unitText = match[2];
      if (digits.indexOf(",") >= 0) {
        if (!THOUSANDS.test(digits)) {
          throw new Unreadable(fill("decimal_comma", { text: text, expected: expected }));
        }
        digits = digits.split(",").join("");
      }
      var value = Number(asciiDigits(digits.split("_").join("")));
      if (!Number.isFinite(value)) {
        throw new Unreadable(fill("text_not_finite", { text: text, expected: expected }));
      }
      if (!unitText) { return { value: value, note: "" }; }
      var written = strip(unitText);
      var folded = casefold(written);
      var unit = aliases.has(folded) ? aliases.get(folded) : null;
      if (problem.counting.indexOf(folded) >= 0) { return { value: value, note: "" }; }
      var asked = unitOf(problem.unit);
      if (unit === null) {
        throw new Unreadable(fill("unknown_unit",
          { text: text, unit: written, known: data.known_units, expected: expected }));
      }
      var given = unitOf(unit);
      if (asked === null || given === null || given[0] !== asked[0]) {
        throw new Unreadable(fill("wrong_dimension", { text: text, unit: unit, expected: expected }));
      }
      var converted = value * given[1] / asked[1];
      var note = unit === problem.unit ? "" :
        fill("converted", { text: strip(text), value: converted, unit: problem.unit });
      return { value: converted, note: note };
    }

    function rel(a, b) { return b ? Math.abs(a - b) / Math.abs(b) : Math.abs(a - b); }

    function isRight(problem, value, ref) {
      if (problem.abs_tol !== null) {
        return Math.abs(value - ref) <= problem.abs_tol || rel(value, ref) <= data.decimals_rtol;
      }
      return rel(value, ref) <= problem.rtol;
    }

    function gradeNumber(problem, value) {
      var ref = problem.reference;
      var unit = problem.unit;
      var i;
      if (problem.kind === "count") {
        if (value === ref) { return [S.right, fill("count_right", { ref: Math.trunc(ref), unit: unit })]; }
        for (i = 0; i < problem.mistakes.length; i++) {
          if (value === problem.mistakes[i][0]) { return [S.wrong, problem.mistakes[i][1]]; }
        }
        if (!Number.isInteger(value) && Math.floor(value) === ref) { return [S.close, fill("round_down", {})]; }
        if (Math.abs(value - ref) === 1) { return [S.close, fill("off_by_one", {})]; }
        return [S.wrong, fill("hint", { hint: problem.hint })];
      }
      if (isRight(problem, value, ref)) {
        return [S.right, fill("right", { value: value, unit: unit, ref: ref })];
      }
      for (i = 0; i < problem.mixups.length; i++) {
        if (rel(value, problem.mixups[i][0]) <= data.match_rtol) { return [S.wrong, problem.mixups[i][1]]; }
      }
      var within = Math.max(problem.rtol, data.match_rtol);
      for (i = 0; i < problem.mistakes.length; i++) {
        if (rel(value, problem.mistakes[i][0]) <= within) { return [S.wrong, problem.mistakes[i][1]]; }
      }
      if (rel(value, ref) <= problem.close_rtol) { return [S.close, fill("close", {})]; }
      return [S.wrong, fill("hint", { hint: problem.hint })];
    }

    function readLetter(problem, text) {
      var match = LETTER.exec(text);
      if (!match || problem.letters.indexOf(match[1].toLowerCase()) < 0) {
        throw new Unreadable(fill("not_a_choice", { text: text, expected: problem.expected }));
      }
      return match[1].toLowerCase();
    }

    // check(qid, text) for the book's version: {status, message}.
    this.check = function (qid, text) {
      var problem = data.problems[qid];
      if (!strip(text)) { return { status: S.unanswered, message: problem.unanswered }; }
      try {
        if (problem.kind === "choice") {
          var verdict = problem.verdicts[readLetter(problem, text)];
          return { status: verdict[0], message: verdict[1] };
        }
        var read = readNumber(problem, text);
        var graded = gradeNumber(problem, read.value);
        return { status: graded[0], message: read.note ? graded[1] + read.note : graded[1] };
      } catch (err) {
        if (err instanceof Unreadable) {
          return { status: S.unreadable, message: err.message.charAt(0).toUpperCase() + err.message.slice(1) };
        }
        throw err;
      }
    };
    this.look = function (status) { return data.look[status] || ["#000000", ""]; };
    this.status = S;
    this.has = function (qid) { return Object.prototype.hasOwnProperty.call(data.problems, qid); };
    this.expected = function (qid) { return data.problems[qid].expected; };
  }

  // ------------------------------------------------------------------- page

  function element(tag, className, text) {
    var el = document.createElement(tag);
    if (className) { el.className = className; }
    if (text) { el.textContent = text; }
    return el;
  }

  function showVerdict(box, checker, qid, result) {
    var look = checker.look(result.status);
    var verdict = box.querySelector(".lesson-selfcheck-verdict");
    var status = element("strong", "lesson-selfcheck-status",
      look[1] + " " + qid + ": " + result.status + ".");
    status.style.color = look[0];
    var message = element("span", "lesson-selfcheck-message", result.message);
    verdict.textContent = "";
    verdict.appendChild(status);
    verdict.appendChild(document.createTextNode(" "));
    verdict.appendChild(message);
    verdict.style.borderLeftColor = look[0];
    verdict.setAttribute("data-status", result.status);
    box.setAttribute("data-checks", String(Number(box.getAttribute("data-checks") || 0) + 1));
  }

  function build(box, checker) {
    var qid = box.getAttribute("data-qid");
    if (!checker.has(qid)) {
      box.appendChild(element("p", "lesson-selfcheck-error",
        "This self-check does not know the problem " + JSON.stringify(qid) + "."));
      return;
    }
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
    var format = element("span", "lesson-selfcheck-format",
      "Answer with " + checker.expected(qid) + ".");
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
      var result;
      try {
        result = checker.check(qid, input.value);
      } catch (err) { // the page must never break on an answer
        result = {
          status: checker.status.unreadable,
          message: "The checker could not handle this answer (" + String(err && err.message || err) +
            "). Please tell your instructor.",
        };
      }
      showVerdict(box, checker, qid, result);
    });
    box.classList.add("lesson-selfcheck-ready");
  }

  function start() {
    var boxes = document.querySelectorAll("div.lesson-selfcheck[data-qid]");
    if (!boxes.length) { return; }
    var checker = null;
    try {
      var script = document.getElementById(DATA_ID);
      checker = new Checker(JSON.parse(script.textContent));
    } catch (err) {
      checker = null;
    }
    boxes.forEach(function (box) {
      if (checker) {
        build(box, checker);
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
