"""The goodput page: requests a second within TTFT and TPOT targets, three ways to serve, price and energy."""

from __future__ import annotations

from functools import cache

from lesson_lib.chapters import overview
from lesson_lib.chapters.glue import GlueTable
from lesson_lib.model.goodput import (
    ATTAINMENT,
    REQUESTS,
    Server,
    goodput,
    per_output_token,
    simulate,
    specimen_server,
)
from lesson_lib.model.specimen import (
    BOARD_POWER_W,
    GOODPUT_OUTPUT_TOKENS,
    GPU_HOUR_USD,
    PROMPT_TOKENS,
    STEP_TOKENS,
    TOKENS_PER_S,
    TTFT_TARGET,
)
from lesson_lib.model.tables import html_table
from lesson_lib.model.units import format_count, format_ratio, format_seconds

#: The tighter time-per-output-token target the page sets beside the interactive one, seconds.
TIGHT_TPOT: float = 0.008
#: The ways to serve, by label, as the page's table lists them.
LABELS: dict[str, str] = {
    "colocated": "colocated, prefill first",
    "chunked": "colocated, chunked prefill",
    "disaggregated": "disaggregated, 4 + 4 GPUs",
}
#: Header of :func:`goodput_table`.
HEADER: tuple[str, ...] = (
    "way to serve",
    "GPUs",
    "goodput (requests/s)",
    "per GPU",
    "USD per million tokens",
    "J per token",
    f"per GPU, TPOT target {TIGHT_TPOT * 1e3:g} ms",
)


@cache
def servers() -> dict[str, Server]:
    """The page's three servers for its workload, by mode."""
    return {
        mode: specimen_server(
            mode,
            PROMPT_TOKENS,
            GOODPUT_OUTPUT_TOKENS,
            step_tokens=STEP_TOKENS * (mode == "chunked"),
        )
        for mode in LABELS
    }


@cache
def _goodputs() -> dict[tuple[str, float], float]:
    targets = (1 / TOKENS_PER_S, TIGHT_TPOT)
    return {
        (m, tpot): goodput(s, TTFT_TARGET, tpot) for m, s in servers().items() for tpot in targets
    }


def _price_and_energy(mode: str) -> tuple[float, float]:
    """USD per million output tokens and joules per token of ``mode`` at its interactive goodput."""
    server, rate = servers()[mode], _goodputs()[mode, 1 / TOKENS_PER_S]
    cost = per_output_token(rate, server.output_tokens, server.gpus, GPU_HOUR_USD / 3600) * 1e6
    return cost, per_output_token(rate, server.output_tokens, server.gpus, BOARD_POWER_W)


def goodput_table() -> str:
    """HTML table: each way to serve, its goodput at the page's targets, price and energy.

    Returns
    -------
    str
        A row per mode of :data:`LABELS`, columns :data:`HEADER`.
    """
    rows = []
    for mode, server in servers().items():
        rate, tight = (_goodputs()[mode, tpot] for tpot in (1 / TOKENS_PER_S, TIGHT_TPOT))
        cost, energy = _price_and_energy(mode)
        rows.append(
            (
                LABELS[mode],
                str(server.gpus),
                f"{rate:.2f}",
                f"{rate / server.gpus:.2f}",
                f"{cost:.2f}",
                f"{energy:.1f}",
                f"{tight / server.gpus:.2f}",
            )
        )
    return html_table(
        HEADER, rows, caption="Goodput at the page's targets, with its price and energy"
    )


def goodput_numbers() -> dict[str, str]:
    """The page's workload, targets, goodputs and the queue check, formatted.

    Returns
    -------
    dict of str to str
    """
    both = servers()
    co, apart = both["colocated"], both["disaggregated"]
    rates = _goodputs()
    loose, tight = 1 / TOKENS_PER_S, TIGHT_TPOT
    # the prefill queue at the disaggregated goodput: simulated mean wait against M/D/1's
    rho = rates["disaggregated", loose] * apart.prefill_s
    trace = simulate(apart, rates["disaggregated", loose], requests=20 * REQUESTS)
    waited = trace.ttft[2 * REQUESTS :] - apart.prefill_s - apart.handoff_s
    # Little's law: sequences decoding at once = arrival rate x time each spends decoding
    co_trace = simulate(co, rates["colocated", loose])
    decoding = (co_trace.finish - co_trace.first)[REQUESTS // 10 :]
    seeds = [goodput(co, TTFT_TARGET, loose, seed=s) for s in (1, 2)] + [rates["colocated", loose]]
    per_gpu = {key: rate / both[key[0]].gpus for key, rate in rates.items()}
    return {
        "gp_output": format_count(GOODPUT_OUTPUT_TOKENS),
        "gp_ttft_target": format_seconds(TTFT_TARGET, "ms", decimals=0),
        "gp_tpot_target": format_seconds(loose, "ms", decimals=0),
        "gp_tpot_tight": format_seconds(tight, "ms", decimals=0),
        "gp_attainment": f"{100 * ATTAINMENT:.0f} %",
        "gp_requests": format_count(REQUESTS),
        "gp_check_requests": format_count(20 * REQUESTS),
        "gp_step_tokens": format_count(STEP_TOKENS),
        "gp_prefill": format_seconds(co.prefill_s, "ms"),
        "gp_step_1": format_seconds(co.decode_s[1], "ms"),
        "gp_fit": format_count(co.max_batch),
        "gp_handoff": format_seconds(apart.handoff_s, "ms"),
        "gp_co": f"{rates['colocated', loose]:.2f}",
        "gp_co_gpu": f"{per_gpu['colocated', loose]:.2f}",
        "gp_chunked_gpu": f"{per_gpu['chunked', loose]:.2f}",
        "gp_apart": f"{rates['disaggregated', loose]:.2f}",
        "gp_apart_gpu": f"{per_gpu['disaggregated', loose]:.2f}",
        "gp_co_tight_gpu": f"{per_gpu['colocated', tight]:.2f}",
        "gp_apart_tight_gpu": f"{per_gpu['disaggregated', tight]:.2f}",
        "gp_co_tokens": format_count(rates["colocated", loose] * GOODPUT_OUTPUT_TOKENS),
        "gp_rho": f"{100 * rho:.0f} %",
        "gp_md1_wait": format_seconds(rho * apart.prefill_s / (2 * (1 - rho)), "ms"),
        "gp_sim_wait": format_seconds(float(waited.mean()), "ms"),
        "gp_seed_low": f"{min(seeds):.2f}",
        "gp_seed_high": f"{max(seeds):.2f}",
        "gp_cost": f"{_price_and_energy('colocated')[0]:.2f} USD",
        "gp_energy": f"{_price_and_energy('colocated')[1]:.1f} J",
        "gp_gpu_hour": f"{GPU_HOUR_USD:.2f} USD",
        "gp_board_power": f"{BOARD_POWER_W:.0f} W",
        "gp_batch_co": format_count(rates["colocated", loose] * float(decoding.mean())),
        "gp_tpot_co": format_seconds(float(co_trace.tpot(GOODPUT_OUTPUT_TOKENS).mean()), "ms"),
        "gp_tight_ratio": format_ratio(
            per_gpu["disaggregated", tight] / per_gpu["colocated", tight]
        ),
        "gp_loose_ratio": format_ratio(
            per_gpu["colocated", loose] / per_gpu["disaggregated", loose]
        ),
        "gp_chunked_vs_co": format_ratio(per_gpu["colocated", loose] / per_gpu["chunked", loose]),
    }


#: What ``book/goodput.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(overview.WORKED, goodput_numbers)
