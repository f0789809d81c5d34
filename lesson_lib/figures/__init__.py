"""Figure builders: each returns a :class:`matplotlib.figure.Figure`.

One module per step of the lesson. Builders draw nothing globally (no
``pyplot`` state), so a figure made for a widget never leaks into a page.
"""
