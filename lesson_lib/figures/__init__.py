"""Figure builders: each returns a :class:`matplotlib.figure.Figure`.

One module per step of the lesson. Builders draw nothing globally (no
``pyplot`` state), so a figure made for one page never leaks into another.

A bare ``Figure`` has no rich display of its own: IPython shows it as a PNG
only once a backend has registered the formatter, which normally happens on
``import matplotlib.pyplot``. Importing this package inside IPython registers
it, so a chapter cell whose last expression is a built figure shows the
picture without ``%matplotlib inline``.
"""


def _register_png_formatter() -> None:
    try:
        from IPython import get_ipython
    except ImportError:  # plain Python: nothing to register
        return
    shell = get_ipython()
    if shell is None:
        return
    from IPython.core.pylabtools import select_figure_formats

    select_figure_formats(shell, {"png"})


_register_png_formatter()
