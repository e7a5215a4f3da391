#!/usr/bin/env bash
# deploy/slurm/sweep.sbatch on a real Slurm: a one-node cluster on this machine, a sweep
# submitted as users submit it, the merged file compared byte for byte with one machine's.
#
#   sudo scripts/slurm-e2e.sh            (root: it starts munged, slurmctld and slurmd)
#
# 1. Installs Slurm and munge from the distribution's packages if they are missing
#    (`apt-get install -y slurm-wlm munge`; Debian 12 ships Slurm 22.05).
# 2. Starts munged (a key of its own), slurmctld and slurmd in a scratch folder, with a
#    minimal slurm.conf (SLURM_CONF, nothing in /etc/slurm) describing this node as
#    `slurmd -C` sees it (its real CPUs and memory), memory a consumable resource so that
#    --mem reaches the job as SLURM_MEM_PER_NODE, on free ports.
# 3. Submits `deploy/slurm/sweep.sbatch submit 4 …` and waits for its merge job; fails if any
#    job fails, if the merge can never start, or after TIMEOUT seconds (default 300). The
#    merged file must equal `herd-sim sweep` of the same flags on one machine, byte for byte.
#    The same for an aggregated sweep.
# 4. Checks refusals: a bad flag and a task too small for its shard (SBATCH_MEM_PER_NODE)
#    fail at submit with nothing submitted; a task run with --mem=2 (MB) is refused by
#    herd-sim in one line naming the 2 MiB budget, and the job fails (not OOM-killed).
# 5. Stops the daemons it started (by pid) and removes the scratch folder (kept, with the
#    daemons' logs printed, when something failed).
#
# HERD_SIM names the binary (default: target/release/herd-sim, built if missing). CI runs
# this script from .ci/run (CI=true).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
timeout=${TIMEOUT:-300}
started=$SECONDS

if [ "$(id -u)" != 0 ]; then
    echo "error: scripts/slurm-e2e.sh starts munged, slurmctld and slurmd: run it as root" >&2
    exit 2
fi
if ! command -v slurmctld > /dev/null || ! command -v munged > /dev/null; then
    echo "== installing slurm-wlm and munge"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge > /dev/null ||
        { apt-get update -q > /dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge > /dev/null; }
fi
herd_sim=${HERD_SIM:-$repo/target/release/herd-sim}
if [ ! -x "$herd_sim" ]; then
    cargo build --release --locked --bin herd-sim
fi
herd_sim=$(cd "$(dirname "$herd_sim")" && pwd)/$(basename "$herd_sim")
export HERD_SIM=$herd_sim

work=$(mktemp -d /tmp/herd-sim-slurm.XXXXXX)
chmod 755 "$work"
pids=()
ok=0
teardown() {
    local pid
    for pid in ${pids[@]+"${pids[@]}"}; do
        kill "$pid" 2> /dev/null || true
    done
    for pid in ${pids[@]+"${pids[@]}"}; do
        wait "$pid" 2> /dev/null || true
    done
    if [ "$ok" = 1 ]; then
        rm -rf "$work"
    else
        for log in "$work"/*.log "$work"/*.out "$work"/submit/*.log; do
            [ -f "$log" ] || continue
            echo "---- $log" >&2
            tail -n 30 "$log" >&2
        done
        echo "slurm-e2e: failed; scratch folder kept: $work" >&2
    fi
}
trap teardown EXIT

fail() {
    echo "error: slurm-e2e: $*" >&2
    exit 1
}

# A TCP port nothing listens on, from $1 up.
free_port() {
    local port=$1
    while (echo > "/dev/tcp/127.0.0.1/$port") 2> /dev/null; do
        port=$((port + 1))
    done
    echo "$port"
}

echo "== munged"
mkdir -p "$work/munge"
chmod 700 "$work/munge"
dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
socket=$work/munge/munge.socket
munged --foreground --force --key-file="$work/munge/munge.key" --socket="$socket" \
    --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/munged.seed" \
    --log-file="$work/munged.log" > "$work/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || fail "munged did not start"

echo "== slurm.conf from slurmd -C"
node_line=$(slurmd -C | head -n 1)
node=$(sed -n 's/^NodeName=\([^ ]*\).*/\1/p' <<< "$node_line")
[ -n "$node" ] || fail "slurmd -C said: $node_line"
ctld_port=$(free_port 16817)
slurmd_port=$(free_port $((ctld_port + 1)))
export SLURM_CONF=$work/slurm.conf
mkdir -p "$work/state" "$work/spool" "$work/submit"
cat > "$SLURM_CONF" << EOF
ClusterName=herdsim
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
MinJobAge=3600
$node_line NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=herd Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
sed -i 's/ UpTime=[^ ]*//' "$SLURM_CONF"
echo "$node_line"

echo "== slurmctld, slurmd (ports $ctld_port, $slurmd_port)"
slurmctld -D -i -f "$SLURM_CONF" > "$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$node" -f "$SLURM_CONF" > "$work/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
    state=$(sinfo -h -n "$node" -o %T 2> /dev/null || true)
    [ "$state" = idle ] && break
    sleep 0.2
done
[ "$state" = idle ] || fail "the node is '$state', not idle"
sinfo

# JobState of job $1 (an array's tasks: one line each).
job_states() {
    scontrol show job "$1" 2> /dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}

# Waits until job $1 (the merge) completes; fails when any job fails, when it can never
# start, or after the timeout.
wait_for() {
    local merge=$1 deadline=$((SECONDS + timeout)) line
    while :; do
        if squeue -h -o '%i %T %r' | grep -q 'DependencyNeverSatisfied'; then
            squeue >&2
            fail "a job waits on a dependency never satisfied"
        fi
        if scontrol show job | grep -Eq 'JobState=(FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|BOOT_FAIL|DEADLINE)'; then
            scontrol show job | grep -E 'JobId=|JobState=' >&2
            fail "a job failed"
        fi
        line=$(job_states "$merge")
        [ "$line" = COMPLETED ] && return 0
        [ "$SECONDS" -lt "$deadline" ] || { squeue >&2; fail "no merge after ${timeout} s"; }
        sleep 0.5
    done
}

grid=(--clients 10,300,3000 --strategy fixed,full-jitter --seeds 3)
cd "$work/submit"
for extra in "" --aggregate; do
    name=sweep${extra:+-aggregate}
    echo "== sbatch submit 4 $name.csv ${grid[*]} $extra"
    said=$(bash "$repo/deploy/slurm/sweep.sbatch" submit 4 "$name.csv" "${grid[@]}" $extra)
    echo "$said"
    merge=$(sed -n 's/.*merge: job \([0-9]*\) into.*/\1/p' <<< "$said")
    [ -n "$merge" ] || fail "no merge job in: $said"
    wait_for "$merge"
    "$herd_sim" sweep "${grid[@]}" $extra --quiet --out "one-$name.csv"
    cmp "$name.csv" "one-$name.csv" || fail "$name.csv differs from one machine's"
    echo "$name.csv: $(wc -l < "$name.csv") lines, byte-identical to one machine's sweep"
done

echo "== refused at submit, nothing submitted"
jobs_before=$(scontrol show job | grep -c '^JobId=')
# Each must exit 2 with one error line.
refused() {
    local status=0 err
    err=$("$@" 2>&1 > /dev/null) || status=$?
    [ "$status" = 2 ] || fail "$* exited $status, not 2: $err"
    [ "$(wc -l <<< "$err")" = 1 ] && [[ $err == error:* ]] || fail "$*: not one error line: $err"
    echo "refused: $err"
}
refused bash "$repo/deploy/slurm/sweep.sbatch" submit 2 bad.csv --clients 0
# A grid estimated past a task of 1 or 2 MiB: 100 000 clients' events behind a limiter.
big=(--clients 100000 --server sliding-window --limit 20)
SBATCH_MEM_PER_NODE=1 refused bash "$repo/deploy/slurm/sweep.sbatch" submit 2 small.csv "${big[@]}"
[ "$(scontrol show job | grep -c '^JobId=')" = "$jobs_before" ] || fail "a refused submit submitted a job"
[ ! -e bad.csv.shards ] && [ ! -e small.csv.shards ] || fail "a refused submit made a folder"

echo "== a task of 2 MB: herd-sim refuses its shard, the job fails"
mkdir -p small.shards
job=$(sbatch --parsable --mem=2 --array=0-0 --output=small-%A_%a.log \
    "$repo/deploy/slurm/sweep.sbatch" shard small.shards "${big[@]}")
job=${job%%;*}
deadline=$((SECONDS + timeout))
until [ "$(job_states "$job")" = FAILED ]; do
    case "$(job_states "$job")" in
        COMPLETED | CANCELLED | TIMEOUT | OUT_OF_MEMORY) fail "job $job: $(job_states "$job"), not FAILED" ;;
    esac
    [ "$SECONDS" -lt "$deadline" ] || fail "job $job did not end in ${timeout} s"
    sleep 0.5
done
scontrol show job "$job" | grep -q 'ExitCode=2:0' || fail "job $job: $(scontrol show job "$job" | grep -o 'ExitCode=[^ ]*')"
log=$(cat small-"${job}"_0.log)
[[ $log == "error: this "*"over the memory budget of 2.0 MiB"* ]] ||
    fail "job $job said: $log"
echo "job $job: FAILED, exit 2: $log"
[ ! -e small.shards/part-0.csv ] || fail "the refused shard wrote its file"

ok=1
echo "== slurm-e2e passed in $((SECONDS - started)) s"
