"""Shared figure style: palette and figure factory."""

from matplotlib.figure import Figure

from lesson_lib.figures._style import PALETTE, ROLE_COLORS, new_figure


def test_new_figure_returns_figure_and_axes():
    """A Figure with exactly one axes, sized as asked."""
    fig, ax = new_figure(5, 3)
    assert isinstance(fig, Figure)
    assert fig.axes == [ax]
    assert tuple(fig.get_size_inches()) == (5, 3)


def test_roles_use_the_colour_blind_safe_palette():
    """Every role colour comes from the Okabe-Ito palette."""
    assert set(ROLE_COLORS.values()) <= set(PALETTE.values())
    assert ROLE_COLORS["fast"] != ROLE_COLORS["slow"]
