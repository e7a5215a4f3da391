#!/usr/bin/env python3
"""The call loop's bench scenario as a plain-Python heapq program: the peer that
`cargo bench --features bench --bench callloop` measures herd-sim's call loop against
(docs/performance.md).

The model is herd-sim's (src/engine/calls): client processes start calls as Poisson streams
sharing `--rate` over [0, `--duration`); an attempt reaches the server at once (no network
delay) and is served by one of `--workers` workers, first come first served, for an
exponential service time, the queue unlimited; the answer is read at once; an attempt
unanswered `--timeout` after it was sent is abandoned (its late answer ignored, the server
still doing the work) and the call retries with full jitter, waiting U(0, min(cap, base *
multiplier^(k-1))) before retry k, up to `--retries` retries. Events at one time run in the
order they were scheduled (a sequence number in the heap entry), as in herd-sim.

It draws its own random numbers (Python's Mersenne Twister, one generator a process), so it
agrees with herd-sim within noise, not digit for digit: `--check BINARY` runs both over a few
seeds and compares calls, amplification, goodput, timeouts and the latency quantiles.

    scripts/peers/callloop_heapq.py [--duration 12500] [--seed 1]   # one run, JSON on stdout
    scripts/peers/callloop_heapq.py --check target/release/herd-sim  # agreement within noise
"""

import argparse
import heapq
import json
import math
import random
import subprocess
import sys
import time
from collections import deque

START, SEND, COMPLETE, TIMEOUT = 0, 1, 2, 3


def simulate(processes, rate, duration, workers, service_mean, timeout, retries, base, cap,
             multiplier, seed):
    """One run; returns its figures (times in seconds)."""
    rngs = [random.Random(seed * 1_000_003 + p) for p in range(processes)]
    per_process = rate / processes
    heap = []
    seq = 0
    # Call state, by call id: process, attempt number, outstanding, retries made, sent at.
    process_of, attempt_of, outstanding, retries_made, sent_at = [], [], [], [], []
    busy = 0
    waiting = deque()
    calls = attempts = succeeded = failed = timed_out = late = events = 0
    abandoned = 0.0
    latency_sum = 0.0
    latencies = []

    def push(t, kind, a, b=0):
        nonlocal seq
        heapq.heappush(heap, (t, seq, kind, a, b))
        seq += 1

    def send(now, call):
        nonlocal attempts, busy
        attempts += 1
        attempt_of[call] += 1
        outstanding[call] = True
        sent_at[call] = now
        service = rngs[process_of[call]].expovariate(1.0 / service_mean)
        job = (call, attempt_of[call], service)
        # No network delay: the request is at the server now.
        if busy < workers:
            busy += 1
            push(now + service, COMPLETE, job)
        else:
            waiting.append(job)
        push(now + timeout, TIMEOUT, call, attempt_of[call])

    def next_start(now, p):
        t = now + rngs[p].expovariate(per_process)
        if t < duration:
            push(t, START, p)

    for p in range(processes):
        next_start(0.0, p)

    while heap:
        now, _, kind, a, b = heapq.heappop(heap)
        events += 1
        if kind == START:
            calls += 1
            call = len(process_of)
            process_of.append(a)
            attempt_of.append(0)
            outstanding.append(False)
            retries_made.append(0)
            sent_at.append(0.0)
            send(now, call)
            next_start(now, a)
        elif kind == SEND:
            send(now, a)
        elif kind == COMPLETE:
            call, attempt, service = a
            if outstanding[call] and attempt_of[call] == attempt:
                outstanding[call] = False
                latency = now - sent_at[call]
                latency_sum += latency
                latencies.append(latency)
                succeeded += 1
            else:
                late += 1
                abandoned += service
            busy -= 1
            if waiting:
                job = waiting.popleft()
                busy += 1
                push(now + job[2], COMPLETE, job)
        else:  # TIMEOUT
            call = a
            if not (outstanding[call] and attempt_of[call] == b):
                continue
            outstanding[call] = False
            timed_out += 1
            k = retries_made[call]
            if k >= retries:
                failed += 1
                continue
            retries_made[call] = k + 1
            ceiling = min(cap, base * multiplier ** k)
            push(now + rngs[process_of[call]].uniform(0.0, ceiling), SEND, call)

    latencies.sort()

    def quantile(q):
        if not latencies:
            return None
        rank = min(max(math.ceil(q * len(latencies)), 1), len(latencies))
        return latencies[rank - 1]

    return {
        "calls": calls,
        "attempts": attempts,
        "amplification": attempts / calls if calls else 0.0,
        "goodput_pct": 100.0 * succeeded / calls if calls else 0.0,
        "timed_out": timed_out,
        "late_answers": late,
        "latency_p50_s": quantile(0.5),
        "latency_p99_s": quantile(0.99),
        "latency_mean_s": latency_sum / succeeded if succeeded else None,
        "abandoned_work_s": abandoned,
        "events": events,
    }


def herd_sim(binary, args, seed):
    """The same scenario through herd-sim's call loop: its JSON figures."""
    command = [
        binary, "--clients", str(args.processes), "--strategy", "full-jitter",
        "--retries", str(args.retries), "--base", f"{args.base}s", "--cap", f"{args.cap}s",
        "--multiplier", str(args.multiplier), "--server", "capacity",
        "--workers", str(args.workers), "--service-time", f"exp:{args.service * 1000}ms",
        "--arrivals", "poisson", "--rate", f"{args.rate}/s", "--duration", f"{args.duration}s",
        "--timeout", f"{args.timeout}s", "--seed", str(seed), "--format", "json",
    ]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["results"][0]


def check(args):
    """Runs both over `--seeds` seeds and compares the means of each figure within noise:
    four standard errors of the difference, plus the sketch's 0.4 % on quantiles."""
    figures = ["calls", "amplification", "goodput_pct", "timed_out", "latency_p50_s",
               "latency_p99_s", "latency_mean_s"]
    ours, theirs = [], []
    for seed in range(1, args.seeds + 1):
        theirs.append(simulate(args.processes, args.rate, args.duration, args.workers,
                               args.service, args.timeout, args.retries, args.base, args.cap,
                               args.multiplier, seed))
        ours.append(herd_sim(args.check, args, seed))

    def mean_se(rows, key):
        values = [r[key] for r in rows]
        n = len(values)
        mean = sum(values) / n
        var = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
        return mean, math.sqrt(var / n)

    ok = True
    print(f"{'figure':<16} {'herd-sim':>14} {'heapq peer':>14} {'difference':>12} {'allowed':>12}")
    for key in figures:
        m1, s1 = mean_se(ours, key)
        m2, s2 = mean_se(theirs, key)
        allowed = 4 * math.hypot(s1, s2)
        if key.startswith("latency_p"):
            allowed += m2 / 256
        good = abs(m1 - m2) <= allowed
        ok &= good
        print(f"{key:<16} {m1:>14.6g} {m2:>14.6g} {m1 - m2:>12.4g} {allowed:>12.4g}"
              f"{'' if good else '  <- outside'}")
    print("agree within noise" if ok else "DISAGREE")
    return 0 if ok else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, default=10)
    parser.add_argument("--rate", type=float, default=80.0, help="calls per second, in all")
    parser.add_argument("--duration", type=float, default=12_500.0, help="seconds of starts")
    parser.add_argument("--workers", type=int, default=10)
    parser.add_argument("--service", type=float, default=0.1, help="mean service time, s")
    parser.add_argument("--timeout", type=float, default=1.0, help="seconds")
    parser.add_argument("--retries", type=int, default=3)
    parser.add_argument("--base", type=float, default=1.0, help="seconds")
    parser.add_argument("--cap", type=float, default=30.0, help="seconds")
    parser.add_argument("--multiplier", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", metavar="BINARY", help="compare with herd-sim over seeds")
    parser.add_argument("--seeds", type=int, default=8, help="seeds for --check")
    args = parser.parse_args()
    if args.check:
        sys.exit(check(args))
    started = time.perf_counter()
    result = simulate(args.processes, args.rate, args.duration, args.workers, args.service,
                      args.timeout, args.retries, args.base, args.cap, args.multiplier,
                      args.seed)
    result["wall_s"] = time.perf_counter() - started
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
