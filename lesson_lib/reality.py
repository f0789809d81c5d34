"""A reality check: published tensor-parallel decode measurements against the model.

The lesson predicts 1.76x from two to four GPUs on a fast fabric. Few public
sources publish clean TP 2 -> TP 4 decode times; the table NVIDIA's NeMo
documentation prints for TensorRT-LLM on Llama 2 is one, and it measures a
whole short request (a 128-token prompt, then 20 generated tokens, batch 1),
not one decode step. Each record below is read from that page; the model's
prediction for the same request uses the same public model shapes, the card's
vendor bandwidth and the lesson's 10 us fabric.
"""

from __future__ import annotations

from dataclasses import dataclass

from lesson_lib.specimen import A100, FAST, GPU
from lesson_lib.specs import Accelerator, Fabric, ModelSpec
from lesson_lib.step_time import decode_step, prefill_step
from lesson_lib.units import format_ratio, format_seconds

_NEMO = "https://docs.nvidia.com/nemo-framework/user-guide/latest/performance/llama.html"

#: Llama 2 7B, public Hugging Face config (32 layers, hidden 4096, 32 heads, no GQA).
LLAMA2_7B = ModelSpec(
    name="Llama-2-7B",
    params=6.74e9,
    hidden_size=4096,
    num_layers=32,
    num_attention_layers=32,
    num_kv_heads=32,
    head_dim=128,
    max_context=4096,
    num_query_heads=32,
    ffn_size=11008,
)
#: Llama 2 13B, public Hugging Face config (40 layers, hidden 5120, 40 heads, no GQA).
LLAMA2_13B = ModelSpec(
    name="Llama-2-13B",
    params=13.0e9,
    hidden_size=5120,
    num_layers=40,
    num_attention_layers=40,
    num_kv_heads=40,
    head_dim=128,
    max_context=4096,
    num_query_heads=40,
    ffn_size=13824,
)
#: NVLink 3 on A100 with 300 GB/s per direction (600 GB/s both ways) and the lesson's 10 us.
A100_NVLINK = Fabric("NVLink 3-class, 10 us", latency=FAST.latency, bandwidth=300e9)


@dataclass(frozen=True)
class PublishedScaling:
    """One published pair of TP 2 and TP 4 latencies for the same request.

    Attributes
    ----------
    model : ModelSpec
        The model measured.
    accel : Accelerator
        The card.
    fabric : Fabric
        The model's stand-in for the card's NVLink (the lesson's 10 us).
    engine : str
        The serving software.
    prompt_tokens : int
        Prompt length of the request, tokens.
    output_tokens : int
        Tokens generated.
    batch : int
        Requests decoded together.
    tp2_s : float
        Reported end-to-end latency on 2 GPUs, seconds.
    tp4_s : float
        Reported end-to-end latency on 4 GPUs, seconds.
    source : str
        URL.
    note : str
        How the row was read.
    """

    model: ModelSpec
    accel: Accelerator
    fabric: Fabric
    engine: str
    prompt_tokens: int
    output_tokens: int
    batch: int
    tp2_s: float
    tp4_s: float
    source: str
    note: str

    @property
    def measured_speedup(self) -> float:
        """Reported TP 2 latency over TP 4 latency."""
        return self.tp2_s / self.tp4_s

    def predicted_s(self, n: int) -> float:
        """The model's latency for the same request on ``n`` GPUs, seconds.

        One prefill of the prompt plus one decode step per output token at
        the growing context, all on the record's fabric (ring, bandwidth term in).
        """
        total = prefill_step(self.model, self.accel, self.fabric, n, self.prompt_tokens).total_s
        for i in range(self.output_tokens):
            total += decode_step(
                self.model,
                self.accel,
                self.fabric,
                n,
                batch=self.batch,
                context=self.prompt_tokens + i,
            ).total_s
        return total

    @property
    def predicted_speedup(self) -> float:
        """The model's TP 2 latency over its TP 4 latency."""
        return self.predicted_s(2) / self.predicted_s(4)


_H100 = GPU
_NOTE = "batch 1, 128 input + 20 output tokens; end-to-end latency, TensorRT-LLM"

#: The published rows (batch 1; the A100 13B row at TP 4 is an outlier on the page and is left out).
PUBLISHED_SCALING: tuple[PublishedScaling, ...] = (
    PublishedScaling(
        LLAMA2_13B, _H100, FAST, "TensorRT-LLM", 128, 20, 1, 69.7e-3, 61.4e-3, _NEMO, _NOTE
    ),
    PublishedScaling(
        LLAMA2_7B, _H100, FAST, "TensorRT-LLM", 128, 20, 1, 128.6e-3, 107.4e-3, _NEMO, _NOTE
    ),
    PublishedScaling(
        LLAMA2_7B, A100, A100_NVLINK, "TensorRT-LLM", 128, 20, 1, 171.7e-3, 143.7e-3, _NEMO, _NOTE
    ),
)

#: Columns of :func:`reality_rows`.
REALITY_HEADER: tuple[str, ...] = (
    "model on GPU",
    "measured TP 2 / TP 4 (ms)",
    "measured speed-up",
    "model's TP 2 / TP 4 (ms)",
    "model's speed-up",
)


def reality_rows(
    records: tuple[PublishedScaling, ...] = PUBLISHED_SCALING,
) -> list[tuple[str, str, str, str, str]]:
    """One row per record: what was measured and what the model predicts.

    Parameters
    ----------
    records : tuple of PublishedScaling, default PUBLISHED_SCALING
        The measurements.

    Returns
    -------
    list of tuple of str
        Formatted cells in :data:`REALITY_HEADER` order.
    """
    rows = []
    for r in records:
        card = r.accel.name.split(" ")[0]
        rows.append(
            (
                f"{r.model.name} on {card}",
                f"{r.tp2_s * 1e3:.1f} / {r.tp4_s * 1e3:.1f}",
                format_ratio(r.measured_speedup),
                f"{r.predicted_s(2) * 1e3:.1f} / {r.predicted_s(4) * 1e3:.1f}",
                format_ratio(r.predicted_speedup),
            )
        )
    return rows


def reality_numbers() -> dict[str, str]:
    """Numbers the reality check glues.

    Returns
    -------
    dict of str to str
        ``reality_13b_measured`` / ``reality_13b_predicted`` (speed-ups of the
        H100 13B row), the same measured times, and the smallest and largest
        measured speed-up; ``reality_13b_stream_tp2``, the time two GPUs take
        just to stream the 13B row's bf16 weights once per generated token.
    """
    first = PUBLISHED_SCALING[0]
    measured = [r.measured_speedup for r in PUBLISHED_SCALING]
    return {
        "reality_13b_measured": format_ratio(first.measured_speedup),
        "reality_13b_predicted": format_ratio(first.predicted_speedup),
        "reality_13b_tp2": format_seconds(first.tp2_s, "ms", decimals=1),
        "reality_13b_tp4": format_seconds(first.tp4_s, "ms", decimals=1),
        "reality_13b_model_tp4": format_seconds(first.predicted_s(4), "ms", decimals=1),
        "reality_13b_stream_tp2": format_seconds(
            first.output_tokens * first.model.weight_bytes / (2 * first.accel.hbm_bandwidth),
            "ms",
            decimals=1,
        ),
        "reality_min_measured": format_ratio(min(measured)),
        "reality_max_measured": format_ratio(max(measured)),
    }
