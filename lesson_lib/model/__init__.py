"""The model every chapter computes with: specs, units, the specimen and the cost laws.

:mod:`~lesson_lib.model.specs` says what a model, an accelerator and a fabric
are; :mod:`~lesson_lib.model.specimen` holds the worked example's inputs, each
with its source; :mod:`~lesson_lib.model.units` is the one place numbers are
formatted; :mod:`~lesson_lib.model.collectives`,
:mod:`~lesson_lib.model.ring`, :mod:`~lesson_lib.model.memory`,
:mod:`~lesson_lib.model.step_time` and :mod:`~lesson_lib.model.layout` are the
cost and fit rules; :mod:`~lesson_lib.model.kv_transfer` prices a request's KV
cache on the wire between prefill and decode GPUs and
:mod:`~lesson_lib.model.context_parallel` context parallelism;
:mod:`~lesson_lib.model.published` holds measured latencies with their sources.
"""
