#!/usr/bin/env bash
# The sweep of deploy/k8s/ from start to finish, with kubectl pointed at the cluster:
#
#   IMAGE=REGISTRY/herd-sim:0.1.0 deploy/k8s/run.sh OUT
#
# 1. Applies sweep-job.yaml (the ConfigMap, the claim, the Indexed Job), with IMAGE (default
#    herd-sim:0.1.0, for an image loaded into the nodes, e.g. `kind load docker-image`) as
#    every herd-sim container's image, and waits until the Job is Complete, or Failed (then
#    it stops, exit 1, showing the Job's pods and the last lines of a failed pod's log).
#    `kubectl wait --for=condition=complete` alone would wait out its timeout on a Job that
#    failed: kubectl waits for one condition only.
# 2. The same for merge-job.yaml.
# 3. Applies fetch-pod.yaml, waits until it is Ready, copies /data/sweep.csv out into OUT
#    (`kubectl exec … cat`: the herd-sim image has no shell or tar) and deletes the pod.
#
# TIMEOUT (seconds, default 86400) bounds each wait. The Jobs stay for `kubectl logs`;
# `kubectl delete -f deploy/k8s/merge-job.yaml -f deploy/k8s/sweep-job.yaml` removes them
# and the volume.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ "$#" -ne 1 ]; then
    echo "usage: IMAGE=REGISTRY/herd-sim:TAG $0 OUT" >&2
    exit 2
fi
out=$1
image=${IMAGE:-herd-sim:0.1.0}
timeout=${TIMEOUT:-86400}

# Applies manifest $1 with IMAGE as herd-sim's image.
apply() {
    sed "s|image: herd-sim:0.1.0|image: $image|" "$here/$1" | kubectl apply -f -
}

# Waits until job $1 is Complete (0) or Failed (1), at most TIMEOUT seconds.
wait_for_job() {
    local job=$1 deadline=$((SECONDS + timeout)) conditions pod
    while :; do
        conditions=$(kubectl get "job/$job" \
            -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{" "}{end}')
        case " $conditions " in
            *" Complete "*)
                echo "job/$job: Complete"
                return 0
                ;;
            *" Failed "*)
                echo "error: job/$job failed" >&2
                kubectl get pods -l "job-name=$job" >&2 || true
                pod=$(kubectl get pods -l "job-name=$job" --field-selector=status.phase=Failed \
                    -o jsonpath='{.items[0].metadata.name}' 2> /dev/null || true)
                [ -z "$pod" ] || kubectl logs "$pod" --tail=20 >&2 || true
                return 1
                ;;
        esac
        if [ "$SECONDS" -ge "$deadline" ]; then
            echo "error: job/$job neither Complete nor Failed after $timeout s" >&2
            return 1
        fi
        sleep 10
    done
}

apply sweep-job.yaml
wait_for_job herd-sim-sweep
apply merge-job.yaml
wait_for_job herd-sim-merge
kubectl apply -f "$here/fetch-pod.yaml"
kubectl wait --for=condition=Ready --timeout=10m pod/herd-sim-fetch
kubectl exec herd-sim-fetch -- cat /data/sweep.csv > "$out.part"
mv "$out.part" "$out"
kubectl delete pod herd-sim-fetch --wait=false
echo "$out: $(wc -l < "$out") lines"
