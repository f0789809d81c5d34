"""The self-check's statuses, their look and its messages, alike in the notebook and on the page."""

from __future__ import annotations

RIGHT = "right"
CLOSE = "close"
WRONG = "wrong"
UNANSWERED = "not answered yet"
UNREADABLE = "unreadable"

# Darkened Okabe-Ito hues: text on white needs a 4.5:1 contrast (WCAG AA), which the plain palette's
# green, orange and grey miss. A symbol goes with each colour so colour is not the only cue. Text in
# these colours gets its own white background, so a dark theme keeps the contrast.
LOOK = {
    RIGHT: ("#007A5A", "\u2714"),
    CLOSE: ("#8A5A00", "\u2248"),
    WRONG: ("#A14A00", "\u2718"),
    UNANSWERED: ("#666666", "\u2026"),
    UNREADABLE: ("#005A8C", "?"),
}

#: What :func:`~lesson_lib.coursework.check.check` and the static page say, as ``str.format`` templates.
MESSAGES: dict[str, str] = {
    "no_number": "could not read a number in {text}; expected {expected}.",
    "decimal_comma": (
        "{text}: write decimals with a point (1.5), not a comma; expected {expected}."
    ),
    "text_not_finite": "{text} is not a finite number; expected {expected}.",
    "unknown_unit": "{text}: unknown unit {unit} (known: {known}); expected {expected}.",
    "wrong_dimension": (
        "{text} is given in {unit}, which does not measure what this problem asks "
        "for; expected {expected}."
    ),
    "converted": " (read {text} as {value:.6g} {unit})",
    "choice_expected": "one letter from {letters} as a string, e.g. 'b'",
    "not_a_choice": "could not read {text} as a choice; expected {expected}.",
    "too_long": (
        "the answer is too long to read ({count:,} characters; at most {limit} are read); "
        "expected {expected}."
    ),
    "page_too_long": (
        "This box reads at most {limit} characters. Type a number with its unit, or a "
        "letter, then press Check."
    ),
    "round_down": "Round down: only whole sequences fit.",
    "off_by_one": "Off by one: round down at the end, and only at the end.",
    "right": "The reference answer is {ref} {unit}.",
    "close": (
        "Nearly there, but outside the tolerance: keep full precision in intermediate "
        "steps and round only the final answer."
    ),
    "hint": "Hint: {hint}",
    "twin_unit": (
        "Your number is the answer in {other}, but the question asks for {unit}: GB, MB, "
        "KB are powers of 10 (1 GB = 10^9 bytes), GiB, MiB, KiB powers of 2 "
        "(1 GiB = 2^30 bytes)."
    ),
    "time_unit": (
        "Your number is the answer in {other}, but the question asks for {unit} "
        "(1 s = 1000 ms = 1,000,000 us)."
    ),
    "other_unit": "Your number is the answer in {other}; the question asks for {unit}.",
    "unit_written": (
        "Your number is the answer in {other}, but you wrote {written} after it: the "
        "arithmetic is right, the unit is not."
    ),
    "coincide": " Another mistake gives the same number here: {hint}",
    "unanswered": "Write your answer in answer_{qid} as {expected}, then run this cell again.",
    "page_unanswered": "Type your answer, then press Check. Expected: {expected}.",
    "page_choice_expected": "one letter: {letters}",
    "page_number_expected": "a number in {unit}, {precision}{with_unit}",
    "page_with_unit": ", or a number with a unit such as {example} (converted)",
    "page_reads_number": "a plain number, optionally followed by {units}",
    "page_unreadable": (
        'This box reads only {reads}. For any other answer, use check("{qid}", answer) '
        "in a notebook."
    ),
}
