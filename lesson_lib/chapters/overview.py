"""The overview page: the worked example's numbers, which most pages glue too, and reading times."""

from __future__ import annotations

import re
from pathlib import Path

from lesson_lib.chapters.glue import CHAPTERS, GlueTable
from lesson_lib.chapters.notebook import BOOK
from lesson_lib.model.collectives import (
    allreduce_latency,
    allreduce_wire_bytes,
    crossover_bytes,
    ring_allreduce_factor,
)
from lesson_lib.model.latency import decode_lines
from lesson_lib.model.memory import max_sequences, memory_budget
from lesson_lib.model.specimen import (
    FAST,
    FAST_RING,
    GPU,
    GPU_HBM_BYTES,
    GPU_LABEL,
    MODEL,
    PROMPT_TOKENS,
    SLOW,
    TOKENS_PER_S,
    VLLM_GPU_MEMORY_UTILIZATION,
)
from lesson_lib.model.step_time import decode_step, prefill_step, speedup
from lesson_lib.model.units import (
    format_bytes,
    format_count,
    format_rate,
    format_ratio,
    format_seconds,
)


def _ms(seconds: float) -> str:
    return format_seconds(seconds, "ms")


def worked_example_numbers() -> dict[str, str]:
    """Every worked-example number, formatted, keyed by the name chapters glue.

    Returns
    -------
    dict of str to str
        For example ``numbers()["line_2_fast"] == "9.34 ms"``.
    """
    m, full = MODEL, MODEL.max_context
    kv_full = m.kv_bytes(full)
    one_gpu = memory_budget(m, GPU, 1, full, 1)
    per_token_payload = m.allreduces_per_token * m.hidden_vector_bytes
    wire2 = allreduce_wire_bytes(per_token_payload, 2)
    wire4 = allreduce_wire_bytes(per_token_payload, 4)
    lesson = decode_lines(include_bandwidth=False)
    full_model = decode_lines(include_bandwidth=True)
    one = decode_step(m, GPU, FAST, 1)
    ring2 = decode_step(m, GPU, FAST_RING, 2, include_bandwidth=False)
    ring4 = decode_step(m, GPU, FAST_RING, 4, include_bandwidth=False)
    prompt_payload = PROMPT_TOKENS * m.hidden_vector_bytes
    prefill_wire = {
        n: m.allreduces_per_token * allreduce_wire_bytes(prompt_payload, n) for n in (2, 4)
    }
    pre_fast = prefill_step(m, GPU, FAST, 4, PROMPT_TOKENS)
    pre_slow = prefill_step(m, GPU, SLOW, 4, PROMPT_TOKENS)
    out = {
        "params": format_count(m.params / 1e9) + "B",
        "weights_gb": format_bytes(m.weight_bytes, "GB"),
        "weights_gib": format_bytes(m.weight_bytes, "GiB"),
        "kv_per_token": format_bytes(m.kv_bytes_per_token, "KiB"),
        "kv_full_gib": format_bytes(kv_full, "GiB"),
        "kv_full_gb": format_bytes(kv_full, "GB"),
        "kv_pure_attention_gib": format_bytes(
            kv_full * m.num_layers / m.num_attention_layers, "GiB"
        ),
        "state_mib": format_bytes(m.state_bytes, "MiB", decimals=0),
        "max_context": format_count(full),
        "gpu_memory": format_bytes(GPU.memory_bytes, "GB"),
        "gpu_memory_gib": format_bytes(GPU.memory_bytes, "GiB", decimals=1),
        "gpu_label": GPU_LABEL,
        "gpu_hbm_gib": format_bytes(GPU_HBM_BYTES, "GiB", decimals=0),
        "vllm_utilization": format_count(VLLM_GPU_MEMORY_UTILIZATION, decimals=2),
        "sequences_4_reserved": str(
            max_sequences(m, GPU, 4, full, utilization=VLLM_GPU_MEMORY_UTILIZATION)
        ),
        "free_one_gpu_gb": format_bytes(one_gpu.free_bytes, "GB"),
        "allreduces_per_token": str(m.allreduces_per_token),
        "hidden_vector": format_bytes(m.hidden_vector_bytes, "KiB"),
        "payload_per_token": format_bytes(per_token_payload, "MiB", decimals=3),
        "factor_2": format_count(ring_allreduce_factor(2), decimals=3),
        "factor_4": format_count(ring_allreduce_factor(4), decimals=3),
        "wire_2": format_bytes(wire2, "MiB", decimals=3),
        "wire_4": format_bytes(wire4, "MiB", decimals=3),
        "tokens_per_s": str(TOKENS_PER_S),
        "rate_2": format_rate(wire2 * TOKENS_PER_S, "MiB"),
        "rate_4": format_rate(wire4 * TOKENS_PER_S, "MiB"),
        "fast_latency": format_seconds(FAST.latency, "us"),
        "slow_latency": format_seconds(SLOW.latency, "us"),
        "latency_fast_total": _ms(m.allreduces_per_token * allreduce_latency(2, FAST)),
        "latency_slow_total": _ms(m.allreduces_per_token * allreduce_latency(2, SLOW)),
        "compute_1": _ms(one.compute_s),
        "compute_2": _ms(lesson[0].step.compute_s),
        "compute_4": _ms(lesson[1].step.compute_s),
        "speedup_2_to_4": format_ratio(speedup(lesson[0].step, lesson[1].step)),
        "speedup_ring_2_to_4": format_ratio(speedup(ring2, ring4)),
        "ring_latency_4": format_seconds(allreduce_latency(4, FAST_RING), "us"),
        "prompt_tokens": format_count(PROMPT_TOKENS),
        "prefill_payload": format_bytes(prompt_payload, "MiB"),
        "prefill_payload_total": format_bytes(m.allreduces_per_token * prompt_payload, "GiB"),
        "prefill_wire_2": format_bytes(prefill_wire[2], "GiB"),
        "prefill_wire_4": format_bytes(prefill_wire[4], "GiB"),
        "prefill_bandwidth_fast_4": _ms(pre_fast.bandwidth_s),
        "prefill_latency_fast_4": _ms(pre_fast.latency_s),
        "prefill_bandwidth_slow_4": _ms(pre_slow.bandwidth_s),
        "prefill_flops_4": _ms(pre_fast.flops_s),
        "crossover_fast": format_bytes(crossover_bytes(FAST, 2), "MB"),
    }
    for n in (1, 2, 4):
        out[f"sequences_{n}"] = str(max_sequences(m, GPU, n, full))
    for key, lines in (("line", lesson), ("line_bw", full_model)):
        for line in lines:
            tag = f"{line.n}_{'fast' if line.fabric is FAST else 'slow'}"
            out[f"{key}_{tag}"] = _ms(line.step.total_s)
            out[f"{key}_{tag}_tokens_per_s"] = format_count(line.step.tokens_per_s)
    return out


#: Words a minute of study reading, Carver's "learning" rate (R. P. Carver, "Reading rate:
#: theory, research, and practical implications", Journal of Reading 36(2), 84-95, 1992).
READING_WPM = 200
#: The chapters that carry the argument, in reading order; the others go further.
CORE_PATH = ("overview", "sizing", "allreduce", "payloads", "latency", "prefill", "batching")
CORE_PATH += ("cluster", "summary")


def prose_words(markdown: str) -> int:
    """Words of a MyST page's text, tables and captions before ``## Exercises``, not its code.

    A role counts as its shown text or one word (a glued number), a link as its text.

    Parameters
    ----------
    markdown : str
        The page's MyST source.

    Returns
    -------
    int
    """
    import jupytext  # as the notebook edition reads MyST

    page = markdown.split("\n## Exercises", 1)[0]
    text = " ".join(
        c.source for c in jupytext.reads(page, fmt="md:myst").cells if c.cell_type == "markdown"
    )
    text += " ".join(re.findall(r"^ +caption: (.*\n(?: {6,}\S.*\n)*)", page, flags=re.M))
    words = re.sub(r"\{[^}\s]+\}`([^`<]*)(<[^`]*>)?`|\]\([^)]*\)", r"\1", text).split()
    return sum(1 for word in words if re.search(r"\w", word))


def reading_numbers(book: Path = BOOK) -> dict[str, str]:
    """Minutes of reading (:data:`READING_WPM`, rounded, at least 1) per chapter page.

    Also the core path's (:data:`CORE_PATH`) and the rest's, so they follow the text.

    Parameters
    ----------
    book : Path, default the checkout's ``book/``
        The folder of the pages.

    Returns
    -------
    dict of str to str
        ``read_<page>``, ``read_core``, ``read_further`` (``"7 min"``) and ``reading_wpm``.
    """
    pages = [page for page in CHAPTERS if page not in ("index", "instructor")]
    words = {page: prose_words((book / f"{page}.md").read_text("utf-8")) for page in pages}
    minutes = {page: max(1, round(count / READING_WPM)) for page, count in words.items()}
    # the overview lists the core path's chapters after itself: their sum is what is left to read
    core = sum(minutes[page] for page in CORE_PATH if page != "overview")
    further = sum(minutes[page] for page in pages if page not in CORE_PATH)
    out = {f"read_{page}": f"{count} min" for page, count in minutes.items()}
    out |= {"read_core": f"{core} min", "read_further": f"{further} min"}
    return out | {"reading_wpm": str(READING_WPM)}


def _reading_beside_the_book() -> dict[str, str]:
    """The reading times where the book's pages sit beside ``lesson_lib`` (a wheel has none)."""
    return reading_numbers() if (BOOK / "overview.md").exists() else {}


#: The worked example's numbers, which every chapter's table starts from.
WORKED = GlueTable(worked_example_numbers)
#: What ``book/overview.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(WORKED, _reading_beside_the_book)
