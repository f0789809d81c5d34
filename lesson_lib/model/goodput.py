"""Goodput: the request rate a server sustains while its requests meet TTFT and TPOT targets.

A small discrete-event simulation of one serving engine, the stated queueing model: requests
arrive as a Poisson stream (seeded), each with a prompt of ``prompt_tokens`` and an answer of
``output_tokens``; step times are deterministic and come from the lesson's model. Three ways
to serve them:

* ``"colocated"``: one instance; a waiting prompt's whole prefill runs before the next decode
  step (prefill first), stalling every sequence in the batch;
* ``"chunked"``: one instance; each step carries every running sequence's token and up to
  ``step_tokens`` minus those of prompt (chunked prefill), its time the decode step's plus the
  prompt tokens' share of a whole prefill (an upper bound: the weights are read twice);
* ``"disaggregated"``: a prefill instance serves prompts first come, first served, then hands
  the cache to a decode instance on other GPUs, which admits it at its next step.

A request's TTFT runs from its arrival to its first token (the end of its prefill; disaggregated,
also its hand-off); its TPOT is the rest of its time over its other ``output_tokens - 1`` tokens.
Goodput is the highest arrival rate at which a share :data:`ATTAINMENT` of the requests meets
both targets (DistServe's definition). Seconds throughout.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from functools import cache
from itertools import islice

import numpy as np

from lesson_lib.model._validate import require_int, require_number

#: The ways to serve (see the module's text).
MODES: tuple[str, ...] = ("colocated", "chunked", "disaggregated")
#: Share of requests that must meet both targets, as DistServe holds its systems to 90 %.
ATTAINMENT: float = 0.9
#: Requests simulated per arrival rate; the first tenth warms the queue up and is not counted.
REQUESTS: int = 1000
#: Most sequences or requests the simulation accepts (a bound on input, not a physical limit).
MAX_COUNT: int = 1_000_000


@dataclass(frozen=True)
class Server:
    """One way to serve a workload: its step times, its memory and its GPUs."""

    #: One of :data:`MODES`.
    mode: str
    #: One prompt's whole prefill, seconds.
    prefill_s: float
    #: ``decode_s[b]``: one decode step for ``b`` running sequences, seconds (``decode_s[0]`` = 0).
    decode_s: tuple[float, ...]
    #: Prompt tokens per request.
    prompt_tokens: int
    #: Tokens each request generates, the first by its prefill (at least 2).
    output_tokens: int
    #: GPUs the server occupies, prefill instance included.
    gpus: int
    #: Tokens one chunked-prefill step may carry, decode tokens included.
    step_tokens: int = 0
    #: Seconds from a prefill's end to its first token on the decode side (disaggregated).
    handoff_s: float = 0.0

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        require_number("prefill_s", self.prefill_s, unit="s")
        require_number("handoff_s", self.handoff_s, unit="s")
        require_int("output_tokens", self.output_tokens, minimum=2, maximum=MAX_COUNT)
        require_int("prompt_tokens", self.prompt_tokens, maximum=MAX_COUNT)
        if len(self.decode_s) < 2 or self.decode_s[0] != 0:
            raise ValueError("decode_s must start with 0 (no sequence) and hold at least batch 1")
        if self.mode == "chunked" and self.step_tokens <= len(self.decode_s) - 1:
            raise ValueError(
                f"step_tokens must exceed the largest batch, {len(self.decode_s) - 1}, "
                f"so a prompt always moves; got {self.step_tokens}"
            )

    @property
    def max_batch(self) -> int:
        """Most sequences decoding at once (memory's limit)."""
        return len(self.decode_s) - 1


@dataclass(frozen=True)
class Trace:
    """What happened to each simulated request, seconds since the first arrival."""

    arrival: np.ndarray
    first: np.ndarray
    finish: np.ndarray

    @property
    def ttft(self) -> np.ndarray:
        """Each request's time to first token."""
        return self.first - self.arrival

    def tpot(self, output_tokens: int) -> np.ndarray:
        """Each request's mean time per output token after its first."""
        return (self.finish - self.first) / (output_tokens - 1)


def _same_steps(
    ends: list[tuple[int, int]], steps: int, t: float, step: float, event: float | None
) -> int:
    """Steps of length ``step`` from ``t`` until the first finish or until ``event`` has passed."""
    k = ends[0][0] - steps if ends else 1
    if event is not None and step > 0:
        k = min(k, max(1, math.ceil((event - t) / step)))
    return max(1, k)


def _colocated_or_chunked(server: Server, arrival: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = len(arrival)
    first, finish = np.zeros(n), np.zeros(n)
    ends: list[tuple[int, int]] = []  # (decode step at which it finishes, request)
    waiting: deque[int] = deque()
    left = [server.prompt_tokens] * n  # prompt tokens not yet prefilled
    t, steps, nxt, done = 0.0, 0, 0, 0
    while done < n:
        while nxt < n and arrival[nxt] <= t:
            waiting.append(nxt)
            nxt += 1
        running = len(ends)
        room = server.max_batch - running
        if not running and not waiting:
            t = arrival[nxt]
            continue
        started: list[int] = []
        if server.mode == "colocated" and waiting and room:
            started.append(waiting.popleft())
            t += server.prefill_s
        else:
            budget = server.step_tokens - running if server.mode == "chunked" else 0
            prompt = 0
            for i in list(islice(waiting, room)):
                use = min(budget, left[i])
                left[i], budget, prompt = left[i] - use, budget - use, prompt + use
                if left[i]:
                    break
                started.append(waiting.popleft())
            step = server.decode_s[running] + prompt * server.prefill_s / server.prompt_tokens
            # identical decode steps until the next arrival or finish are taken at once
            k = _same_steps(ends, steps, t, step, arrival[nxt] if nxt < n else None)
            k = 1 if started or prompt else k
            t += k * step
            steps += k * (running > 0)
            while ends and ends[0][0] <= steps:
                finish[heapq.heappop(ends)[1]] = t
                done += 1
        for i in started:
            first[i] = t
            heapq.heappush(ends, (steps + server.output_tokens - 1, i))
    return first, finish


def _disaggregated(server: Server, arrival: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = len(arrival)
    finish = np.zeros(n)
    # the prefill instance: first come, first served, one prompt at a time
    ready = np.zeros(n)
    free = 0.0
    for i, a in enumerate(arrival):
        free = max(free, a) + server.prefill_s
        ready[i] = free + server.handoff_s
    ends: list[tuple[int, int]] = []
    t, steps, nxt, done = 0.0, 0, 0, 0
    while done < n:
        while nxt < n and ready[nxt] <= t and len(ends) < server.max_batch:
            heapq.heappush(ends, (steps + server.output_tokens - 1, nxt))
            nxt += 1
        if not ends:
            t = ready[nxt]
            continue
        step = server.decode_s[len(ends)]
        room = nxt < n and len(ends) < server.max_batch
        k = _same_steps(ends, steps, t, step, ready[nxt] if room else None)
        t += k * step
        steps += k
        while ends and ends[0][0] <= steps:
            finish[heapq.heappop(ends)[1]] = t
            done += 1
    return ready, finish


def simulate(server: Server, rate: float, requests: int = REQUESTS, seed: int = 0) -> Trace:
    """Serve ``requests`` Poisson arrivals at ``rate`` per second and record each one's times.

    Parameters
    ----------
    server : Server
    rate : float
        Arrivals per second, > 0.
    requests : int, default :data:`REQUESTS`
        How many requests arrive, from 1 to :data:`MAX_COUNT`.
    seed : int, default 0
        Seed of the arrival times; the same seed gives the same arrivals scaled by ``1 / rate``.

    Returns
    -------
    Trace
    """
    rate = require_number("rate", rate, strict=True, unit="1/s")
    requests = require_int("requests", requests, maximum=MAX_COUNT)
    gaps = np.random.default_rng(seed).exponential(1.0, requests) / rate
    arrival = np.cumsum(gaps) - gaps[0]
    run = _disaggregated if server.mode == "disaggregated" else _colocated_or_chunked
    first, finish = run(server, arrival)
    return Trace(arrival, first, finish)


def attainment(server: Server, rate: float, ttft_s: float, tpot_s: float, seed: int = 0) -> float:
    """Share of requests, after the warm-up tenth, that meet both targets at ``rate``.

    Parameters
    ----------
    server : Server
    rate : float
        Arrivals per second, > 0.
    ttft_s, tpot_s : float
        The targets, seconds, > 0.
    seed : int, default 0

    Returns
    -------
    float
        From 0 to 1.
    """
    ttft_s = require_number("ttft_s", ttft_s, strict=True, unit="s")
    tpot_s = require_number("tpot_s", tpot_s, strict=True, unit="s")
    trace = simulate(server, rate, seed=seed)
    kept = slice(REQUESTS // 10, None)
    met = (trace.ttft[kept] <= ttft_s) & (trace.tpot(server.output_tokens)[kept] <= tpot_s)
    return float(met.mean())


@cache  # pure: a page's exercises ask again for what its text computed
def goodput(server: Server, ttft_s: float, tpot_s: float, seed: int = 0) -> float:
    """Highest arrival rate, requests per second, at which :data:`ATTAINMENT` meet both targets.

    Found by doubling, then bisection to 1 %; 0 if even a lone request misses a target.

    Parameters
    ----------
    server : Server
    ttft_s, tpot_s : float
        The targets, seconds, > 0.
    seed : int, default 0

    Returns
    -------
    float
    """
    lone = simulate(server, 1e-9, requests=1)
    if lone.ttft[0] > ttft_s or lone.tpot(server.output_tokens)[0] > tpot_s:
        return 0.0
    low, high = 0.0, 1.0 / (server.prefill_s + server.decode_s[1])
    while attainment(server, high, ttft_s, tpot_s, seed) >= ATTAINMENT:
        low, high = high, 2 * high
    while high - low > 0.01 * high:
        mid = (low + high) / 2
        if attainment(server, mid, ttft_s, tpot_s, seed) >= ATTAINMENT:
            low = mid
        else:
            high = mid
    return low


def per_output_token(rate: float, output_tokens: int, gpus: int, per_gpu_s: float) -> float:
    """What one output token costs when ``gpus`` GPUs, each costing ``per_gpu_s`` a second, serve ``rate``.

    With a price per GPU-hour / 3600 it is dollars a token (times 1e6: per million tokens);
    with a board's power in watts (joules a second), joules a token, an upper bound.

    Parameters
    ----------
    rate : float
        Requests per second served, > 0.
    output_tokens : int
        Tokens each request generates.
    gpus : int
        GPUs paid for and powered.
    per_gpu_s : float
        One GPU's cost per second, >= 0.

    Returns
    -------
    float
    """
    tokens_per_s = require_number("rate", rate, strict=True) * output_tokens
    return gpus * require_number("per_gpu_s", per_gpu_s) / tokens_per_s


def specimen_server(
    mode: str, prompt_tokens: int, output_tokens: int, tp: int = 4, step_tokens: int = 0
) -> Server:
    """The specimen served by ``tp`` fast-fabric GPUs per instance, step times from the lesson.

    Prefill: :func:`~lesson_lib.model.kv_transfer.prefill_time` (its causal attention
    included). Decode: :func:`~lesson_lib.model.step_time.decode_step` at the mean context
    ``prompt_tokens + output_tokens / 2``, for every batch up to what fits at the longest,
    ``prompt_tokens + output_tokens``. Disaggregated: a second instance of ``tp`` GPUs, the
    cache handed over by one NIC per GPU (:data:`~lesson_lib.model.kv_links.LINKS`, ``"nic"``).

    Parameters
    ----------
    mode : str
        One of :data:`MODES`.
    prompt_tokens, output_tokens : int
        The workload; ``output_tokens`` at least 2.
    tp : int, default 4
        Tensor-parallel GPUs of each instance.
    step_tokens : int, default 0
        Chunked prefill's tokens per step.

    Returns
    -------
    Server
    """
    from lesson_lib.model.kv_links import LINKS_BY_KEY, link_handoff
    from lesson_lib.model.memory import max_sequences
    from lesson_lib.model.specimen import FAST, GPU, MODEL
    from lesson_lib.model.step_time import decode_step

    fit = max_sequences(MODEL, GPU, tp, prompt_tokens + output_tokens)
    if mode == "chunked":  # as vLLM requires, fewer sequences than tokens per step
        fit = min(fit, step_tokens - 1)
    mean_context = prompt_tokens + output_tokens // 2
    steps = [
        decode_step(MODEL, GPU, FAST, tp, batch=b, context=mean_context) for b in range(1, fit + 1)
    ]
    both = link_handoff(LINKS_BY_KEY["nic"], prompt_tokens, tp, tp)
    apart = mode == "disaggregated"
    return Server(
        mode=mode,
        prefill_s=both.prefill.total_s,
        decode_s=(0.0, *(step.total_s for step in steps)),
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        gpus=2 * tp if apart else tp,
        step_tokens=step_tokens,
        handoff_s=both.bulk.time_s if apart else 0.0,
    )
