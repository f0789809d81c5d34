"""The goodput page's numbers: the queue check, price and energy by hand, and the claims its prose makes."""

import re

import pytest

from lesson_lib.chapters.goodput import goodput_numbers, goodput_table


@pytest.fixture(scope="module")
def numbers():
    return goodput_numbers()


def value(text: str) -> float:
    return float(re.match(r"[\d.,]+", text)[0].replace(",", ""))


def test_the_simulated_prefill_queue_waits_as_md1_says(numbers):
    """rho S / (2 (1 - rho)) with S = 75.92 ms, worked from the printed rho, and the simulation."""
    rho = value(numbers["gp_rho"]) / 100
    by_hand = rho * 75.92 / (2 * (1 - rho))
    assert value(numbers["gp_md1_wait"]) == pytest.approx(by_hand, rel=0.05)
    assert value(numbers["gp_sim_wait"]) == pytest.approx(value(numbers["gp_md1_wait"]), rel=0.05)


def test_price_and_energy_by_hand(numbers):
    """4 GPUs at 2.50 USD an hour over rate x 256 tokens x 3,600 s; 4 x 700 W over rate x 256."""
    rate = value(numbers["gp_co"])
    assert value(numbers["gp_cost"]) == pytest.approx(4 * 2.5 / (rate * 256 * 3600) * 1e6, rel=0.01)
    assert value(numbers["gp_energy"]) == pytest.approx(4 * 700 / (rate * 256), abs=0.06)


def test_the_order_the_prose_states(numbers):
    """Loose target: prefill first > chunked and > disaggregated per GPU; tight: disaggregated wins."""
    co, chunked, apart = (
        value(numbers[k]) for k in ("gp_co_gpu", "gp_chunked_gpu", "gp_apart_gpu")
    )
    assert co > chunked and co > apart
    assert value(numbers["gp_apart_tight_gpu"]) > value(numbers["gp_co_tight_gpu"])
    assert value(numbers["gp_apart_tight_gpu"]) == pytest.approx(apart)  # its TTFT binds, not TPOT
    assert (
        value(numbers["gp_seed_low"]) <= value(numbers["gp_co"]) <= value(numbers["gp_seed_high"])
    )


def test_the_table_lists_each_server_with_its_gpus():
    html = goodput_table()
    assert [int(n) for n in re.findall(r"</td><td>(\d+)</td>", html)][:3] == [4, 4, 8]
    assert html.count("<tr>") == 4
