"""Problem q4: multiple choice, why decode is latency-bound."""

from __future__ import annotations

from lesson_lib.coursework.problems.bank import Choice, choice_problem, fmt_bytes
from lesson_lib.model.collectives import allreduce_wire_bytes, crossover_bytes
from lesson_lib.model.specimen import FAST, MODEL, NVLINK_BANDWIDTH, TOKENS_PER_S
from lesson_lib.model.units import format_rate, format_seconds


def _options() -> list[Choice]:
    m = MODEL
    payload = m.allreduces_per_token * m.hidden_vector_bytes
    wire4 = allreduce_wire_bytes(payload, 4)
    cross = crossover_bytes(FAST, 2)
    return [
        Choice(
            f"Each of the {m.allreduces_per_token} all-reduces of a token carries a single "
            f"hidden vector ({fmt_bytes(m.hidden_vector_bytes, 'KiB')}), far below the crossover size "
            "alpha x B, and they run one after another, so the fixed cost of each collective "
            "adds up.",
            f"Right: {fmt_bytes(m.hidden_vector_bytes, 'KiB')} is tiny next to the crossover of a fast "
            f"fabric ({fmt_bytes(cross, 'MB')} at {format_seconds(FAST.latency, 'us')} and {format_rate(FAST.bandwidth)}), "
            "so each "
            "all-reduce costs about its latency, and the token pays it "
            f"{m.allreduces_per_token} times in series.",
            correct=True,
        ),
        Choice(
            f"At {TOKENS_PER_S} tokens/s the {fmt_bytes(wire4, 'MiB', 3)} each rank sends per token "
            "(N = 4) is more than an NVLink-class fabric can carry.",
            f"No: that is {format_rate(wire4 * TOKENS_PER_S, 'MiB')}, a tiny fraction of "
            f"{format_rate(NVLINK_BANDWIDTH)}, and comfortable even for PCIe.",
        ),
        Choice(
            "The ring algorithm sends 2(N-1)/N times the payload, nearly doubling the traffic, "
            "and that doubling is what makes decode slow.",
            "No: the factor stays below 2, and doubling a few MiB per token still leaves the "
            "bytes negligible; the cost is the number of serial round trips.",
        ),
        Choice(
            "Decode streams the weights from HBM for each token, and that memory read is the "
            "latency the fabric adds.",
            "No: streaming the weights is the compute side of the step (HBM bandwidth); the "
            "fabric's latency is a separate, fixed cost per all-reduce that does not shrink "
            "when you add GPUs.",
        ),
    ]


PROBLEM = choice_problem(
    _options,
    qid="q4",
    title="Why decode is latency-bound",
    chapter="latency",
    difficulty=1,
    template="Why is decoding one token latency-bound over the fabric?\n\n{options}",
    defaults={"order": [1, 3, 0, 2]},
    hint="Compare one all-reduce's message with the crossover size alpha x B.",
)
