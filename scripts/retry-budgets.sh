#!/usr/bin/env bash
# Brooker's 2022 retry-control study, whole (docs/retry-control.md, "Brooker's study"): one
# sweep of configs/retry-budgets.toml per control (failure rate 0 to 0.9 step 0.05 × 10, 100
# and 1000 client processes × 5 seeds, aggregated) into docs/retry-budgets.csv, then the
# guide's charts from it.
#
#   scripts/retry-budgets.sh            (HERD_SIM names the binary; default herd-sim on PATH)
#
# The file is the sweeps' rows one after the other, each led by a `control` column naming
# its sweep (the charts draw one line per control); the rest of a row is the sweep's own line,
# which the guide's test checks against fresh sweeps.
set -euo pipefail
cd "$(dirname "$0")/.."
herd_sim=${HERD_SIM:-herd-sim}
out=docs/retry-budgets.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# control name | the sweep's flags over the config (3 naive retries, no control)
controls=(
    "no retries|--retries 0"
    "3 retries|"
    "token bucket|--budget token-bucket"
    "retry breaker|--breaker retries:ratio=0.1,window=all"
    "grpc|--budget grpc"
    "aws-standard|--budget aws-standard"
    "envoy|--budget envoy"
)
first=1
for entry in "${controls[@]}"; do
    name=${entry%%|*}
    read -r -a flags <<< "${entry#*|}"
    "$herd_sim" sweep --config configs/retry-budgets.toml ${flags[@]+"${flags[@]}"} \
        --aggregate --quiet --out "$tmp/sweep.csv"
    if [ "$first" = 1 ]; then
        head -n 1 "$tmp/sweep.csv" | sed 's/^/control,/'
        first=0
    fi
    tail -n +2 "$tmp/sweep.csv" | sed "s/^/$name,/"
done > "$tmp/all.csv"
mv "$tmp/all.csv" "$out"

plot() { "$herd_sim" plot "$out" --x failure_rate "$@"; }
# Brooker's two figures (100 clients): load (attempts per call) and success rate.
plot --y amplification_mean --by control --where clients=100 --out docs/retry-budgets-load.png
plot --y goodput_pct_mean --by control --where clients=100 --out docs/retry-budgets-success.png
# The same traffic split over 10, 100 and 1000 client processes.
for control in "token bucket" "retry breaker"; do
    file=${control// /-}
    plot --y amplification_mean --by clients --where "control=$control" \
        --out "docs/retry-budgets-$file-load.png"
    plot --y goodput_pct_mean --by clients --where "control=$control" \
        --out "docs/retry-budgets-$file-success.png"
done
