"""Student IDs: plain ASCII names that pick a variant, name a folder and head a row of grades.

An ID is 1 to 64 letters, digits, ``.``, ``_`` or ``-``, starting with a letter or digit, compared
without case after Unicode's NFKC (full-width U+FF53 U+FF10 U+FF10 U+FF11 is ``s001``). Other
non-ASCII (a Cyrillic a, a zero-width space, a right-to-left override) is refused, naming the
character, as are Windows device names (``con``, ``nul`` ...) and a trailing ``.``: it would pass
for another's ID, or not unpack. :func:`skeleton` names the plain ID a refused one imitates."""

from __future__ import annotations

import re
import unicodedata

_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: Longest text looked at as a student ID (an ID has at most 64 characters, plus spaces).
MAX_RAW_CHARS = 256
#: File and folder names Windows keeps for devices, in any case and with any extension.
WINDOWS_RESERVED = frozenset(
    {"con", "prn", "aux", "nul"} | {f"{port}{i}" for port in ("com", "lpt") for i in range(1, 10)}
)
_RULE = "student must be 1 to 64 letters, digits, '.', '_' or '-' (starting with a letter or digit)"

#: Letters of other scripts that look like Latin ones (after NFKC), and the letter they
#: look like; a short list of the usual suspects in Cyrillic and Greek.
CONFUSABLES = dict(
    zip(
        "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455\u0501\u051b\u051d\u0475\u04cf"  # Cyrillic small
        "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0423\u0405\u0406\u0408\u051a\u051c"  # capital
        "\u03b1\u03bf\u03c1\u03bd\u03c4\u03b9\u03ba\u03c5\u03c7"  # Greek small
        "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7",  # capital
        "aeopcyxijsdqwvlABEKMHOPCTXYSIJQWaopvtikuxABEZHIKMNOPTYX",
        strict=True,
    )
)


def _bidi_control(ch: str) -> bool:
    return ch in "\u061c\u200e\u200f" or "\u202a" <= ch <= "\u202e" or "\u2066" <= ch <= "\u2069"


def _invisible(ch: str) -> bool:
    """Format characters (zero-width spaces and joiners, the BOM), variation selectors, fillers."""
    return (
        unicodedata.category(ch) == "Cf"
        or "\ufe00" <= ch <= "\ufe0f"
        or "\U000e0100" <= ch <= "\U000e01ef"
        or ch in "\u115f\u1160\u3164\uffa0\u034f"
    )


def _describe(ch: str) -> str:
    return f"U+{ord(ch):04X} {unicodedata.name(ch, 'an unnamed character')}"


def id_problem(text: str) -> str:
    """Why ``text`` (stripped, after NFKC) is not a student ID, naming the character, or "".

    Parameters
    ----------
    text : str

    Returns
    -------
    str
    """
    for ch in text:
        if _bidi_control(ch):
            return f"{_RULE}; it holds a bidirectional control character, {_describe(ch)}"
        if _invisible(ch):
            return f"{_RULE}; it holds an invisible character, {_describe(ch)}"
    for ch in text:
        if not ch.isascii():
            return f"{_RULE}: plain ASCII; it holds {_describe(ch)}"
    if not _ID_PATTERN.fullmatch(text):
        return f"{_RULE}, got {text[:80]!r}"
    if text.split(".")[0].casefold() in WINDOWS_RESERVED:
        return f"{_RULE}, not a name Windows keeps for a device (con, nul, com1 ...), got {text!r}"
    if text.endswith("."):
        return f"{_RULE}, not ending in '.' (Windows drops it from a folder's name), got {text!r}"
    return ""


def normalize_student(student: object) -> str | None:
    """Return the canonical (lower-cased) form of a student ID, or None for "no ID".

    Parameters
    ----------
    student : object
        None or "" ("no ID: use the book's numbers"), else a string (or an integer) that is an ID as
        the module says; outer spaces and case are ignored (``" S123 "`` is ``"s123"``).

    Returns
    -------
    str or None

    Raises
    ------
    TypeError
        If ``student`` is neither None, a string nor an integer.
    ValueError
        If it has another character (invisible, bidirectional, non-ASCII) or is Windows-reserved.
    """
    if student is None:
        return None
    kind = type(student)  # never isinstance(), which reads the object's own __class__
    if issubclass(kind, bool) or not issubclass(kind, str | int):
        name = vars(type)["__name__"].__get__(kind, type)
        raise TypeError(
            f"student must be a string ID such as 's1234' or None, got an object of type "
            f"{name[:40]!r}"
        )
    if issubclass(kind, int):
        number = int.__int__(student)
        if not -(10**64) < number < 10**64:
            raise ValueError(f"{_RULE}, got an integer of more than 64 digits")
        text = str(number)
    elif str.__len__(student) > MAX_RAW_CHARS:
        raise ValueError(f"{_RULE}, got a text of {str.__len__(student):,} characters")
    else:
        text = unicodedata.normalize("NFKC", str.__getitem__(student, slice(None))).strip()
    if not text:
        return None
    problem = id_problem(text)
    if problem:
        raise ValueError(problem)
    return text.casefold()


def skeleton(text: str) -> str:
    """The plain ID a name looks like: NFKC, accents, invisible characters and lookalikes of other
    scripts (:data:`CONFUSABLES`) removed, case folded (``"a001"`` for ``a001`` with a Cyrillic a).

    Parameters
    ----------
    text : str

    Returns
    -------
    str
    """
    text = unicodedata.normalize("NFKC", text[:MAX_RAW_CHARS]).strip()
    plain = []
    for ch in unicodedata.normalize("NFKD", text):
        if _bidi_control(ch) or _invisible(ch) or unicodedata.category(ch) == "Mn":
            continue
        plain.append(CONFUSABLES.get(ch, ch))
    return "".join(plain).casefold()
