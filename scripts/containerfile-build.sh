#!/usr/bin/env bash
# Builds herd-sim exactly as deploy/Containerfile's build stage does, here, without a
# container engine, and checks what its scratch stage needs of the binary:
#
#   scripts/containerfile-build.sh
#
# 1. Reads the build stage's `ENV RUSTFLAGS=…` and the `cargo build …` of its RUN line, and
#    the path its `cp` takes the binary from, out of deploy/Containerfile (so the recipe
#    cannot change without this script running the change), and runs that cargo command in
#    this clone with those RUSTFLAGS.
# 2. Checks the binary is static (no program interpreter, no shared library needed), as a
#    `scratch` image has no libc to load.
# 3. Runs it as the image does: as root (CI), in a chroot holding nothing but the binary and
#    configs/ (the scratch stage's COPY lines), as user 65534 with a volume writable through
#    its group only (what the pod's fsGroup gives): a plain run, two shards and their merge.
#    Without root, step 3 is skipped with a message.
set -euo pipefail
cd "$(dirname "$0")/.."
file=deploy/Containerfile
build_stage=$(sed -n '/^FROM .* AS build$/,/^FROM /p' "$file")

rustflags=$(sed -n 's/^ENV RUSTFLAGS="\(.*\)"$/\1/p' <<< "$build_stage")
[ -n "$rustflags" ] || { echo "error: no ENV RUSTFLAGS=\"…\" in the build stage of $file" >&2; exit 1; }
# The RUN line with `cargo build`, continuation lines joined.
run=$(sed -n '/^RUN .*cargo build/,/[^\\]$/p' <<< "$build_stage" | sed 's/\\$//' | tr '\n' ' ')
run=${run#RUN }
cargo_command=$(sed 's/ *&&.*//' <<< "$run")
copy=$(grep -o 'cp [^ ]* /herd-sim' <<< "$run" || true)
binary=$(awk '{ print $2 }' <<< "$copy")
case "$cargo_command" in
    "cargo build "*) ;;
    *) echo "error: the RUN line of $file does not start with cargo build: $run" >&2; exit 1 ;;
esac
[ -n "$binary" ] || { echo "error: no \`cp BINARY /herd-sim\` in the RUN line of $file" >&2; exit 1; }

echo "== RUSTFLAGS=\"$rustflags\" $cargo_command"
read -r -a words <<< "$cargo_command"
RUSTFLAGS=$rustflags "${words[@]}"
[ -x "$binary" ] || { echo "error: $cargo_command made no $binary" >&2; exit 1; }

echo "== $binary is static"
if readelf -l "$binary" | grep -q 'Requesting program interpreter'; then
    echo "error: $binary has a program interpreter: it is not static" >&2
    exit 1
fi
if readelf -d "$binary" | grep -q '(NEEDED)'; then
    readelf -d "$binary" | grep '(NEEDED)' >&2
    echo "error: $binary needs shared libraries" >&2
    exit 1
fi
"$binary" --version

if [ "$(id -u)" != 0 ]; then
    echo "== skipped: the run from an empty root needs root (chroot)"
    exit 0
fi
echo "== from an empty root, as user 65534, writing a volume through its group"
root=$(mktemp -d /tmp/herd-sim-scratch.XXXXXX)
chmod 755 "$root"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/local/bin" "$root/data"
cp "$binary" "$root/usr/local/bin/herd-sim"
cp -R configs "$root/configs"
# The volume as fsGroup 2000 leaves it: group-owned, group-writable, setgid.
chown 0:2000 "$root/data"
chmod 2770 "$root/data"
in_image() {
    chroot --userspec=65534:65534 --groups=2000 "$root" /usr/local/bin/herd-sim "$@"
}
in_image --config /configs/herd-down.toml --clients 1000 --out /data/run.json
grid=(--clients 10,300 --strategy fixed,full-jitter --seeds 2)
for k in 0 1; do
    in_image sweep "${grid[@]}" --shard "$k/2" --quiet --out "/data/shards/part-$k.csv"
done
in_image merge --out /data/sweep.csv /data/shards
"$binary" sweep "${grid[@]}" --quiet --out "$root/one.csv"
cmp "$root/data/sweep.csv" "$root/one.csv"
echo "merged $(wc -l < "$root/data/sweep.csv") lines in the empty root, byte-identical to one sweep"
echo "== containerfile-build passed"
