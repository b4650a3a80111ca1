#!/usr/bin/env bash
# The main job (README, "Run it"): brings up the local simulated GPU cluster and shows its
# GPU nodes. Stop the cluster with `deploy/local/cluster.sh down`.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
scripts/install-deps.sh
deploy/local/cluster.sh up
. deploy/local/env.sh
echo
echo "GPU nodes of the local cluster:"
kubectl --kubeconfig "$TJC_KUBECONFIG" get nodes -l nvidia.com/gpu.present=true \
	-L nvidia.com/gpu.product,nvidia.com/gpu.count,kubernetes.io/arch
