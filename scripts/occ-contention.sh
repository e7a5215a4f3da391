#!/usr/bin/env bash
# Brooker's 2015 contention study, whole (docs/experiments.md, "Contention: Brooker's 2015 OCC study"):
# the sweep of configs/occ-contention.toml (10 to 1000 clients × five strategies × 100 seeds,
# aggregated) into docs/occ-contention.csv, then the guide's two charts from it.
#
#   scripts/occ-contention.sh            (HERD_SIM names the binary; default herd-sim on PATH)
#
# Two sweeps, because the study's decorrelated jitter starts from its base (5 ms) while its
# exponential curves start from expo(1) = 2 × 5 ms: --base 10ms for four strategies, --base
# 5ms for decorrelated jitter (its rows say base_s = 0.005). The file is the first sweep's
# followed by the second's rows. The guide's test recomputes the prose figures from this
# file and checks its rows of 10, 50 and 100 clients against a fresh sweep.
set -euo pipefail
cd "$(dirname "$0")/.."
herd_sim=${HERD_SIM:-herd-sim}
out=docs/occ-contention.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$herd_sim" sweep --config configs/occ-contention.toml \
    --strategy naive,exponential,full-jitter,equal-jitter --aggregate --quiet --out "$tmp/expo.csv"
"$herd_sim" sweep --config configs/occ-contention.toml \
    --strategy decorrelated-jitter --base 5ms --aggregate --quiet --out "$tmp/decorrelated.csv"
{
    cat "$tmp/expo.csv"
    tail -n +2 "$tmp/decorrelated.csv"
} > "$tmp/all.csv"
mv "$tmp/all.csv" "$out"

"$herd_sim" plot "$out" --x clients --y attempts_mean --by strategy --log-y --out docs/occ-work.png
"$herd_sim" plot "$out" --x clients --y finish_s_mean --by strategy --log-y --out docs/occ-time.png
