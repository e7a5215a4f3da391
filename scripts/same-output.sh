#!/usr/bin/env bash
# Byte-for-byte comparison of two herd-sim binaries on a fixed set of runs and sweeps: every
# strategy on the herd paths, each config in configs/, the call loop under Poisson load with
# every server option, controls and browser tabs, contention, and sweeps. A speed change must
# leave every output as it was (docs/performance.md).
#
#   scripts/same-output.sh OLD_BINARY NEW_BINARY     (e.g. a copy of target/release/herd-sim
#                                                     saved before the change, and the new one)
#
# Prints one line per differing job and exits 1 if any differ; 0 and "N jobs, same bytes".
set -euo pipefail
cd "$(dirname "$0")/.."
old=$(realpath "$1")
new=$(realpath "$2")
work=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

# A Poisson call loop near the knee: 10 workers of exp:100ms, 80 calls/s, 1 s timeout.
poisson="--clients 10 --server capacity --arrivals poisson --rate 80/s --duration 600s"
poisson+=" --retries 3"
w10="--workers 10 --service-time exp:100ms"
jobs=(
    "--clients 1000 --strategy all"
    "--clients 1000 --strategy all --format json"
    "--clients 100000 --strategy all --format csv --engine event-queue"
    "--clients 100000 --strategy all --format csv --engine independent"
    "--clients 5000 --strategy all --recover-at 7s --format json --latency uniform:50ms..150ms --items 3"
    "--config configs/herd-down.toml --format json"
    "--config configs/fixed-window-one-client.toml --format json"
    "--config configs/fixed-window-five-clients.toml --format json"
    "--config configs/browser-tabs.toml --format json"
    "--config configs/browser-tabs-limiter.toml --format json"
    "--config configs/collapse-spike.toml --format json --series-out {out}/series.csv"
    "--config configs/collapse-spike.toml --seed 7 --format json"
    "--config configs/metastable-steps.toml --format json --series-out {out}/series.csv"
    "--config configs/metastable-steps.toml --retries 0 --format json"
    "--config configs/outage-recovery.toml --format json --series-out {out}/series.csv"
    "--config configs/outage-presets.toml --preset aws-standard --format json"
    "--config configs/outage-presets-load.toml --preset grpc --format json"
    "--config configs/outage-presets-load.toml --preset aws-adaptive --format json"
    "--config configs/retry-budgets.toml --format json --series-out {out}/series.csv"
    "--config configs/retry-budgets.toml --budget token-bucket --failure-rate 0.5 --format json"
    "--config configs/retry-budgets.toml --breaker retries --failure-rate 0.5 --format json"
    "--config configs/occ-contention.toml --clients 40 --format json"
    "$poisson $w10 --timeout 1s --strategy all --format json --series-out {out}/series.csv"
    "$poisson $w10 --timeout 1s --strategy full-jitter --seed 3 --format json --series-bin 100ms"
    "$poisson $w10 --timeout 1s --strategy naive --network-delay exp:5ms --format json"
    "$poisson $w10 --timeout 1s --strategy full-jitter --latency 20ms --format json"
    "$poisson $w10 --timeout 1s --strategy full-jitter --latency uniform:1ms..30ms --format json"
    "$poisson $w10 --timeout 1s --strategy full-jitter --queue 5 --shed-retry-after 1s --format json"
    "$poisson $w10 --timeout 1s --strategy full-jitter --queue-order lifo --format json"
    "$poisson $w10 --timeout 1s --strategy naive --server-cancels --format json"
    "$poisson $w10 --timeout 1s --strategy full-jitter --slowdown 1ms --format json"
    "$poisson --timeout 1s --strategy full-jitter --workers unlimited --service-time exp:100ms --slowdown 2ms --format json"
    "$poisson $w10 --timeout 1s --strategy full-jitter --outage 100s..130s --degrade 200s..260s@0.5 --spike 300s..320s@150/s --format json"
    "$poisson --workers 10 --timeout 1s --strategy full-jitter --service-time 100ms --format json"
    "$poisson --workers 10 --strategy full-jitter --service-time uniform:50ms..150ms --timeout 150ms --format json"
    "$poisson $w10 --timeout 1s --strategy exponential --budget token-bucket --format json"
    "$poisson $w10 --timeout 1s --strategy full-jitter --throttle sre --queue 3 --format json"
    "$poisson $w10 --timeout 1s --strategy full-jitter --breaker calls --outage 100s..200s --format json"
    "$poisson $w10 --timeout 1s --strategy full-jitter --hidden 0.5 --visibility-switch 1m --format json"
    "$poisson $w10 --timeout 1s --strategy full-jitter --hidden 0.5 --visibility-switch 1m --when-hidden pause --format json"
    "--clients 10 --strategy full-jitter --server flaky --failure-rate 0.3 --arrivals poisson --rate 200/s --duration 300s --timeout 50ms --network-delay exp:10ms --format json"
    "sweep --config configs/collapse-spike.toml --seeds 20 --aggregate --out {out}/sweep.csv"
    "sweep --config configs/metastable-steps.toml --out {out}/sweep.csv"
    "sweep --clients 10 --strategy all --seeds 300 --out {out}/sweep.csv"
    "sweep --config configs/retry-budgets.toml --clients 10,100 --seeds 2 --out {out}/sweep.csv"
)

differ=0
for i in "${!jobs[@]}"; do
    for side in old new; do
        dir="$work/$side/$i"
        mkdir -p "$dir"
        read -r -a args <<< "${jobs[$i]//\{out\}/$dir}"
        bin=$old
        [ "$side" = new ] && bin=$new
        if ! "$bin" "${args[@]}" --threads 2 > "$dir/stdout" 2> "$dir/stderr"; then
            echo "failed ($side): ${jobs[$i]}: $(head -c 300 "$dir/stderr")"
            exit 2
        fi
        # Nothing on stderr is compared: progress bars and estimates may differ in wording.
        rm -f "$dir/stderr"
    done
    if ! diff -rq "$work/old/$i" "$work/new/$i" > /dev/null; then
        echo "differs: ${jobs[$i]}"
        differ=1
    fi
done
if [ "$differ" = 0 ]; then
    echo "${#jobs[@]} jobs, same bytes"
fi
exit "$differ"
