#!/usr/bin/env bash
# docs/crates.md's study: tower 0.5.3's own TpsBudget (cargo feature tower) in the herd beside
# herd-sim's model of the budget it copies (Finagle's), at retry_percent 0.2, 0.6 and 1.5, 100
# client processes (one budget each, tower's defaults ttl=10s,min_per_s=10) against a server
# out for 30 s under 1000 calls/s; one row a run into docs/crates.csv, the guide's table from it.
#
#   scripts/crates-study.sh     (HERD_SIM names a herd-sim built with --features tower;
#                                by default the script builds one)
#
# tests/integration/adapters.rs (run with the feature) runs the same rows and compares them
# with docs/crates.csv, and the guide's table with the file.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${HERD_SIM:-}" ]; then
    herd_sim=$HERD_SIM
else
    cargo build --release --locked --features tower --quiet
    herd_sim=target/release/herd-sim
fi
scenario=(--server flaky --failure-rate 0.05 --outage 10s..40s --clients 100 --arrivals poisson
    --rate 1000/s --duration 60s --network-delay exp:10ms --strategy exponential --base 100ms
    --retries 3 --settle 20s --format json)
# label | retry_percent | --budget
rows=(
    "no budget|-|none"
    "tower|0.2|tower-tps:percent=0.2"
    "finagle model|0.2|finagle:percent=20"
    "tower|0.6|tower-tps:percent=0.6"
    "finagle model|0.6|finagle:percent=60"
    "finagle model|1|finagle:percent=100"
    "tower|1|tower-tps:percent=1"
    "tower|1.5|tower-tps:percent=1.5"
    "finagle model|1.5|finagle:percent=150"
)
out=docs/crates.csv
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
echo "budget,retry_percent,flag,calls,attempts,attempts_per_call,retries_denied" > "$tmp"
for row in "${rows[@]}"; do
    IFS='|' read -r label percent budget <<< "$row"
    json=$("$herd_sim" "${scenario[@]}" --budget "$budget")
    field() { grep -m1 -E "^ *\"$1\": [0-9]" <<< "$json" | sed -E 's/.*: ([0-9]+).*/\1/'; }
    calls=$(field calls)
    attempts=$(field attempts)
    denied=$(field retries_denied)
    per_call=$(awk -v a="$attempts" -v c="$calls" 'BEGIN { printf "%.3f", a / c }')
    echo "$label,$percent,$budget,$calls,$attempts,$per_call,$denied" >> "$tmp"
done
mv "$tmp" "$out"
trap - EXIT
cat "$out"
