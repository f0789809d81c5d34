"""Live explorers: Vega-Lite charts whose controls pick states computed by ``lesson_lib``.

Each builder returns an :class:`~lesson_lib.explorers._base.Explorer`, which renders in JupyterLab
and on the static site alike, with no kernel.
"""
