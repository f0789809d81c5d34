"""Figure builders: each returns a :class:`matplotlib.figure.Figure`.

Builders touch no ``pyplot`` state. Importing this package inside IPython
registers the PNG formatter for a bare ``Figure``, so a chapter cell whose last
expression is a figure shows it without ``%matplotlib inline``.
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
