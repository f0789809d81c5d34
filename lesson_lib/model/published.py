"""Small-message all-reduce latencies that public GitHub threads report, with sources.

The book sets the lesson's assumed 10 us and 50 us beside them. Each record was read in its thread;
times are as the reporter printed them (nccl-tests' ``all_reduce_perf`` out-of-place time unless the
note says otherwise), under conditions the notes name (algorithm forced, CUDA graphs, NCCL version).
Nothing here is a vendor figure.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from lesson_lib.model.specimen import FAST, GPU, MODEL, SLOW
from lesson_lib.model.step_time import decode_step, speedup
from lesson_lib.model.units import US, format_count, format_ratio, format_seconds

#: The tuned Hopper time the B200 thread (NVIDIA/nccl issue 1940) also reports, "about 2.3 us" for
#: an 8-byte all-reduce on 8x H800 or 8x H200 servers with the tuning that gave about 3 us on 8x
#: B200. Kept beside the table, not in it: the thread gives one figure for two kinds of server.
TUNED_HOPPER_LATENCY: float = 2.3 * US

#: Fabric classes used to group the records.
FABRIC_CLASSES: tuple[str, ...] = ("NVLink", "PCIe", "NVLink + network")


@dataclass(frozen=True)
class PublishedLatency:
    """One reported all-reduce time for a tiny message."""

    #: The machine as the thread describes it.
    system: str
    #: The wire between the ranks, as far as the thread says.
    fabric: str
    #: One of :data:`FABRIC_CLASSES`.
    fabric_class: str
    ranks: int
    #: Size of the all-reduced buffer, bytes.
    message_bytes: int
    #: Reported time of one all-reduce, seconds.
    latency_s: float
    #: URL of the public thread.
    source: str
    #: Conditions of the measurement and how the number was read.
    note: str


_NCCL_TESTS_123 = "https://github.com/NVIDIA/nccl-tests/issues/123"
_ISSUE_123_NOTE = (
    "NCCL_ALGO=Ring, NCCL_MAX_NCHANNELS=1, sweep of 8-128 B; the reporter's table "
    "gives one time per GPU count; a maintainer confirms the ring's latency is "
    "2(N-1) times the slowest hop's"
)
_DGX_A100 = "DGX-A100 (A100 GPUs, one node)"
_NVSWITCH = "NVLink through NVSwitch"

#: What the threads report, smallest message sizes only.
PUBLISHED: tuple[PublishedLatency, ...] = (
    PublishedLatency(
        _DGX_A100, _NVSWITCH, "NVLink", 2, 8, 10 * US, _NCCL_TESTS_123, _ISSUE_123_NOTE
    ),
    PublishedLatency(
        _DGX_A100, _NVSWITCH, "NVLink", 4, 8, 16.88 * US, _NCCL_TESTS_123, _ISSUE_123_NOTE
    ),
    PublishedLatency(
        _DGX_A100, _NVSWITCH, "NVLink", 8, 8, 33.7 * US, _NCCL_TESTS_123, _ISSUE_123_NOTE
    ),
    PublishedLatency(
        "8x A100-SXM4-40GB server",
        "NVLink (the reporter compares with NVLink bandwidth)",
        "NVLink",
        2,
        32,
        10.14 * US,
        "https://github.com/NVIDIA/nccl/issues/583",
        "all_reduce_perf -g 2, default algorithm; 32 B is the sweep's smallest size",
    ),
    PublishedLatency(
        "HGX 8x H100, NCCL 2.20.5",
        "NVLink through NVSwitch (NVLSTree forced, in effect a ring on one node)",
        "NVLink",
        2,
        128,
        6 * US,
        "https://github.com/NVIDIA/nccl/issues/1259",
        "CUDA graphs on; the reporter summarises 128 B-64 KiB as 'approximately 6us', "
        "and later in the thread finds that NCCL_ALGO=Ring gives the same times, so "
        "no in-switch reduction was measured",
    ),
    PublishedLatency(
        "8x B200 server, NCCL 2.27",
        "NVLink through NVSwitch",
        "NVLink",
        8,
        8,
        3 * US,
        "https://github.com/NVIDIA/nccl/issues/1940",
        "best after tuning, with NCCL's symmetric-memory kernels; 'around 3 us' as the "
        "reporter words it; rank count read from the 8-GPU server the thread describes; "
        "the same tuning gives about 2.3 us on 8x H800 or 8x H200 servers",
    ),
    PublishedLatency(
        "8x GeForce RTX 4090, one host",
        "PCIe only (no NVLink)",
        "PCIe",
        8,
        8,
        43.47 * US,
        "https://github.com/NVIDIA/nccl/issues/1530",
        "all_reduce_perf -g 8, default algorithm, 200 iterations; forcing Tree gave 42.56 us",
    ),
    PublishedLatency(
        "2 nodes x 8 H20 (16 GPUs), NCCL 2.21.5",
        "NVLink in each node, InfiniBand NDR between nodes (NVLSTree)",
        "NVLink + network",
        16,
        4,
        47.54 * US,
        "https://github.com/NVIDIA/nccl/issues/1244",
        "NCCL_ALGO=NVLSTree; 4 B is the sweep's smallest size",
    ),
)


def _published_rows(records: tuple[PublishedLatency, ...]) -> list[tuple[str, ...]]:
    """The records as display strings, one tuple per record."""
    return [
        (
            r.system,
            r.fabric,
            format_count(r.ranks),
            f"{format_count(r.message_bytes)} B",
            format_seconds(r.latency_s, "us"),
            # "NVIDIA/nccl issue 583": with spaces, so a narrow column may wrap it
            r.source.removeprefix("https://github.com/").replace("/issues/", " issue "),
            r.note,
        )
        for r in records
    ]


def published_table(
    records: tuple[PublishedLatency, ...] = PUBLISHED, caption: str | None = None
) -> str:
    """An HTML table of the records, each row naming its source thread.

    Parameters
    ----------
    records : tuple of PublishedLatency, default :data:`PUBLISHED`
    caption : str, optional

    Returns
    -------
    str
    """
    from lesson_lib.model.tables import html_table

    header = (
        "system",
        "fabric",
        "GPUs",
        "message",
        "reported time",
        "source (GitHub)",
        "conditions",
    )
    return html_table(header, _published_rows(records), caption)


def published_numbers(records: tuple[PublishedLatency, ...] = PUBLISHED) -> dict[str, str]:
    """Strings the latency chapter glues from the records.

    Parameters
    ----------
    records : tuple of PublishedLatency, default :data:`PUBLISHED`

    Returns
    -------
    dict of str to str
        The 2-GPU NVLink range, nccl-tests issue 123 at 2, 4 and 8 GPUs, the PCIe box, the
        cross-node run, the fastest, the count; the lesson's decode lines at the PCIe record's
        latency; its two-to-four fast speed-up at the fastest and tuned Hopper times (no bytes).
    """

    def us(seconds: float) -> str:
        return format_seconds(seconds, "us")

    two = [r.latency_s for r in records if r.ranks == 2 and r.fabric_class == "NVLink"]
    ring = {r.ranks: r.latency_s for r in records if r.source == _NCCL_TESTS_123}
    pcie = [r for r in records if r.fabric_class == "PCIe"]
    network = [r for r in records if r.fabric_class == "NVLink + network"]
    return {
        "pub_2gpu_low": us(min(two)),
        "pub_2gpu_high": us(max(two)),
        "pub_ring_2": us(ring[2]),
        "pub_ring_4": us(ring[4]),
        "pub_ring_8": us(ring[8]),
        "pub_pcie_8": us(pcie[0].latency_s),
        "pub_pcie_ranks": format_count(pcie[0].ranks),
        "pub_network": us(network[0].latency_s),
        "pub_network_ranks": format_count(network[0].ranks),
        "pub_fastest": us(min(r.latency_s for r in records)),
        "pub_count": format_count(len(records)),
        **_pcie_reading(pcie[0].latency_s),
        "pub_tuned_hopper": us(TUNED_HOPPER_LATENCY),
        "pub_fastest_speedup_2_to_4": _fast_speedup_2_to_4(min(r.latency_s for r in records)),
        "pub_tuned_hopper_speedup_2_to_4": _fast_speedup_2_to_4(TUNED_HOPPER_LATENCY),
    }


def _fast_speedup_2_to_4(latency_s: float) -> str:
    """The lesson's two-to-four speed-up on the fast fabric at another fixed latency."""
    tuned = replace(FAST, latency=latency_s)
    two, four = (decode_step(MODEL, GPU, tuned, n, include_bandwidth=False) for n in (2, 4))
    return format_ratio(speedup(two, four))


def _pcie_reading(latency_s: float) -> dict[str, str]:
    """The lesson's four slow GPUs re-priced at a measured PCIe latency."""
    measured = replace(SLOW, latency=latency_s)
    one, two_fast, four = (
        decode_step(MODEL, GPU, fabric, n, include_bandwidth=False)
        for fabric, n in ((FAST, 1), (FAST, 2), (measured, 4))
    )
    return {
        "pub_pcie_line_4": format_seconds(four.total_s, "ms"),
        "pub_pcie_vs_fast_2": format_ratio(four.total_s / two_fast.total_s),
        "pub_pcie_speedup_1_to_4": format_ratio(speedup(one, four)),
    }


def source_links(records: tuple[PublishedLatency, ...] = PUBLISHED) -> str:
    """A Markdown bullet list linking each distinct source thread once.

    Parameters
    ----------
    records : tuple of PublishedLatency, default :data:`PUBLISHED`

    Returns
    -------
    str
        One ``- [owner/repo#number](url): system`` line per source, in the records' order.
    """
    lines: list[str] = []
    seen: set[str] = set()
    for r in records:
        if r.source in seen:
            continue
        seen.add(r.source)
        owner_repo, _, number = r.source.removeprefix("https://github.com/").partition("/issues/")
        lines.append(f"- [{owner_repo}#{number}]({r.source}): {r.system}")
    return "\n".join(lines)
