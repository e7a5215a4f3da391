#!/usr/bin/env bash
# The incident studies' figures over seeds (docs/incidents.md): each scenario run on seeds
# 1 to 5, one line a scenario with the failure rate of every seed (failed attempts, timed
# out or refused, over all attempts, the figure queueingsimulator prints) and their mean.
#
#   scripts/incident-studies.sh            (HERD_SIM names the binary; default herd-sim on PATH)
set -euo pipefail
herd_sim=${HERD_SIM:-herd-sim}

# joemag1/queueingsimulator's README runs, one tick = 1 ms: 10 workers, N(50, 12.5) ticks of
# service as a uniform of the same mean and sd, timeout 1000, queue 1000, retry p = 0.5 (20
# retries at most, so that p^20 stands for "until it is not retried"), arrivals 0.1/tick.
queueing="--clients 10 --arrivals poisson --duration 1000s --server capacity --workers 10 \
--service-time uniform:28350us..71650us --queue 1000 --timeout 1s --strategy naive \
--retries 20 --retry-probability 0.5"
spike="--degrade 0s..10s@0.1"

# name | flags
runs=(
    "queueingsimulator -r 0.1 --simulate_spike --lifo|$queueing --rate 100/s $spike --queue-order lifo"
    "queueingsimulator -r 0.1 --simulate_spike|$queueing --rate 100/s $spike"
    "queueingsimulator -r 0.5|$queueing --rate 500/s"
)
for entry in "${runs[@]}"; do
    name=${entry%%|*}
    flags=${entry#*|}
    line=""
    for seed in 1 2 3 4 5; do
        # shellcheck disable=SC2086
        rate=$("$herd_sim" $flags --seed "$seed" --format json | awk '
            /^      "(attempts|timed_out|refused)": / { gsub(/[",:]/, ""); v[$1] = $2 }
            END { printf "%.2f", 100 * (v["timed_out"] + v["refused"]) / v["attempts"] }')
        line="$line $rate"
    done
    echo "$name:$line" | awk -F: '{ n = split($2, v, " "); s = 0; for (i = 1; i <= n; i++) s += v[i];
        printf "%s: failure %% by seed%s, mean %.2f\n", $1, $2, s / n }'
done
