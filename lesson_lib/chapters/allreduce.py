"""The all-reduce page: the specimen's all-reduces and partial sums (:mod:`lesson_lib.model.tensor_parallel`)."""

from __future__ import annotations

from lesson_lib.chapters import overview
from lesson_lib.chapters.glue import GlueTable
from lesson_lib.model._validate import require_instance
from lesson_lib.model.collectives import allreduce_wire_bytes, ring_allreduce_factor
from lesson_lib.model.specimen import MODEL
from lesson_lib.model.specs import ModelSpec
from lesson_lib.model.tensor_parallel import edge_collectives, simulate_hidden_allreduce
from lesson_lib.model.units import format_bytes, format_count


def allreduce_numbers(model: ModelSpec = MODEL) -> dict[str, str]:
    """The allreduce chapter's numbers beyond :func:`~lesson_lib.chapters.overview.worked_example_numbers`.

    Parameters
    ----------
    model : ModelSpec, default the specimen

    Returns
    -------
    dict of str to str
        For example ``allreduce_numbers()["ar_num_layers"] == "64"``.
    """
    require_instance("model", model, ModelSpec)
    payload = model.hidden_vector_bytes
    ring4 = simulate_hidden_allreduce(model, 4)
    return {
        "ar_num_layers": str(model.num_layers),
        "ar_per_layer": str(model.allreduces_per_layer),
        "ar_hidden_size": format_count(model.hidden_size),
        "ar_dtype_bytes": str(model.dtype_bytes),
        "ar_attention_layers": str(model.num_attention_layers),
        "ar_deltanet_layers": str(model.num_linear_layers),
        "ar_steps_4": str(len(ring4.steps)),
        "ar_chunk_4": format_bytes(ring4.chunk_bytes[0], "KiB"),
        "ar_sent_4": format_bytes(max(ring4.bytes_sent), "KiB"),
        "ar_sent_4_bytes": format_count(max(ring4.bytes_sent)),
        "ar_factor_16": format_count(ring_allreduce_factor(16), decimals=3),
        "ar_limit": format_bytes(2 * payload, "KiB"),
        **_edge_numbers(model),
    }


def _edge_numbers(model: ModelSpec) -> dict[str, str]:
    if model.vocab_size is None:
        return {}
    (_, embed, _), (_, logits, logits_wire_4) = edge_collectives(model, 4)
    layers_wire_4 = model.allreduces_per_token * allreduce_wire_bytes(model.hidden_vector_bytes, 4)
    return {
        "ar_vocab": format_count(model.vocab_size),
        "ar_embed_payload": format_bytes(embed, "KiB"),
        "ar_logits_payload": format_bytes(logits, "KiB", decimals=0),
        "ar_logits_wire_4": format_bytes(logits_wire_4, "KiB", decimals=0),
        "ar_collectives_all": str(model.allreduces_per_token + 2),
        "ar_logits_share_4": format_count(100 * logits_wire_4 / layers_wire_4, decimals=0) + " %",
    }


#: What ``book/allreduce.md`` glues (:func:`lesson_lib.chapters.glue.chapter_numbers`).
GLUE = GlueTable(overview.WORKED, allreduce_numbers)
