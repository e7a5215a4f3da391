#!/usr/bin/env bash
# The peak resident memory figures of docs/performance.md, measured with /usr/bin/time -f %M:
# a 10 M-client herd on each path, sweeps of 600 and 30 000 rows, and a merge of 1 M rows
# (four shards). The tests bound the heap of every path with a counting allocator
# (tests/memory); this measures the whole process, binary and allocator included.
#
#   scripts/memory-figures.sh            (HERD_SIM names the binary; default herd-sim on PATH)
#
# Prints one line a figure; takes about a minute on two cores (most of it the merge's shards).
set -euo pipefail
herd_sim=${HERD_SIM:-herd-sim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

peak() {
    local what=$1
    shift
    /usr/bin/time -f "%M" -o "$tmp/kb" "$@" > /dev/null
    awk -v w="$what" '{ printf "%-52s %7.1f MB\n", w, $1 / 1024 }' "$tmp/kb"
}

peak "10 M clients, full jitter, independent path" \
    "$herd_sim" --clients 10000000 --strategy full-jitter
peak "10 M clients, full jitter, --engine event-queue" \
    "$herd_sim" --clients 10000000 --strategy full-jitter --engine event-queue
peak "sweep of 600 rows (10 clients × 600 seeds)" \
    "$herd_sim" sweep --clients 10 --seeds 600 --quiet --out "$tmp/small.csv"
peak "sweep of 30 000 rows (10 clients × 30 000 seeds)" \
    "$herd_sim" sweep --clients 10 --seeds 30000 --quiet --out "$tmp/large.csv"
for k in 0 1 2 3; do
    "$herd_sim" sweep --clients 1 --retries 1 --seeds 1000000 --shard "$k/4" --quiet \
        --out "$tmp/shards/part-$k.csv"
done
peak "merge of 1 M rows (four shards, $(du -cm "$tmp"/shards/*.csv | tail -1 | cut -f1) MB)" \
    "$herd_sim" merge --out "$tmp/merged.csv" "$tmp/shards"
