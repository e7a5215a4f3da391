#!/usr/bin/env bash
# Validates deploy/k8s/*.yaml against the Kubernetes API schemas, offline and strictly
# (an unknown or misspelt field is an error, not ignored as `kubectl apply` would without a
# server): the PyPI package kubernetes-validate bundles the OpenAPI schemas of Kubernetes
# 1.25 to 1.37, so nothing but the package install reaches the network, and no cluster is
# needed. Checked against the oldest and the newest it bundles (Indexed Jobs are stable
# since 1.24). Installs the pinned package into a throwaway virtual environment.
#
#   scripts/k8s-validate.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(mktemp -d /tmp/herd-sim-k8s-validate.XXXXXX)
trap 'rm -rf "$venv"' EXIT
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check kubernetes-validate==1.37.0
for version in 1.25.0 1.37.0; do
    "$venv/bin/kubernetes-validate" --strict --quiet --kubernetes-version "$version" deploy/k8s/*.yaml
    echo "deploy/k8s/*.yaml: valid for Kubernetes $version (strict)"
done
