"""Decode and prefill step times: roofline compute plus all-reduces."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy.testing import assert_allclose

from lesson_lib import Fabric, decode_step, prefill_step, speedup
from lesson_lib.model.specimen import FAST, GPU, MODEL, SLOW


def test_decode_terms():
    """Compute = weights / (n HBM); latency = 128 x alpha; bandwidth = 128 x wire / B."""
    s = decode_step(MODEL, GPU, FAST, 4)
    assert_allclose(s.compute_s, 54e9 / (4 * 3.35e12))
    assert_allclose(s.latency_s, 128 * 10e-6)
    assert_allclose(s.bandwidth_s, 128 * 1.5 * 10240 / 450e9)
    assert_allclose(s.total_s, s.compute_s + s.latency_s + s.bandwidth_s)
    assert_allclose(s.tokens_per_s, 1 / s.total_s)
    assert s.bound == "compute" and s.communication_bound == "latency"


def test_lesson_view_drops_only_bandwidth():
    """include_bandwidth=False zeroes the bandwidth term and nothing else."""
    a = decode_step(MODEL, GPU, SLOW, 4)
    b = decode_step(MODEL, GPU, SLOW, 4, include_bandwidth=False)
    assert b.bandwidth_s == 0
    assert (a.compute_s, a.latency_s) == (b.compute_s, b.latency_s)


def test_single_gpu_has_no_communication():
    """n = 1: no all-reduces."""
    s = decode_step(MODEL, GPU, SLOW, 1)
    assert s.communication_s == 0
    assert_allclose(s.total_s, 54e9 / 3.35e12)


def test_prefill_is_flop_bound_on_compute_side():
    """A 4,096-token prompt makes the arithmetic exceed weight streaming."""
    s = prefill_step(MODEL, GPU, FAST, 4, 4096)
    assert s.flops_s > s.weights_s
    assert_allclose(s.flops_s, 2 * 27e9 * 4096 / (4 * 989e12))
    assert s.tokens == 4096
    assert_allclose(s.tokens_per_s, 4096 / s.total_s)


def test_speedup():
    """Speed-up is before / after: 2 -> 4 fast GPUs is 9.34 / 5.31 = 1.76x, not its inverse."""
    two = decode_step(MODEL, GPU, FAST, 2, include_bandwidth=False)
    four = decode_step(MODEL, GPU, FAST, 4, include_bandwidth=False)
    assert speedup(two, two) == 1.0
    by_hand = (27e9 / 3.35e12 + 128 * 10e-6) / (13.5e9 / 3.35e12 + 128 * 10e-6)
    assert_allclose(speedup(two, four), by_hand)
    assert round(speedup(two, four), 2) == 1.76


@given(
    n=st.integers(min_value=2, max_value=16),
    latency=st.floats(min_value=0, max_value=1e-3),
    extra=st.floats(min_value=1e-9, max_value=1e-3),
    bandwidth=st.floats(min_value=1e8, max_value=1e13),
)
def test_costs_never_fall_when_latency_rises_or_bandwidth_falls(n, latency, extra, bandwidth):
    """Worse wire, never faster steps, for decode and prefill."""
    base = Fabric("a", latency, bandwidth)
    worse_lat = Fabric("b", latency + extra, bandwidth)
    worse_bw = Fabric("c", latency, bandwidth / 2)
    for step in (
        lambda f: decode_step(MODEL, GPU, f, n),
        lambda f: prefill_step(MODEL, GPU, f, n, 512),
    ):
        assert step(worse_lat).total_s >= step(base).total_s
        assert step(worse_bw).total_s >= step(base).total_s


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda: decode_step(MODEL, GPU, FAST, 0), ValueError, "n must be"),
        (lambda: decode_step(MODEL, GPU, FAST, 2.5), TypeError, "n must be"),
        (lambda: decode_step(MODEL, GPU, FAST, False), TypeError, "n must be"),
        (lambda: prefill_step(MODEL, GPU, FAST, 2, 0), ValueError, "prompt_tokens"),
        (lambda: prefill_step(MODEL, GPU, FAST, 2, 10**7), ValueError, "prompt_tokens"),
        (lambda: decode_step(MODEL, GPU, FAST, 2, batch=0), ValueError, "batch must be"),
        (lambda: decode_step(MODEL, GPU, FAST, 2, batch=10**6), ValueError, "batch must be"),
        (lambda: decode_step(MODEL, GPU, FAST, 2, batch=2.0), TypeError, "batch must be"),
        (lambda: decode_step(MODEL, GPU, FAST, 2, context=-1), ValueError, "context must be"),
        (lambda: decode_step(MODEL, GPU, FAST, 2, context=10**9), ValueError, "context must be"),
        (lambda: decode_step(MODEL, GPU, FAST, 2, algorithm="tree"), ValueError, "algorithm"),
        (lambda: prefill_step(MODEL, GPU, FAST, 2, 8, algorithm="x"), ValueError, "algorithm"),
        (lambda: decode_step(MODEL, GPU, FAST, 10**30), ValueError, "n must be"),
        (lambda: decode_step("MODEL", GPU, FAST, 2), TypeError, "model must be a ModelSpec"),
        (lambda: decode_step(MODEL, FAST, FAST, 2), TypeError, "accel must be an? Accelerator"),
        (lambda: decode_step(MODEL, GPU, GPU, 2), TypeError, "fabric must be a Fabric"),
        (lambda: prefill_step(None, GPU, FAST, 2, 8), TypeError, "model must be a ModelSpec"),
    ],
)
def test_bad_input(call, error, name):
    """Bad n or prompt length names the parameter and range."""
    with pytest.raises(error, match=name):
        call()


# --- batched decode, context reads, all-reduce algorithm -----------------------------------------


def test_default_decode_is_the_lesson_arithmetic():
    """batch=1, context=None, ring: the seed's 9.34 / 5.31 / 10.43 ms, by hand."""
    for n, alpha, want in ((2, 10e-6, 9.34e-3), (4, 10e-6, 5.31e-3), (4, 50e-6, 10.43e-3)):
        got = decode_step(MODEL, GPU, Fabric("f", alpha, 1e12), n, include_bandwidth=False)
        assert round(got.total_s, 5) == round(want, 5)


def test_batch_carries_one_vector_per_sequence():
    """A batch of 64 on 2 GPUs: each all-reduce carries 64 x 10 KiB; weights read once."""
    one = decode_step(MODEL, GPU, FAST, 2)
    b = decode_step(MODEL, GPU, FAST, 2, batch=64)
    assert b.weights_s == one.weights_s
    assert_allclose(b.bandwidth_s, 128 * 64 * 10240 / 450e9)
    assert b.latency_s == one.latency_s
    assert b.tokens == b.sequences == 64
    assert_allclose(b.tokens_per_s, 64 / b.total_s)
    assert_allclose(b.tokens_per_s_per_sequence, 1 / b.total_s)


def test_batch_crossover_by_hand():
    """Bandwidth term equals latency term at alpha B / (f x 10 KiB): 439.45 tokens at N = 2."""
    tokens = 10e-6 * 450e9 / 10240
    s = decode_step(MODEL, GPU, FAST, 2, batch=round(tokens))
    assert_allclose(s.bandwidth_s, s.latency_s, rtol=2e-3)


def test_full_context_kv_read_by_hand():
    """At 262,144 tokens on 4 GPUs one sequence reads 4 GiB of KV and reads and writes a
    quarter of its state: (4 GiB + 2 x 153,944,064 B / 4) / 3.35 TB/s = 1.3051 ms."""
    s = decode_step(MODEL, GPU, FAST, 4, context=262_144)
    state = 48 * (48 * 128 * 128 * 4 + (2 * 16 * 128 + 48 * 128) * 3 * 2)  # bytes, whole model
    assert state == 153_944_064
    want = (4 * 2**30 + 2 * state / 4) / 3.35e12
    assert_allclose(s.kv_read_s, want)
    assert_allclose(s.kv_read_s, 1.3051e-3, rtol=1e-4)
    # one sequence: both phases memory-bound, so compute is the two reads in turn
    assert_allclose(s.compute_s, s.weights_s + s.kv_read_s)


def test_context_zero_reads_and_writes_only_state():
    """An empty context still reads the fixed recurrent state and writes it back, and no KV."""
    s = decode_step(MODEL, GPU, FAST, 4, context=0)
    assert_allclose(s.kv_read_s * 3.35e12, 2 * MODEL.state_bytes / 4)


def test_large_batch_roofline_per_phase_by_hand():
    """676 sequences of 4,096 tokens on TP 4, fast fabric: about 15,890 tokens/s.

    By hand, per rank (H100: 3.35 TB/s, 989 TFLOP/s; 27e9 parameters; 10 us, 450 GB/s):
    - GEMMs: weights 54e9 / 4 / 3.35e12 = 4.0299 ms; FLOPs 2 x 27e9 x 676 / 4 / 989e12
      = 9.2275 ms, so the GEMM phase is compute-bound: 9.2275 ms;
    - attention: KV 268,435,456 B + state read and written 2 x 153,944,064 B, a quarter
      each, x 676 = 97.406 GB / 3.35e12 = 29.076 ms; its FLOPs 4 x 16 x 24 x 256 x 4096
      x 676 / 4 / 989e12 = 0.2752 ms, so memory-bound: 29.076 ms;
    - all-reduces: 128 x 10 us = 1.28 ms, and 128 x 1.5 x 676 x 10,240 B / 450e9
      = 2.9535 ms.
    Total 42.537 ms for 676 tokens: 15,892 tokens/s. One roofline over the whole step
    would have hidden the GEMMs behind the reads: max(4.03 + 29.08, 9.50) = 33.11 ms.
    """
    s = decode_step(MODEL, GPU, FAST, 4, batch=676, context=4096)
    assert_allclose(s.gemm_s, 9.2275e-3, rtol=1e-4)
    assert_allclose(s.attention_s, 29.076e-3, rtol=1e-4)
    assert_allclose(s.attention_flops_s, 0.2752e-3, rtol=1e-3)
    assert_allclose(s.compute_s, 9.2275e-3 + 29.076e-3, rtol=1e-4)
    assert_allclose(s.bandwidth_s, 2.9535e-3, rtol=1e-4)
    assert_allclose(s.tokens_per_s, 15_892, rtol=1e-3)


def test_gemms_turn_compute_bound_above_295_tokens_a_step():
    """Weights 54e9 / 3.35e12 equal 2 x 27e9 x b / 989e12 at b = 295.2 (any TP degree)."""
    for n in (1, 4):
        below = decode_step(MODEL, GPU, FAST, n, batch=295)
        above = decode_step(MODEL, GPU, FAST, n, batch=296)
        assert below.gemm_s == below.weights_s > below.gemm_flops_s
        assert above.gemm_s == above.gemm_flops_s > above.weights_s


def test_algorithm_changes_latency_and_bytes():
    """On a per-hop fabric one-shot beats the ring's latency at N = 8 and sends 4x the bytes."""
    from lesson_lib.model.specimen import FAST_RING

    ring = decode_step(MODEL, GPU, FAST_RING, 8)
    one = decode_step(MODEL, GPU, FAST_RING, 8, algorithm="one_shot")
    assert one.latency_s < ring.latency_s
    assert_allclose(one.bandwidth_s, 4 * ring.bandwidth_s)


@given(
    n=st.sampled_from([1, 2, 4, 8]),
    batch=st.integers(min_value=1, max_value=4095),
    step=st.integers(min_value=1, max_value=4096),
    algorithm=st.sampled_from(["ring", "two_shot", "one_shot"]),
)
def test_time_never_falls_as_batch_grows(n, batch, step, algorithm):
    """More sequences in a step never make the step shorter."""
    a = decode_step(MODEL, GPU, FAST, n, batch=batch, context=1000, algorithm=algorithm)
    b = decode_step(MODEL, GPU, FAST, n, batch=batch + step, context=1000, algorithm=algorithm)
    assert b.total_s >= a.total_s


@given(
    n=st.sampled_from([1, 2, 4, 8]),
    context=st.integers(min_value=0, max_value=262_143),
    more=st.integers(min_value=1, max_value=262_144),
    batch=st.integers(min_value=1, max_value=256),
)
def test_time_never_falls_as_context_grows(n, context, more, batch):
    """Longer contexts never make the step shorter; no context is never slower than some."""
    longer = min(context + more, 262_144)
    a = decode_step(MODEL, GPU, SLOW, n, batch=batch, context=context)
    b = decode_step(MODEL, GPU, SLOW, n, batch=batch, context=longer)
    assert b.total_s >= a.total_s
    assert decode_step(MODEL, GPU, SLOW, n, batch=batch).total_s <= a.total_s


def test_speedup_is_the_old_time_over_the_new_by_hand():
    """10 ms per token before, 4 ms after: 2.5 times faster, not 0.4 (direction matters)."""
    from lesson_lib.model.step_time import StepBreakdown

    slow = StepBreakdown(
        compute_s=8e-3, latency_s=2e-3, bandwidth_s=0.0, tokens=1, weights_s=8e-3, flops_s=0.0
    )
    fast = StepBreakdown(
        compute_s=3e-3, latency_s=1e-3, bandwidth_s=0.0, tokens=1, weights_s=3e-3, flops_s=0.0
    )
    assert slow.total_s == pytest.approx(10e-3) and fast.total_s == pytest.approx(4e-3)
    assert speedup(slow, fast) == pytest.approx(2.5)
    assert speedup(fast, slow) == pytest.approx(0.4)


def test_attention_flops_over_the_context_by_hand():
    """8 sequences at 262,144 tokens on 4 GPUs: 2 x 27e9 x 8 FLOPs of weights plus
    4 x 16 layers x 24 query heads x 256 x 262,144 tokens x 8 of attention, over 4 x 989 TFLOP/s."""
    s = decode_step(MODEL, GPU, FAST, 4, batch=8, context=262_144)
    flops = 2 * 27e9 * 8 + 4 * 16 * 24 * 256 * 262_144 * 8
    assert_allclose(s.flops_s, flops / (4 * 989e12))


def test_attention_flops_use_kv_heads_when_query_heads_are_not_given():
    """A model without num_query_heads counts its KV heads: 4 x 80 x 8 x 128 x 1000 FLOPs."""
    from lesson_lib import ModelSpec

    dense = ModelSpec("dense", 70e9, 8192, 80, 80, 8, 128, 131072)
    s = decode_step(dense, GPU, FAST, 1, context=1000)
    assert_allclose(s.flops_s, (2 * 70e9 + 4 * 80 * 8 * 128 * 1000) / 989e12)


def test_prefill_is_one_sequence():
    """A prefill step holds one sequence, so per-sequence throughput is the whole throughput."""
    s = prefill_step(MODEL, GPU, FAST, 4, 4096)
    assert s.sequences == 1
    assert s.tokens_per_s_per_sequence == s.tokens_per_s


@pytest.mark.parametrize("flag", [None, 1, "yes"])
def test_include_bandwidth_is_true_or_false(flag):
    """A flag that is not a bool is refused, not read as true or false."""
    with pytest.raises(TypeError) as info:
        decode_step(MODEL, GPU, FAST, 2, include_bandwidth=flag)
    assert str(info.value) == f"include_bandwidth must be a bool, got {type(flag).__name__}"


def test_attention_pair_flops_by_hand():
    """One query-key pair of one layer: 2 x 2 x 24 query heads x 256 = 24,576 FLOPs for the
    specimen; a model that names no query heads counts its 8 KV heads: 4 x 8 x 128 = 4,096."""
    from lesson_lib import ModelSpec
    from lesson_lib.model.step_time import attention_pair_flops

    assert attention_pair_flops(MODEL) == 24_576
    dense = ModelSpec("dense", 70e9, 8192, 80, 80, 8, 128, 131072)
    assert attention_pair_flops(dense) == 4_096


@pytest.mark.parametrize(
    ("compute", "latency", "bandwidth", "bound"),
    [
        (3e-3, 1e-3, 2e-3, "compute"),
        (1e-3, 3e-3, 2e-3, "latency"),
        (1e-3, 2e-3, 3e-3, "bandwidth"),
        (2e-3, 2e-3, 1e-3, "compute"),  # a tie goes to the term named first
        (1e-3, 2e-3, 2e-3, "latency"),
    ],
)
def test_bound_is_the_largest_term_and_a_tie_the_first(compute, latency, bandwidth, bound):
    """Three terms made by hand: the bound names the largest, and of two equal ones the first
    of compute, latency, bandwidth; communication is latency + bandwidth (1 + 2 = 3 ms ...)."""
    from lesson_lib.model.step_time import StepBreakdown

    step = StepBreakdown(
        compute_s=compute,
        latency_s=latency,
        bandwidth_s=bandwidth,
        tokens=1,
        weights_s=compute,
        flops_s=0.0,
    )
    assert step.bound == bound
    assert step.communication_s == latency + bandwidth


def test_both_step_kinds_share_one_sum():
    """The lesson's step and the MoE step are StepTerms: one definition of total and bound."""
    from lesson_lib.model.moe import MoEStep
    from lesson_lib.model.step_time import StepBreakdown, StepTerms

    assert issubclass(StepBreakdown, StepTerms) and issubclass(MoEStep, StepTerms)
