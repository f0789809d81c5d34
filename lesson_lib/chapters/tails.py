"""The tails page: the slowest rank's wait, a token's mean and p99, a straggler, the lab's tails."""

from __future__ import annotations

from lesson_lib.chapters import overview
from lesson_lib.chapters.glue import GlueTable
from lesson_lib.chapters.overview import _ms
from lesson_lib.lab.records import REFERENCE_TAILS, read_results, reference_path
from lesson_lib.model.latency import decode_lines
from lesson_lib.model.specimen import JITTER_BUSY, JITTER_QUIET, JITTER_SIGMA, MODEL
from lesson_lib.model.tails import persistent_straggler_cost, slowest_rank_wait, token_time_quantile
from lesson_lib.model.units import format_count, format_ratio, format_seconds

#: GPUs of the worked example this page prices.
N_GPUS: int = 4


def _tail_numbers() -> dict[str, str]:
    """The model's numbers: waits, a token's mean and p99 on 4 fast GPUs at both jitter levels."""
    base = decode_lines()[1].step.total_s  # 4 GPUs, fast fabric: compute + 128 latencies
    collectives = MODEL.allreduces_per_token
    out = {
        "tails_base": _ms(base),
        "tails_sigma": f"{JITTER_SIGMA:g}",
        "tails_h4": format_ratio(slowest_rank_wait(4, 1.0)),
        "tails_h8": format_ratio(slowest_rank_wait(8, 1.0)),
        "tails_h64": format_ratio(slowest_rank_wait(64, 1.0)),
        "tails_ln4": format_ratio(slowest_rank_wait(4, 1.0, "lognormal")),
        "tails_ln64": format_ratio(slowest_rank_wait(64, 1.0, "lognormal")),
        "tails_straggler": _ms(persistent_straggler_cost(JITTER_BUSY)),
    }
    for level, jitter in (("quiet", JITTER_QUIET), ("busy", JITTER_BUSY)):
        extra = collectives * slowest_rank_wait(N_GPUS, jitter)
        p99 = token_time_quantile(0.99, N_GPUS, jitter, base_s=base)
        p99_ln = token_time_quantile(0.99, N_GPUS, jitter, base_s=base, distribution="lognormal")
        mean_ln = base + collectives * slowest_rank_wait(N_GPUS, jitter, "lognormal")
        out |= {
            f"jitter_{level}": format_seconds(jitter, "us"),
            f"tails_wait_{level}": format_seconds(slowest_rank_wait(N_GPUS, jitter), "us"),
            f"tails_extra_{level}": _ms(extra),
            f"tails_mean_{level}": _ms(base + extra),
            f"tails_p99_{level}": _ms(p99),
            f"tails_mean_ln_{level}": _ms(mean_ln),
            f"tails_p99_ln_{level}": _ms(p99_ln),
            f"tails_tokens_{level}": format_count(1 / (base + extra)),
        }
    return out


def _lab_tail_numbers() -> dict[str, str]:
    """The recorded 10 KiB all-reduces on 2 ranks, alone and with a straggler, and the model's view."""
    plain, late = (read_results(reference_path(name)) for name in REFERENCE_TAILS)
    delay = late.config["straggler_us"] * 1e-6
    # Exponential jitter of mean 1 on 2 ranks: the p99 - p50 of one all-reduce's wait.
    spread = token_time_quantile(0.99, 2, 1.0, collectives=1)
    spread -= token_time_quantile(0.5, 2, 1.0, collectives=1)
    jitter = (plain.p99_s[0] - plain.p50_s[0]) / spread
    return {
        "lab_tails_machine": plain.label(),
        "lab_tails_single": format_count(plain.config["single"]),
        "lab_tails_p50": format_seconds(plain.p50_s[0], "us"),
        "lab_tails_p99": format_seconds(plain.p99_s[0], "us"),
        "lab_tails_delay": format_seconds(delay, "us"),
        "lab_tails_late_p50": format_seconds(late.p50_s[0], "us"),
        "lab_tails_late_p99": format_seconds(late.p99_s[0], "us"),
        "lab_tails_p50_growth": format_seconds(late.p50_s[0] - plain.p50_s[0], "us"),
        "lab_tails_predicted_p50": format_seconds(plain.p50_s[0] + delay, "us"),
        "lab_tails_spread": format_ratio(spread),
        "lab_tails_jitter": format_seconds(jitter, "us"),
        "lab_tails_token_jitter": _ms(MODEL.allreduces_per_token * slowest_rank_wait(2, jitter)),
        "lab_tails_token_straggler": _ms(persistent_straggler_cost(delay)),
    }


#: What ``book/tails.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(overview.WORKED, _tail_numbers, _lab_tail_numbers)
