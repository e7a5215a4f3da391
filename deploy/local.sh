#!/usr/bin/env bash
# The shards of one sweep on this machine's cores, then the merge: what a Slurm array or a
# Kubernetes Indexed Job does, with xargs -P as the scheduler.
#
#   deploy/local.sh N OUT SWEEP_FLAGS...
#   deploy/local.sh 4 output/sweep.csv --strategy all --clients 100,1000,10000 --seeds 30
#
# Runs `herd-sim sweep SWEEP_FLAGS --shard K/N --out OUT.shards/part-K.csv` for K = 0..N-1,
# JOBS at a time (default: the number of cores), each on one thread, then
# `herd-sim merge --out OUT OUT.shards`. OUT is byte-identical to `herd-sim sweep SWEEP_FLAGS
# --out OUT`. `--aggregate` among SWEEP_FLAGS goes to the merge (shards are always tidy).
# Every shard runs with --resume: after a crash or Ctrl-C, run the same command again and
# each shard carries on where it stopped. HERD_SIM names the binary (default: herd-sim on
# PATH).
set -euo pipefail
# (${a[@]+"${a[@]}"} below: an empty array under set -u, for bash before 4.4 too.)

if [ "$#" -lt 2 ]; then
    echo "usage: $0 N OUT SWEEP_FLAGS..." >&2
    exit 2
fi
shards=$1
out=$2
shift 2
case "$shards" in
    '' | *[!0-9]* | 0) echo "error: N must be a whole number from 1, got '$shards'" >&2; exit 2 ;;
esac
herd_sim=${HERD_SIM:-herd-sim}
jobs=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
dir="$out.shards"

sweep_flags=()
merge_flags=()
for flag in "$@"; do
    if [ "$flag" = "--aggregate" ]; then
        merge_flags+=(--aggregate)
    else
        sweep_flags+=("$flag")
    fi
done

mkdir -p "$dir"
# One shard index a line; xargs starts JOBS processes at a time and fails (123) if any does.
seq 0 $((shards - 1)) | xargs -P "$jobs" -I '{}' \
    "$herd_sim" sweep ${sweep_flags[@]+"${sweep_flags[@]}"} --shard "{}/$shards" --threads 1 --quiet --resume \
    --out "$dir/part-{}.csv"
"$herd_sim" merge ${merge_flags[@]+"${merge_flags[@]}"} --out "$out" "$dir"
