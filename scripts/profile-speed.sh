#!/usr/bin/env bash
# What the release profile's quick build costs in run speed (docs/performance.md, "Build profiles"): the
# binary `cargo run --release` builds (no LTO, parallel codegen, the dependencies off the
# simulation's loop unoptimised) against the one `cargo build --profile dist` builds (thin LTO,
# one codegen unit, every dependency optimised), on the same jobs, runs alternated so that both
# see the same machine, one thread so that other work on the machine moves both alike.
#
#   scripts/profile-speed.sh [ROUNDS]        (default 5 rounds; builds both profiles first)
#
# Prints each job's median wall time per profile and the ratio release / dist.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
cargo build --release --locked --quiet
cargo build --profile dist --locked --quiet

# The herd on the independent path, the same herd's strategies on the event queue, and the
# overload call loop.
jobs=(
    "--clients 10000000 --strategy all --threads 1"
    "--clients 1000000 --engine event-queue --strategy all --threads 1"
    "--config configs/outage-recovery.toml --clients 100000 --threads 1"
)

seconds() {
    local start end
    start=$(date +%s%N)
    "$@" > /dev/null
    end=$(date +%s%N)
    echo $(((end - start) / 1000000))
}

median() {
    sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

printf '%-60s %12s %12s %8s\n' job "release ms" "dist ms" ratio
for job in "${jobs[@]}"; do
    read -r -a args <<< "$job"
    release=()
    dist=()
    for _ in $(seq "$rounds"); do
        release+=("$(seconds target/release/herd-sim "${args[@]}")")
        dist+=("$(seconds target/dist/herd-sim "${args[@]}")")
    done
    r=$(printf '%s\n' "${release[@]}" | median)
    d=$(printf '%s\n' "${dist[@]}" | median)
    printf '%-60s %12s %12s %8s\n' "$job" "$r" "$d" "$(awk -v r="$r" -v d="$d" 'BEGIN { printf "%.3f", r / d }')"
done
