"""Tables several pages print (:func:`lesson_lib.model.tables.html_table`): inputs, key numbers, memory."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lesson_lib.chapters.overview import worked_example_numbers
from lesson_lib.model.sizing import DegreeFit, fits_by_degree
from lesson_lib.model.specimen import ASSUMPTIONS, Assumption
from lesson_lib.model.tables import html_table
from lesson_lib.model.units import format_bytes, format_count

#: The title of each chapter the key numbers come from, by its slug, as its page heads it.
CHAPTER_TITLES: dict[str, str] = {
    "sizing": "The sizing problem",
    "allreduce": "Where the all-reduces come from",
    "payloads": "Ring payloads",
    "latency": "The latency assumption",
    "prefill": "Prefill versus decode",
}
#: The summary's key numbers; (the worked example's glue name, what it is, chapter slug).
KEY_NUMBERS: tuple[tuple[str, str, str], ...] = (
    ("weights_gb", "bf16 weights of the model", "sizing"),
    ("kv_per_token", "KV cache added by one token", "sizing"),
    ("kv_full_gib", "KV cache of one full-length sequence", "sizing"),
    ("state_mib", "fixed DeltaNet state per sequence, any length", "sizing"),
    ("free_one_gpu_gb", "left on one card beside weights and one full-length sequence", "sizing"),
    ("sequences_1", "full-length sequences that fit, TP = 1", "sizing"),
    ("sequences_2", "full-length sequences that fit, TP = 2", "sizing"),
    ("sequences_4", "full-length sequences that fit, TP = 4", "sizing"),
    ("allreduces_per_token", "all-reduces per decoded token (two per layer)", "allreduce"),
    ("hidden_vector", "payload of one decode all-reduce (one hidden vector)", "allreduce"),
    ("payload_per_token", "payload of all all-reduces of one token", "payloads"),
    ("wire_2", "bytes each rank sends per token, ring of 2", "payloads"),
    ("wire_4", "bytes each rank sends per token, ring of 4", "payloads"),
    ("rate_4", "wire traffic per rank at the interactive rate, ring of 4", "payloads"),
    ("latency_fast_total", "all-reduce latency per token, fast fabric", "latency"),
    ("latency_slow_total", "all-reduce latency per token, slow fabric", "latency"),
    ("line_2_fast", "time per token, 2 GPUs, fast fabric", "latency"),
    ("line_4_fast", "time per token, 4 GPUs, fast fabric", "latency"),
    ("line_4_slow", "time per token, 4 GPUs, slow fabric", "latency"),
    ("speedup_2_to_4", "speed-up from 2 to 4 GPUs, fast fabric", "latency"),
    ("prefill_payload", "payload of one prefill all-reduce (the lesson's prompt)", "prefill"),
    ("prefill_bandwidth_fast_4", "prefill wire time, 4 GPUs on NVLink-class bandwidth", "prefill"),
    ("prefill_latency_fast_4", "prefill latency, 4 GPUs, fast fabric", "prefill"),
    ("crossover_fast", "message size where latency and bandwidth cost the same", "prefill"),
)


def assumptions_table(
    assumptions: Sequence[Assumption] = ASSUMPTIONS, caption: str | None = None
) -> str:
    """The worked example's stated inputs: quantity, value, source.

    Parameters
    ----------
    assumptions : sequence of Assumption, default :data:`lesson_lib.model.specimen.ASSUMPTIONS`
        The inputs to list, in order.
    caption : str, optional

    Returns
    -------
    str
        An HTML table, a row per assumption.
    """
    rows = [(a.name, a.shown, a.source) for a in assumptions]
    return html_table(("quantity", "value", "source"), rows, caption)


def key_numbers_table(values: Mapping[str, str] | None = None, caption: str | None = None) -> str:
    """The summary's key numbers, each read from :func:`~lesson_lib.chapters.overview.worked_example_numbers`.

    Parameters
    ----------
    values : mapping of str to str, optional
        Glue key -> formatted value; default the worked example's.
    caption : str, optional

    Returns
    -------
    str
        An HTML table: quantity, value, title of the chapter where it is derived.

    Raises
    ------
    KeyError
        If ``values`` lacks a key of :data:`KEY_NUMBERS`.
    """
    values = worked_example_numbers() if values is None else values
    missing = [key for key, _, _ in KEY_NUMBERS if key not in values]
    if missing:
        raise KeyError(f"values lacks the key numbers {missing}")
    rows = [(what, values[key], CHAPTER_TITLES[slug]) for key, what, slug in KEY_NUMBERS]
    return html_table(("quantity", "value", "chapter"), rows, caption)


def budget_table(fits: Sequence[DegreeFit] | None = None, caption: str | None = None) -> str:
    """Per-GPU memory for each TP degree with as many sequences as fit.

    Parameters
    ----------
    fits : sequence of DegreeFit, optional
        Default :func:`~lesson_lib.model.sizing.fits_by_degree`: specimen, full context, TP 1, 2, 4.
    caption : str, optional

    Returns
    -------
    str
        An HTML table, all in GB so that a row adds up by eye (the KV cache also in GiB).
    """
    fits = fits_by_degree() if fits is None else fits
    rows = [
        (
            str(f.n),
            format_count(f.sequences),
            format_bytes(f.budget.weights_bytes, "GB"),
            f"{format_bytes(f.budget.kv_bytes, 'GB')} ({format_bytes(f.budget.kv_bytes, 'GiB')})",
            format_bytes(f.budget.state_bytes, "GB"),
            format_bytes(f.budget.free_bytes, "GB"),
            format_bytes(f.budget.capacity_bytes, "GB"),
        )
        for f in fits
    ]
    header = ("TP degree", "sequences", "weights / GPU", "KV cache / GPU", "DeltaNet state / GPU")
    return html_table((*header, "free / GPU", "= card"), rows, caption)
