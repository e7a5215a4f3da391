#!/usr/bin/env bash
# Writes docs/traces/PRESET.txt: the golden trace of every preset (`herd-sim trace-policy
# --preset PRESET` with the default script and seed). tests/integration/trace_policy.rs checks
# that each file is what the binary prints, byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --quiet
mkdir -p docs/traces
for preset in $(./target/release/herd-sim presets | awk 'NR > 2 { print $1 }'); do
    ./target/release/herd-sim trace-policy --preset "$preset" --out "docs/traces/$preset.txt"
done
