#!/usr/bin/env bash
# The calibration of configs/huang-osdi22-retry.toml (docs/boundary.md, "Huang et al., OSDI '22,
# the retry case"): the service time S of the primary's 2 workers, scanned for each of the four
# published cases, prints per case the largest S at which every seed recovers and the smallest
# at which every seed stays down. The published outcomes ((a), (c), (d) recover, (b) stays
# down) hold for every S above (b)'s "all stuck from" and below the others' "all recover up
# to"; the config takes the middle of that window.
#
#   scripts/huang-calibration.sh     (HERD_SIM names a herd-sim; by default the script builds
#                                     one; SEEDS, 3 by default, the seeds a point)
#
# 252 runs of about 1.2 M calls (0.3 to 0.7 s of a core each): a few minutes on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${HERD_SIM:-}" ]; then
    herd_sim=$HERD_SIM
else
    cargo build --release --locked --quiet
    herd_sim=target/release/herd-sim
fi
seeds=${SEEDS:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# case | published | the service times scanned | sweep keys of the case ((d)'s edge lies
# higher, its load being 0.75 of the others')
cases=(
    "(a) 0.45 CPU, 10 s|recovers|52us..62us|--degrade-factor 0.225 --degrade-duration 10s"
    "(b) 0.40 CPU, 10 s|stays down|52us..62us|--degrade-factor 0.2 --degrade-duration 10s"
    "(c) 0.40 CPU, 9 s|recovers|52us..62us|--degrade-factor 0.2 --degrade-duration 9s"
    "(d) 0.40 CPU, 10 s, 100 us|recovers|66us..76us|--degrade-factor 0.2 --degrade-duration 10s --rate 10000"
)
printf '%-28s %-11s %-22s %s\n' case published "all seeds recover to" "all seeds stuck from"
i=0
for c in "${cases[@]}"; do
    IFS='|' read -r name published range keys <<<"$c"
    # shellcheck disable=SC2086 # the case's keys are words
    "$herd_sim" sweep --config configs/huang-osdi22-retry.toml --strategy naive \
        --service-time "$range" step 0.5us $keys --seeds "$seeds" --quiet \
        --out "$out/$i.csv"
    # service_time_s and stuck by name; the largest S below every stuck seed and the smallest
    # above every recovered one.
    python3 - "$out/$i.csv" "$name" "$published" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault(float(r["service_time_s"]), []).append(r["stuck"] == "1")
s = sorted(by)
recover = [v for v in s if not any(by[v])]
stuck = [v for v in s if all(by[v])]
up = max((v for v in recover if all(not any(by[w]) for w in s if w <= v)), default=None)
down = min((v for v in stuck if all(all(by[w]) for w in s if w >= v)), default=None)
us = lambda v: "-" if v is None else f"{v * 1e6:g} us"
print(f"{sys.argv[2]:<28} {sys.argv[3]:<11} {us(up):<22} {us(down)}")
EOF
    i=$((i + 1))
done
