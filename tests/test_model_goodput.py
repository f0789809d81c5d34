"""Goodput's simulation against hand-worked cases, Little's law and the M/D/1 queue."""

import numpy as np
import pytest

from lesson_lib.model.goodput import (
    Server,
    _colocated_or_chunked,
    attainment,
    goodput,
    per_output_token,
    simulate,
    specimen_server,
)

#: A toy server: 0.1 s prefill of 100 tokens, decode steps of 10 ms plus 2 ms a sequence.
STEPS = (0.0, 0.010, 0.012, 0.014, 0.016)


def toy(mode="colocated", **kw):
    args = dict(
        mode=mode, prefill_s=0.1, decode_s=STEPS, prompt_tokens=100, output_tokens=3, gpus=4
    )
    return Server(**{**args, **kw})


def test_two_requests_colocated_by_hand():
    """Arrivals at 0 and 0.05 s: prefill to 0.1, the second prefill to 0.2, then two steps of 12 ms.

    Both finish at 0.2 + 2 x 0.012 = 0.224 s: TTFT 0.1 and 0.15 s, TPOT (0.224 - 0.1) / 2 = 0.062 s
    and (0.224 - 0.2) / 2 = 0.012 s.
    """
    first, finish = _colocated_or_chunked(toy(), np.array([0.0, 0.05]))
    np.testing.assert_allclose(first, [0.1, 0.2])
    np.testing.assert_allclose(finish, [0.224, 0.224])


def test_two_requests_chunked_by_hand():
    """Budget 60 tokens a step, 100-token prompts at 0 and 0.05 s (1 ms a prompt token).

    Step 1 (0 -> 0.060): 60 of r0. Step 2: r1 has arrived; r0's last 40 and 20 of r1, 0.060 s,
    r0's first token at 0.120. Step 3: r0 decodes (10 ms) beside 59 of r1 (59 ms): 0.189.
    Step 4: r0's second decode and r1's last 21 tokens, 0.031 s: r0 done and r1's first token
    at 0.220. Steps 5 and 6: r1 decodes alone, done at 0.240.
    """
    first, finish = _colocated_or_chunked(toy("chunked", step_tokens=60), np.array([0.0, 0.05]))
    np.testing.assert_allclose(first, [0.120, 0.220])
    np.testing.assert_allclose(finish, [0.220, 0.240])


@pytest.mark.parametrize(
    ("mode", "extra", "ttft"),
    [
        ("colocated", {}, 0.1),
        ("chunked", {"step_tokens": 200}, 0.1),
        ("disaggregated", {"handoff_s": 0.03}, 0.13),
    ],
)
def test_a_lone_request_pays_its_prefill_then_one_step_a_token(mode, extra, ttft):
    """With no one else, TTFT is the prefill (plus the hand-off) and TPOT the batch-1 step, 10 ms."""
    trace = simulate(toy(mode, **extra), 1e-9, requests=1)
    assert trace.ttft[0] == pytest.approx(ttft)
    assert trace.tpot(3)[0] == pytest.approx(0.010)


def test_disaggregated_prefill_queue_is_md1():
    """Pollaczek-Khinchine for deterministic service: mean wait rho S / (2 (1 - rho)).

    S = 0.1 s at 5 arrivals a second: rho = 0.5, wait 0.5 x 0.1 / (2 x 0.5) = 0.05 s. The decode
    side is fast and roomy, so TTFT - S is the prefill queue's wait.
    """
    server = toy("disaggregated", decode_s=(0.0, *([1e-4] * 64)))
    trace = simulate(server, 5.0, requests=40_000, seed=3)
    wait = trace.ttft[4000:] - 0.1
    assert wait.mean() == pytest.approx(0.05, rel=0.06)
    assert (wait < 1e-12).mean() == pytest.approx(0.5, abs=0.02)  # P(no wait) = 1 - rho


def test_littles_law_holds_on_the_trace():
    """Requests in the system, counted at random instants, equal arrival rate x time in system."""
    trace = simulate(specimen_server("colocated", 4096, 256), 4.0, requests=3000, seed=5)
    horizon = trace.arrival[-1]
    instants = np.random.default_rng(9).uniform(0, horizon, 20_000)
    inside = [np.sum((trace.arrival <= s) & (trace.finish > s)) for s in instants[:2000]]
    rate = len(trace.arrival) / horizon
    assert np.mean(inside) == pytest.approx(rate * np.mean(trace.finish - trace.arrival), rel=0.1)


def test_goodput_grows_with_looser_targets_and_is_zero_when_nothing_can_meet_them():
    server = toy(decode_s=(0.0, *np.linspace(0.010, 0.030, 20)))
    tight, loose = goodput(server, 0.3, 0.015), goodput(server, 0.6, 0.030)
    assert 0 < tight <= loose
    assert goodput(server, 0.05, 0.030) == 0.0  # the 0.1 s prefill alone misses 50 ms
    assert attainment(server, tight, 0.3, 0.015) >= 0.9


def test_cost_and_energy_by_hand():
    """1 request/s of 256 tokens on 4 GPUs: 921,600 tokens an hour.

    At 2.50 a GPU-hour: 10 / 921,600 x 1e6 = 10.85 per million; at 700 W: 2,800 / 256 = 10.94 J.
    """
    assert 1e6 * per_output_token(1.0, 256, 4, 2.5 / 3600) == pytest.approx(10.8507, rel=1e-4)
    assert per_output_token(1.0, 256, 4, 700) == pytest.approx(10.9375)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"mode": "both"}, "mode"),
        ({"prefill_s": -1.0}, "prefill_s"),
        ({"output_tokens": 1}, "output_tokens"),
        ({"decode_s": (0.01, 0.02)}, "decode_s"),
        ({"mode": "chunked", "step_tokens": 4}, "step_tokens"),
    ],
)
def test_bad_servers_are_refused_by_name(kwargs, name):
    with pytest.raises(ValueError, match=name):
        toy(**kwargs)


def test_bad_rates_and_targets_are_refused_by_name():
    with pytest.raises(ValueError, match="rate"):
        simulate(toy(), 0.0)
    with pytest.raises(ValueError, match="ttft_s"):
        attainment(toy(), 1.0, -0.1, 0.02)
