#!/usr/bin/env bash
# The browser-tabs chart of docs/browser-tabs.md: one run of configs/browser-tabs.toml
# (1000 tabs, 40 % hidden, an outage then a 40 requests/s server; naive and full jitter) drawn
# with --png (a call-loop run's --png draws its time series, one row of panels per strategy).
# Each panel gets its own value axis (--chart-scale per-panel): on a shared axis the naive
# herd's refusals in the first second flatten full jitter's row.
#
#   scripts/browser-tabs.sh            (HERD_SIM names the binary; default herd-sim on PATH)
#
# Same seed, same bytes: tests/integration/browser.rs runs the line below and compares the
# picture with the committed one.
set -euo pipefail
cd "$(dirname "$0")/.."
herd_sim=${HERD_SIM:-herd-sim}

"$herd_sim" --config configs/browser-tabs.toml --chart-scale per-panel --png docs/browser-tabs.png > /dev/null
