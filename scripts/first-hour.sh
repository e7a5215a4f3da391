#!/usr/bin/env bash
# The README's two commands from a fresh clone (README, "Quick start"): clones this
# repository's HEAD into a temporary folder with its own target/ and times
# `cargo run --release -- --clients 1000 --strategy all`, then `cargo test --release`.
# Cargo's registry cache is shared (downloads are not what this measures).
#
#   scripts/first-hour.sh
#
# Prints the wall and CPU seconds of each command and their sum; run it on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone --quiet . "$tmp/herd-sim"
cd "$tmp/herd-sim"

measure() {
    local name=$1 wall user sys
    shift
    TIMEFORMAT='%R %U %S'
    { time "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"; } 2> "$tmp/$name.time" || {
        cat "$tmp/$name.err" >&2
        exit 1
    }
    read -r wall user sys < "$tmp/$name.time"
    awk -v n="$name" -v w="$wall" -v c="$user" -v s="$sys" 'BEGIN { printf "%-5s %8.1f s wall %8.1f s CPU\n", n, w, c + s }'
    echo "$wall" >> "$tmp/walls"
}

measure run cargo run --release --locked -- --clients 1000 --strategy all
measure test cargo test --release --locked
awk '{ t += $1 } END { printf "both  %8.1f s wall\n", t }' "$tmp/walls"
