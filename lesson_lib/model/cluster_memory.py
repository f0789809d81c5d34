"""What a cluster layout holds per GPU: weights, then as many sequences as fit beside them.

Each pipeline stage holds its layers' weights, KV cache and recurrent state, so the stage fitting
the fewest sequences bounds its replica (vLLM's uneven split); the largest stage paces the pipeline.
"""

from __future__ import annotations

from lesson_lib.model.layout import stage_layer_kinds, stage_layers
from lesson_lib.model.memory import kv_share, state_share
from lesson_lib.model.specs import Accelerator, ModelSpec
from lesson_lib.model.step_time import MAX_BATCH
from lesson_lib.model.units import format_bytes, format_count


def stage_memory(
    model: ModelSpec, accel: Accelerator, tp: int, pp: int, context_tokens: int
) -> tuple[float, int, float]:
    """The busiest stage's weights per GPU, the sequences a replica fits, and the stage imbalance.

    Parameters
    ----------
    model, accel : ModelSpec, Accelerator
        A dense model and one card.
    tp, pp : int
        Tensor- and pipeline-parallel degrees; more stages than layers count as one per layer.
    context_tokens : int
        Length of each sequence.

    Returns
    -------
    tuple of (float, int, float)
        Weight bytes on the busiest GPU; sequences of ``context_tokens`` that fit on every stage;
        the largest stage's layers over an even share (1 when ``pp`` divides the layers).
    """
    pp = min(pp, model.num_layers)
    weights, fits = 0.0, []
    for attention, linear in stage_layer_kinds(model, pp):
        stage_weights = model.weight_bytes / tp * (attention + linear) / model.num_layers
        per_sequence = 0.0
        if model.num_attention_layers:
            kv = model.kv_bytes(context_tokens) * kv_share(model, tp)
            per_sequence += kv * attention / model.num_attention_layers
        if model.num_linear_layers:
            state = model.state_bytes * state_share(model, tp)
            per_sequence += state * linear / model.num_linear_layers
        free = accel.memory_bytes - stage_weights
        fits.append(int(free // per_sequence) if free > 0 else 0)
        weights = max(weights, stage_weights)
    imbalance = max(stage_layers(model, pp)) * pp / model.num_layers
    return weights, min(fits), imbalance


def memory_problems(
    weights: float, accel: Accelerator, batch: int | None, fit: int
) -> tuple[int, list[str]]:
    """The batch a replica decodes, and why the memory forbids the layout.

    Parameters
    ----------
    weights : float
        Weight bytes on the busiest GPU.
    accel : Accelerator
    batch : int or None
        The batch; None for as many as fit, to :data:`~lesson_lib.model.step_time.MAX_BATCH`.
    fit : int
        Sequences that fit per replica.

    Returns
    -------
    tuple of (int, list of str)
        The batch, and the problems: weights larger than the card, a batch larger than what fits.
    """
    problems = []
    if weights > accel.memory_bytes:
        problems.append(
            f"the weights need {format_bytes(weights, 'GB')} per GPU, more than the card's "
            f"{format_bytes(accel.memory_bytes, 'GB')}"
        )
    if batch is None:
        batch = min(fit, MAX_BATCH)
    elif batch > fit:
        problems.append(
            f"a batch of {format_count(batch)} sequences needs more memory than the "
            f"{format_count(fit)} that fit per replica"
        )
    return batch, problems
