#!/usr/bin/env bash
# The series charts of docs/overload.md: one run of
# configs/collapse-spike.toml and one of configs/outage-recovery.toml, each drawn with --png
# (a call-loop run's --png draws its time series, one row of panels per strategy). The outage's
# panels each get their own value axis (--chart-scale per-panel): on a shared axis naive's
# 70 000 refusals at t = 0 flatten every other row.
#
#   scripts/overload-charts.sh            (HERD_SIM names the binary; default herd-sim on PATH)
#
# Same seed, same bytes: tests/integration/series_chart.rs runs each line below and compares
# the picture with the committed one.
set -euo pipefail
cd "$(dirname "$0")/.."
herd_sim=${HERD_SIM:-herd-sim}

"$herd_sim" --config configs/collapse-spike.toml --png docs/collapse-spike.png > /dev/null
"$herd_sim" --config configs/outage-recovery.toml --chart-scale per-panel --png docs/outage-recovery.png > /dev/null
