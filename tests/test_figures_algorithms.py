"""Algorithm figures: lines per algorithm, flat one-shot, marks at the right sizes."""

from numpy.testing import assert_allclose

from lesson_lib.figures.algorithms import (
    allreduce_anatomy_figure,
    latency_by_n_figure,
    time_by_size_figure,
)


def test_latency_lines():
    """Three lines; the ring's rises by 2 hops (3.45 us) per GPU, one-shot's is flat at 8.275 us."""
    ax = latency_by_n_figure().axes[0]
    ring, two, one = ax.get_lines()
    assert_allclose(ring.get_ydata()[1] - ring.get_ydata()[0], 2 * 1.725)
    assert_allclose(one.get_ydata(), 8.275)
    assert_allclose(two.get_ydata(), 10.0)
    assert "us" in ax.get_ylabel()


def test_size_marks():
    """Vertical marks at 10 KiB (decode), the model's 144 KiB tie and vLLM's 256 KiB at N = 8."""
    ax = time_by_size_figure().axes[0]
    xs = [line.get_xdata()[0] for line in ax.get_lines()[3:]]
    assert_allclose(xs, [10, 1.725e-6 * 450e9 / 5.25 / 1024, 256])
    assert "KiB" in ax.get_xlabel()


def test_anatomy_bar_and_its_key():
    """Four parts adding to 10.02 us: 3 us launch, 3.55 us fixed, 3.45 us hops, 0.02 us bytes."""
    (ax,) = allreduce_anatomy_figure().axes
    widths = [p.get_width() for p in ax.patches]
    assert_allclose(widths, [3.0, 3.55, 3.45, 0.02], atol=0.006)
    assert_allclose(sum(widths), 10.02, atol=0.006)
    legend = [t.get_text().replace("\n", " ") for t in ax.get_legend().get_texts()]
    assert any("3 us" in t for t in legend)
    # Only the bytes' part, 0.02 of 10.02 us (under 1/200 of the bar), is said to be too thin.
    assert [t for t in legend if "too thin" in t] == [
        "bytes on the wire: 0.02 us (too thin to see)"
    ]
