"""Problem q19: the worked example's four-GPU line on a measured system."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from lesson_lib.coursework.problems.bank import Mistake, Params, Problem
from lesson_lib.coursework.variants import pick
from lesson_lib.measured import library_kernel, measured_fabric, measured_table, systems
from lesson_lib.model.specimen import FAST, GPU, MODEL
from lesson_lib.model.step_time import decode_step
from lesson_lib.model.units import format_seconds

#: Systems a variant may draw: every one with a four-GPU library all-reduce.
SYSTEMS: tuple[str, ...] = tuple(sorted(systems()))


@cache  # a fit of a shipped table: the same float for every variant that draws the system
def _alpha(system: str, gpus: int = 4) -> float:
    return measured_fabric(system, gpus, library_kernel(system)).fabric.latency


def _line(alpha: float, n: int = 4) -> float:
    """Milliseconds per token on ``n`` GPUs: the lesson's arithmetic on a fabric of latency alpha."""
    fabric = replace(FAST, latency=alpha)
    return decode_step(MODEL, GPU, fabric, n, include_bandwidth=False).total_s * 1e3


def _reference(p: Params) -> float:
    return _line(_alpha(p["system"]))


def _facts(p: Params) -> dict[str, str]:
    system = p["system"]
    runtime, sizes, times = measured_table(system, 4, library_kernel(system))
    rows = ", ".join(
        f"{int(m // 2):,} elements: {t * 1e3:.4f} ms"
        for m, t in zip(sizes[:4], times[:4], strict=True)
    )
    two_fast = decode_step(MODEL, GPU, FAST, 2, include_bandwidth=False).total_s
    answer = _reference(p) / 1e3
    return {
        "system": system,
        "library": "oneCCL" if library_kernel(system) == "oneccl" else "NCCL",
        "device": systems()[system],
        "runtime": runtime,
        "rows": rows,
        "alpha": f"{_alpha(system) * 1e6:.1f} us",
        "compute": format_seconds(
            decode_step(MODEL, GPU, FAST, 4, include_bandwidth=False).compute_s, "ms"
        ),
        "allreduces": str(MODEL.allreduces_per_token),
        "answer": format_seconds(answer, "ms"),
        "two_fast": format_seconds(two_fast, "ms"),
        "winner": "the four GPUs" if answer < two_fast else "the two fast GPUs",
    }


def _mistakes(p: Params) -> list[Mistake]:
    alpha = _alpha(p["system"])
    return [
        # Reading the table's milliseconds as microseconds and paying alpha once per
        # token both leave about the weight streaming alone: one number, one hint.
        Mistake(
            "alpha-barely-counted",
            _line(alpha) - (MODEL.allreduces_per_token - 1) * alpha * 1e3,
            "That is about the weight streaming alone: each token waits on every one of its "
            f"{MODEL.allreduces_per_token} all-reduces, one after another, each costing "
            "alpha, and the table's latencies are in milliseconds (a thousandth of a second "
            "each, not a millionth).",
        ),
        Mistake(
            "two-gpu-table",
            _line(_alpha(p["system"], 2)),
            "That is the two-GPU table's alpha; four GPUs have a table of their own, and "
            "their latency is higher.",
        ),
    ]


PROBLEM = Problem(
    qid="q19",
    title="The four-GPU line on a measured system",
    chapter="measured",
    difficulty=3,
    unit="ms",
    rtol=0.03,
    template=(
        "NVIDIA's aiconfigurator measured {library} all-reduces on 4 GPUs of the system "
        "**{system}** ({device}, {runtime}). Its table starts (sizes in fp16 elements, "
        "latencies in milliseconds): {rows}. Take alpha as the latency of these small "
        "messages and keep the lesson's card ({compute} of weight streaming per token on 4 "
        "GPUs). How many milliseconds does a token take on 4 GPUs of this system, with "
        "{allreduces} all-reduces per token and the bytes left out? Does it beat two GPUs at "
        "the lesson's 10 us?"
    ),
    solution_template=(
        "The small messages take about {alpha} (the fit gives that alpha). "
        "{compute} + {allreduces} x {alpha} = **{answer}** per token, against {two_fast} for "
        "two GPUs at 10 us: {winner} win."
    ),
    defaults={"system": "l40s"},
    sample=lambda rng: {"system": pick(rng, SYSTEMS)},
    facts=_facts,
    reference=_reference,
    mistakes=_mistakes,
    hint="alpha is the plateau of the smallest messages, in seconds; a token pays it once per "
    "all-reduce, on top of the weights' streaming.",
)
