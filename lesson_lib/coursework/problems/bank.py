"""What a problem is (:class:`Problem`, :class:`Mistake`, :class:`Choice`), and what problems share:
the models, cards and fabrics variants draw from (times are written by
:func:`~lesson_lib.model.units.format_seconds`, sizes by :func:`fmt_bytes`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from lesson_lib.coursework.variants import shuffled
from lesson_lib.model.specimen import A100, GPU, H200, MODEL, NVLINK_BANDWIDTH
from lesson_lib.model.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.model.units import GB, US, format_bytes, format_rate

Params = dict[str, Any]

#: Multiple-choice options are lettered in this order (up to eight options).
LETTERS = "abcdefgh"


@dataclass(frozen=True)
class Mistake:
    """A wrong answer students often give, and what to tell them."""

    #: Short name of lower-case letters, digits and hyphens (``"us-as-ms"``), stable across variants
    #: and releases; :func:`mistake_id` makes the id the grader counts by.
    slug: str
    #: The wrong answer, in the problem's unit.
    value: float
    #: What probably went wrong.
    hint: str

    def __post_init__(self) -> None:
        if not _SLUG.fullmatch(self.slug):
            raise ValueError(
                f"Mistake slug must be lower-case letters, digits and hyphens, got {self.slug!r}"
            )


#: What a mistake's slug may hold.
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def mistake_id(qid: str, slug: str) -> str:
    """The stable id of one named mistake of one problem: ``"q07.us-as-ms"``, in the set's order.

    Parameters
    ----------
    qid : str
        The problem's id (``"q7"``).
    slug : str
        The mistake's slug, or a rule's own name (``"unit-kb"``).

    Returns
    -------
    str
    """
    return f"q{int(qid[1:]):02d}.{slug}"


#: Points of a problem by its difficulty (1 to 3 stars), unless it sets its own.
POINTS_BY_DIFFICULTY: dict[int, float] = {1: 1.0, 2: 2.0, 3: 3.0}


@dataclass(frozen=True)
class Choice:
    """One option of a multiple-choice problem."""

    #: The option as shown.
    text: str
    #: Why it is right or wrong (shown when a student picks it, and in the solution).
    why: str
    #: True for the one right option.
    correct: bool = False


@dataclass(frozen=True)
class Problem:
    """One problem of the set."""

    #: Id used by :func:`~lesson_lib.coursework.check.check`, e.g. ``"q3"``.
    qid: str
    title: str
    #: Slug of the chapter the problem practises.
    chapter: str
    #: 1 (one step) to 3 (several steps or a trap).
    difficulty: int
    #: Unit of the answer (``"GB"``, ``"ms"``, ``"x"`` ...); empty for multiple choice.
    unit: str
    #: Statement in Markdown, filled in with ``facts`` by ``str.format``.
    template: str
    #: Worked solution in Markdown, filled in the same way.
    solution_template: str
    #: Parameters of the book's version (no student ID).
    defaults: Params
    #: ``sample(rng) -> params`` draws one student's parameters.
    sample: Callable[[np.random.Generator], Params]
    #: ``facts(params) -> dict of str``, formatted values for the templates.
    facts: Callable[[Params], dict[str, str]]
    #: ``reference(params)``, the answer in ``unit`` (float, int or letter), by ``lesson_lib``.
    reference: Callable[[Params], Any]
    #: ``"number"`` (within a tolerance), ``"count"`` (exactly) or ``"choice"`` (by letter).
    kind: str = "number"
    #: ``mistakes(params) -> list of Mistake``, problem-specific wrong answers.
    mistakes: Callable[[Params], list[Mistake]] = field(default=lambda p: [])
    #: ``choices(params) -> list of Choice`` in display order (multiple choice).
    choices: Callable[[Params], list[Choice]] | None = None
    #: For byte counts, the decimals in ``unit`` asked for (see :meth:`right_band`).
    decimals: int | None = None
    #: The significant figures asked for (see :meth:`right_band`).
    sig_figs: int | None = None
    #: The relative tolerance of a right answer without ``decimals`` or ``sig_figs``, stated.
    rtol: float = 0.01
    #: Relative distance still called "close".
    close_rtol: float = 0.05
    #: General advice when an answer is wrong and matches no known mistake.
    hint: str = ""
    #: What a right answer earns; None means :data:`POINTS_BY_DIFFICULTY` (see :attr:`max_points`).
    points: float | None = None

    @property
    def max_points(self) -> float:
        """The points a right answer earns (``points``, else the default of its difficulty)."""
        return POINTS_BY_DIFFICULTY[self.difficulty] if self.points is None else float(self.points)

    @property
    def stars(self) -> str:
        """Difficulty as one to three stars."""
        return "\u2605" * self.difficulty

    def answer_format(self) -> str:
        """How the answer should be written, in words (for messages and statements)."""
        if self.kind == "choice":
            return 'one letter, e.g. b (in a notebook, the string "b")'
        if self.kind == "count":
            return f"a whole number of {self.unit}, e.g. 3"
        what = (
            "a plain number (the ratio)" if self.unit == "x" else f"a plain number in {self.unit}"
        )
        return f"{what}, {self.precision()}, e.g. 1.5"

    def precision(self) -> str:
        """The precision of a right answer in the statement's words (``"within 1 %"``)."""
        if self.kind != "number":
            return "by letter" if self.kind == "choice" else "exactly"
        if self.decimals is not None:
            return f"to {self.decimals} decimal place{'' if self.decimals == 1 else 's'}"
        if self.sig_figs is not None:
            return f"to {self.sig_figs} significant figures"
        return f"within {self.rtol * 100:g} %"

    def right_band(self, reference: float) -> tuple[float, float]:
        """The lowest and highest right answers in ``unit``, as :meth:`precision` words them.

        Rounded to decimals or significant figures: half a unit in the last place either side of the
        rounded reference (every number that rounds as it does; at a tie, as either rounding does),
        widened by a hair for floating-point error; figures are counted on the rounded reference
        (9.996 to 3 is 10.0, whose last place is 0.1). Else within ``rtol``; a count exactly.
        """
        if self.kind == "count":
            return reference, reference
        places = self.decimals
        if places is None and self.sig_figs is not None:
            places = self.sig_figs - 1 - _exponent(reference)
            places = self.sig_figs - 1 - _exponent(round(reference, places))
        if places is None:
            return reference - self.rtol * abs(reference), reference + self.rtol * abs(reference)
        rounded, half = round(reference, places), 0.5 * 10.0**-places
        if math.isclose(abs(reference - rounded), half, rel_tol=1e-9):
            rounded, half = reference, 2 * half  # 2.1875 to 3 decimals: 2.187 or 2.188
        half *= 1 + 1e-9
        return rounded - half, rounded + half


def _exponent(value: float) -> int:
    """The power of ten of ``value``'s leading digit (0 for 0)."""
    return math.floor(math.log10(abs(value))) if value else 0


#: Shapes of pure-attention models by size in billions, like public dense models of those sizes
#: (grouped-query attention, head dim 128); the 13B one has as many KV heads as query heads.
PURE_ATTENTION_SHAPES: dict[int, dict[str, int]] = {
    8: {"hidden_size": 4096, "num_layers": 32, "num_kv_heads": 8, "num_query_heads": 32},
    13: {"hidden_size": 5120, "num_layers": 40, "num_kv_heads": 40, "num_query_heads": 40},
    32: {"hidden_size": 5120, "num_layers": 64, "num_kv_heads": 8, "num_query_heads": 40},
    34: {"hidden_size": 8192, "num_layers": 48, "num_kv_heads": 8, "num_query_heads": 64},
    70: {"hidden_size": 8192, "num_layers": 80, "num_kv_heads": 8, "num_query_heads": 64},
    72: {"hidden_size": 8192, "num_layers": 80, "num_kv_heads": 8, "num_query_heads": 64},
}
CONTEXTS = (32_768, 65_536, 131_072)

#: Cards the variants draw from, with vendor datasheet bandwidths and bf16 peaks as for the
#: specimen: A100 SXM 80 GB (HBM2e 2.039 TB/s, 312 TFLOP/s dense bf16) and H200 SXM (HBM3e 4.8 TB/s,
#: the H100's dense bf16 peak). Memory is what CUDA exposes: the specimen's 79.1 GiB for a card sold
#: as 80 GB; for the H200, sold as 141 GB, an assumed 140 GiB.
ACCELERATORS: dict[str, Accelerator] = {"a100": A100, "h100": GPU, "h200": H200}


def pure_attention_model(billions: int, context: int = 131_072) -> ModelSpec:
    """A pure-attention model of one of the sizes in :data:`PURE_ATTENTION_SHAPES`.

    Parameters
    ----------
    billions : int
        Parameters in billions (a key of :data:`PURE_ATTENTION_SHAPES`).
    context : int, default 131072
        Longest context, tokens.

    Returns
    -------
    ModelSpec
        Every layer full attention, head dim 128, bf16.
    """
    shape = PURE_ATTENTION_SHAPES[billions]
    return ModelSpec(
        name=f"{billions}B pure-attention model",
        params=billions * 1e9,
        head_dim=128,
        max_context=context,
        num_attention_layers=shape["num_layers"],
        **shape,
    )


def hybrid_model(attention_layers: int, kv_heads: int, head_dim: int) -> ModelSpec:
    """The specimen with another number of attention layers and KV heads.

    Parameters
    ----------
    attention_layers, kv_heads, head_dim : int
        Full-attention layers of 64 (the rest Gated DeltaNet); KV heads per layer; their dimension.

    Returns
    -------
    ModelSpec
        Same parameters, DeltaNet layers and context as the specimen.
    """
    return replace(
        MODEL,
        name="hybrid variant",
        num_attention_layers=attention_layers,
        num_kv_heads=kv_heads,
        head_dim=head_dim,
    )


def fabric_of(latency_us: float, bandwidth_gbs: float = NVLINK_BANDWIDTH / GB) -> Fabric:
    """A fabric named by its latency, in SI units, for problems that vary the wire.

    Parameters
    ----------
    latency_us : float
        Fixed cost per all-reduce, microseconds.
    bandwidth_gbs : float, optional
        Bandwidth per rank and direction, GB/s (NVLink-class by default).

    Returns
    -------
    Fabric
    """
    return Fabric(
        name=f"{latency_us:g} us fabric", latency=latency_us * US, bandwidth=bandwidth_gbs * GB
    )


def card_facts(key: str) -> dict[str, str]:
    """``{"card": name, "hbm": bandwidth}`` of the card ``key`` of :data:`ACCELERATORS`.

    Parameters
    ----------
    key : str

    Returns
    -------
    dict of str to str
    """
    card = ACCELERATORS[key]
    return {"card": card.name, "hbm": format_rate(card.hbm_bandwidth, "TB")}


def fmt_bytes(nbytes: float, unit: str, decimals: int = 2) -> str:
    """Bytes in ``unit`` with ``decimals`` places, e.g. ``"54 GB"`` (``units.format_bytes``).

    Parameters
    ----------
    nbytes : float
    unit : str
    decimals : int, default 2

    Returns
    -------
    str
    """
    return format_bytes(nbytes, unit, decimals=decimals)


def choice_problem(options: Callable[[], list[Choice]], **fields: Any) -> Problem:
    """A multiple-choice problem whose options each student sees in a shuffled order.

    Parameters
    ----------
    options : callable
        ``options() -> list of Choice`` in a fixed order; ``params["order"]`` picks the shown one.
    **fields
        The other fields of :class:`Problem` (``qid``, ``template`` with ``{options}`` ...).

    Returns
    -------
    Problem
        Its facts are ``options``, ``explained`` and ``letter``; its reference is the letter.
    """

    def choices(p: Params) -> list[Choice]:
        opts = options()
        return [opts[i] for i in p["order"]]

    def reference(p: Params) -> str:
        return next(LETTERS[i] for i, c in enumerate(choices(p)) if c.correct)

    def facts(p: Params) -> dict[str, str]:
        opts = choices(p)
        return {
            "options": "\n".join(f"- **{LETTERS[i]}.** {c.text}" for i, c in enumerate(opts)),
            "explained": "\n".join(f"- **{LETTERS[i]}.** {c.why}" for i, c in enumerate(opts)),
            "letter": reference(p),
        }

    return Problem(
        kind="choice",
        unit="",
        solution_template="The answer is **{letter}**.\n\n{explained}",
        sample=lambda rng: {"order": shuffled(rng, len(options()))},
        facts=facts,
        reference=reference,
        choices=choices,
        **fields,
    )
