"""The model every chapter computes with: specs, units, the specimen and the cost laws.

:mod:`~lesson_lib.model.specs` defines a model, an accelerator and a fabric;
:mod:`~lesson_lib.model.specimen` holds the worked example's inputs with their sources;
:mod:`~lesson_lib.model.units` formats numbers; the rest are cost and fit rules, one topic each.
"""
