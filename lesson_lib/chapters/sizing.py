"""The sizing page: what fits on each GPU at each TP degree (:mod:`lesson_lib.model.sizing`)."""

from __future__ import annotations

from lesson_lib.chapters import overview
from lesson_lib.chapters.glue import GlueTable
from lesson_lib.model._validate import require_instance
from lesson_lib.model.memory import kv_share
from lesson_lib.model.sizing import DEGREES, fits_by_degree, pure_attention_twin
from lesson_lib.model.specimen import GPU, MODEL, NCCL_BUFFER_BYTES
from lesson_lib.model.specs import Accelerator, ModelSpec
from lesson_lib.model.units import format_bytes, format_count, format_ratio


def sizing_numbers(model: ModelSpec = MODEL, accel: Accelerator = GPU) -> dict[str, str]:
    """Formatted numbers the sizing chapter glues beside :func:`~lesson_lib.chapters.overview.worked_example_numbers`.

    Parameters
    ----------
    model, accel : ModelSpec, Accelerator
        The model and one card; default the specimen's.

    Returns
    -------
    dict of str to str
    """
    require_instance("model", model, ModelSpec)
    require_instance("accel", accel, Accelerator)
    full = model.max_context
    twin = pure_attention_twin(model)
    out = {
        "sizing_layers": str(model.num_layers),
        "sizing_attention_layers": str(model.num_attention_layers),
        "sizing_linear_layers": str(model.num_linear_layers),
        "sizing_kv_heads": str(model.num_kv_heads),
        "sizing_head_dim": str(model.head_dim),
        "sizing_dtype_bytes": f"{model.dtype_bytes} B",
        "sizing_pure_factor": format_ratio(twin.kv_bytes_per_token / model.kv_bytes_per_token),
        "sizing_state_percent": format_count(
            100 * model.state_bytes / model.kv_bytes(full), decimals=1
        )
        + "%",
        "sizing_headroom_gb": format_bytes(accel.memory_bytes - model.weight_bytes, "GB"),
        "sizing_headroom_gib": format_bytes(accel.memory_bytes - model.weight_bytes, "GiB"),
    }
    for fit in fits_by_degree(model, accel, (*DEGREES, 8), full):
        n = fit.n
        out[f"sizing_weights_{n}"] = format_bytes(fit.budget.weights_bytes, "GB")
        out[f"sizing_kv_full_{n}"] = format_bytes(model.kv_bytes(full) * kv_share(model, n), "GiB")
        out[f"sizing_sequences_{n}"] = str(fit.sequences)
    out["sizing_tp8_extra"] = str(int(out["sizing_sequences_8"]) - int(out["sizing_sequences_4"]))
    # NCCL's buffers (a stated, sourced assumption) taken off the card at TP 4
    nccl = NCCL_BUFFER_BYTES[4]
    out["sizing_nccl_buffer_4"] = format_bytes(nccl, "MiB", decimals=0)
    return out


#: What ``book/sizing.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(overview.WORKED, sizing_numbers)
