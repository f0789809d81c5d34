"""The measured-latency figure: a row per system, the lesson's two lines, log microseconds."""

from lesson_lib.figures.measured import measured_latency_figure
from lesson_lib.measured import systems


def test_one_row_per_system_and_the_stated_latencies_drawn():
    """Ten labelled rows; dashed verticals at 10 and 50 us; points in microseconds."""
    fig = measured_latency_figure()
    (ax,) = fig.axes
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == len(systems()) == 10
    # names as people write them, not the data's folder names (a100_sxm, rtx_pro_6000_server)
    assert labels[-1] == "A100 SXM (NVLink)" and labels[0] == "RTX PRO 6000 Server (PCIe)"
    assert {"Arc Pro B60 (PCIe)", "GB200 (NVLink)", "L40S (PCIe)"} <= set(labels)
    assert not any("_" in label for label in labels)
    verticals = sorted(
        line.get_xdata()[0] for line in ax.get_lines() if line.get_linestyle() == "--"
    )
    assert verticals == [10.0, 50.0] or [round(v, 6) for v in verticals] == [10.0, 50.0]
    points = [line.get_xdata()[0] for line in ax.get_lines() if line.get_linestyle() == "None"]
    assert len(points) >= 30 and 1.5 < min(points) and max(points) < 150
    assert ax.get_xscale() == "log"
