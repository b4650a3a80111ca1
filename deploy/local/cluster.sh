#!/usr/bin/env bash
# The local simulated GPU cluster: a real etcd, kube-apiserver, kube-controller-manager and
# kube-scheduler, with KWOK standing in for the kubelets of FLAME-shaped nodes, and two real
# kubelet nodes (real-0, real-1) that run containers, with CoreDNS for the cluster domain
# (deploy/local/real-nodes.sh).
#
#   cluster.sh up        build the binaries if needed, start the cluster, create the nodes,
#                        wait until every node is Ready (harmless on a running cluster)
#   cluster.sh down      stop the cluster and remove its state
#   cluster.sh status    say whether it runs, and show the nodes
#   cluster.sh kubeconfig  print the path of the cluster's kubeconfig
#   cluster.sh nodes     (re)apply the node set, e.g. after changing the counts
#   cluster.sh real-image  build the real nodes' training image localhost/trainjob-torch-cpu:latest
#                        when its inputs changed (deploy/local/real/torch-cpu) and import it
#                        into each real node's containerd that lacks it
#   cluster.sh controller-image  build the controller's image localhost/trainjob-controller:ARCH
#                        (deploy/image.sh, cached) and import it into each real node's
#                        containerd that lacks that build, for deploy/local/in-cluster
#   cluster.sh kueue-built  exit 0 when Kueue's build is in the cache (TJC_KUEUE=1 up runs it
#                        without building first), 1 when it is not
#
# Node counts (environment): TJC_GH200_NODES (8; arm64, 4 GPUs), TJC_H100_NODES (4; amd64,
# 8 GPUs), TJC_CPU_NODES (2; amd64, no GPU). Raise them for benchmarks: thousands work.
# GPU nodes are labelled with their rack and block (topology.flame.dev/rack, /block):
# racks of 2 nodes, blocks of 4.
# TJC_REAL_NODES=0 leaves the real nodes out; without root, containerd or cgroups the cluster
# has KWOK nodes only, and `up` says which check failed.
# TJC_CLUSTER names the cluster (default "trainjob"), so several can run side by side.
# TJC_NATIVE_GANG=1 turns on Kubernetes' native gang scheduling when the cluster is created:
# the feature gates GenericWorkload and GangScheduling (kube-apiserver, kube-scheduler and
# kube-controller-manager) and the API scheduling.k8s.io/v1alpha2 (Workload, PodGroup).
# TJC_KUEUE=1 adds Kueue (deploy/local/kueue.sh) to the cluster that `up` starts or finds.
# TJC_KCM_FLAGS passes flags to kube-controller-manager when the cluster is created, as
# "--name=value" words, e.g. "--kube-api-qps=5000 --kube-api-burst=10000" (its client limits
# are otherwise Kubernetes' defaults, 20 QPS and burst 30).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=deploy/local/env.sh
. "$here/env.sh"
# shellcheck source=deploy/local/kueue.sh
. "$here/kueue.sh"
# shellcheck source=deploy/local/real-nodes.sh
. "$here/real-nodes.sh"

GH200_NODES=${TJC_GH200_NODES:-8}
H100_NODES=${TJC_H100_NODES:-4}
CPU_NODES=${TJC_CPU_NODES:-2}
KWOK_VERSION=v0.8.0
NATIVE_GANG=${TJC_NATIVE_GANG:-0}
NATIVE_GANG_API=scheduling.k8s.io/v1alpha2
# The GPU nodes' topology: racks of 2 nodes, blocks of 2 racks (gh200-0 and gh200-1 are
# gh200-rack-0 of gh200-block-0).
TOPOLOGY_BLOCK=topology.flame.dev/block
TOPOLOGY_RACK=topology.flame.dev/rack
NODES_PER_RACK=2
NODES_PER_BLOCK=4
KCM_FLAGS=${TJC_KCM_FLAGS:-}

say() { printf '[cluster %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() {
	printf 'cluster: %s\n' "$*" >&2
	exit 1
}

kubectl_bin() {
	if [[ -x $TJC_BIN/kubectl ]]; then
		echo "$TJC_BIN/kubectl"
	else
		command -v kubectl
	fi
}

k() { "$(kubectl_bin)" --kubeconfig "$TJC_KUBECONFIG" "$@"; }

cluster_dir() { echo "$KWOK_WORKDIR/clusters/$TJC_CLUSTER"; }

# The components whose process is gone (kwokctl's binary runtime keeps their pids in pids/
# and restarts none of them), one name per line.
dead_components() {
	local f pid state
	for f in "$(cluster_dir)"/pids/*.pid; do
		[[ -f $f ]] || continue
		pid=$(<"$f")
		state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
		[[ -n $state && $state != Z ]] || basename "$f" .pid
	done
}

is_up() {
	[[ -f $TJC_KUBECONFIG && -d $(cluster_dir) ]] &&
		k get --raw /readyz --request-timeout=5s >/dev/null 2>&1 &&
		[[ -z $(dead_components) ]]
}

# KWOK's own pod stages come from the kwok module in the Go module cache (downloaded by
# build-control-plane.sh), so the repository carries only the stages it writes itself: the
# node stages (node-stages.yaml) and the pods' run, failure and deletion (stages.yaml).
kwok_stage_dir() {
	local d="$GOMODCACHE/sigs.k8s.io/kwok@$KWOK_VERSION/kustomize/stage"
	[[ -d $d ]] || (cd "$here/tools/kwok" && go mod download sigs.k8s.io/kwok >/dev/null)
	[[ -d $d ]] || die "kwok's stages are missing from $d"
	echo "$d"
}

# One Node object per line of the node set, as JSON for kubectl apply. The GH200 and H100
# nodes carry the labels NVIDIA's GPU feature discovery sets and the taint GPU operators
# put on GPU nodes, so that only pods that tolerate it land there, and the labels of their
# place in the network, as a topology-aware scheduler (Kueue's) reads them: the block and
# the rack of each node (TOPOLOGY_BLOCK, TOPOLOGY_RACK; argument 7 is the node's index in
# its class).
node_json() {
	local name=$1 arch=$2 cpu=$3 mem=$4 gpus=$5 product=$6 index=${7:-0}
	local labels taints alloc class=${1%-*}
	labels="\"kubernetes.io/arch\":\"$arch\",\"kubernetes.io/os\":\"linux\",\"kubernetes.io/hostname\":\"$name\",\"type\":\"kwok\""
	taints="[]"
	alloc="\"cpu\":\"$cpu\",\"memory\":\"$mem\",\"pods\":\"110\",\"ephemeral-storage\":\"1Ti\""
	if ((gpus > 0)); then
		labels+=",\"nvidia.com/gpu.present\":\"true\",\"nvidia.com/gpu.product\":\"$product\",\"nvidia.com/gpu.count\":\"$gpus\""
		labels+=",\"$TOPOLOGY_BLOCK\":\"$class-block-$((index / NODES_PER_BLOCK))\",\"$TOPOLOGY_RACK\":\"$class-rack-$((index / NODES_PER_RACK))\""
		taints='[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]'
		alloc+=",\"nvidia.com/gpu\":\"$gpus\""
	fi
	printf '{"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","annotations":{"kwok.x-k8s.io/node":"fake","node.alpha.kubernetes.io/ttl":"0"},"labels":{%s}},"spec":{"taints":%s},"status":{"allocatable":{%s},"capacity":{%s},"nodeInfo":{"architecture":"%s","operatingSystem":"linux","osImage":"Simulated by KWOK","kernelVersion":"6.8.0","containerRuntimeVersion":"kwok","kubeletVersion":"fake","kubeProxyVersion":"fake","machineID":"%s","systemUUID":"%s","bootID":"%s"},"phase":"Running"}}\n' \
		"$name" "$labels" "$taints" "$alloc" "$alloc" "$arch" "$name" "$name" "$name"
}

node_list() {
	local i
	{
		for ((i = 0; i < GH200_NODES; i++)); do
			node_json "gh200-$i" arm64 72 480Gi 4 NVIDIA-GH200-480GB "$i"
		done
		for ((i = 0; i < H100_NODES; i++)); do
			node_json "h100-$i" amd64 96 1Ti 8 NVIDIA-H100-80GB-HBM3 "$i"
		done
		for ((i = 0; i < CPU_NODES; i++)); do
			node_json "cpu-$i" amd64 32 128Gi 0 ""
		done
	} | jq -s '{apiVersion: "v1", kind: "List", items: .}'
}

total_nodes() { echo $((GH200_NODES + H100_NODES + CPU_NODES)); }

# The ports of each cluster: a block of PORT_BLOCK ports from PORT_BASE up (below the range
# of NodePorts and of the kernel's ephemeral ports), recorded in ports/<cluster>.ports while
# the cluster exists. kwokctl would pick free ports by itself, but with --runtime binary it
# does not see the ports of its other clusters (it counts only container host ports): two
# clusters created a few seconds apart, before the first has bound all of its ports, get
# the same ones, a component of one fails to start ("address already in use") and its nodes
# never get Ready. A block is taken when none of its ports is recorded for another cluster,
# named in another cluster's kwokctl state (clusters made without this script), or listening.
PORT_BASE=20000
PORT_END=30000
PORT_BLOCK=10
ports_dir() { echo "$TJC_CACHE/ports"; }

# Prints the ports of this cluster's block, one a line, taking a block if it has none.
cluster_ports() {
	local dir mine
	dir=$(ports_dir)
	mine="$dir/$TJC_CLUSTER.ports"
	mkdir -p "$dir"
	(
		flock 9
		if [[ ! -s $mine ]]; then
			local used base p taken
			used=$({
				find "$dir" -maxdepth 1 -name '*.ports' ! -name "$TJC_CLUSTER.ports" -exec cat {} + || true
				find "$KWOK_WORKDIR/clusters" -mindepth 2 -maxdepth 2 -name kwok.yaml \
					! -path "*/clusters/$TJC_CLUSTER/*" -exec grep -hoE '[A-Za-z]*[pP]ort: [0-9]+' {} + \
					2>/dev/null | grep -oE '[0-9]+$' || true
				ss -ltnH | awk '{print $4}' | grep -oE '[0-9]+$' || true
			} | sort -un)
			for ((base = PORT_BASE; base + PORT_BLOCK <= PORT_END; base += PORT_BLOCK)); do
				taken=0
				for ((p = base; p < base + PORT_BLOCK; p++)); do
					if grep -qx "$p" <<<"$used"; then
						taken=1
						break
					fi
				done
				((taken)) || break
			done
			((base + PORT_BLOCK <= PORT_END)) || die "no free block of $PORT_BLOCK ports below $PORT_END"
			seq "$base" $((base + PORT_BLOCK - 1)) >"$mine"
		fi
		cat "$mine"
	) 9>"$dir/.lock"
}

# TJC_KCM_FLAGS as kwokctl's extraArgs, a JSON list of {key, value}.
kcm_extra_args() {
	local w
	for w in $KCM_FLAGS; do
		[[ $w =~ ^--[a-z0-9-]+=.*$ ]] || die "TJC_KCM_FLAGS: '$w' is not of the form --name=value"
		printf '%s\n' "$w"
	done | jq -R 'capture("^--(?<key>[a-z0-9-]+)=(?<value>.*)$")' | jq -s .
}

# Our kwokctl.yaml with the ports of this cluster's block among its options and
# TJC_KCM_FLAGS among kube-controller-manager's extraArgs (kwokctl reads only one
# KwokctlConfiguration, so they go into a copy of ours).
kwokctl_config() {
	local -a p
	mapfile -t p < <(cluster_ports)
	((${#p[@]} >= 6)) || die "no ports for cluster '$TJC_CLUSTER'"
	if [[ -n $KCM_FLAGS ]]; then
		local extra
		extra=$(kcm_extra_args)
		yq -y --argjson extra "$extra" \
			'.componentsPatches |= map(if .name == "kube-controller-manager" then .extraArgs += $extra else . end)' \
			"$here/kwokctl.yaml"
	else
		cat "$here/kwokctl.yaml"
	fi
	cat <<EOF
options:
  etcdPort: ${p[0]}
  etcdPeerPort: ${p[1]}
  kubeApiserverPort: ${p[2]}
  kwokControllerPort: ${p[3]}
  kubeControllerManagerPort: ${p[4]}
  kubeSchedulerPort: ${p[5]}
EOF
}

apply_nodes() {
	local want
	want=$(total_nodes)
	say "creating $want nodes: $GH200_NODES GH200 (arm64, 4 GPUs), $H100_NODES H100 (amd64, 8 GPUs), $CPU_NODES CPU-only"
	node_list | k apply --server-side --field-manager=trainjob-local-cluster -f - >/dev/null
	wait_nodes_ready "$want"
}

wait_nodes_ready() {
	local want=$1 ready=0 start=$SECONDS last=-1
	while true; do
		ready=$(k get nodes -l type=kwok -o json |
			jq '[.items[] | select(.status.conditions // [] | any(.type == "Ready" and .status == "True"))] | length')
		if ((ready != last)); then
			say "nodes Ready: $ready/$want"
			last=$ready
		fi
		((ready >= want)) && return 0
		local dead
		dead=$(dead_components | tr '\n' ' ')
		[[ -z $dead ]] || die "${dead% } stopped (logs: $(cluster_dir)/logs)"
		((SECONDS - start > 300)) && die "only $ready of $want nodes became Ready within 300 s"
		sleep 1
	done
}

wait_default_serviceaccount() {
	local start=$SECONDS
	until k get serviceaccount default -n default >/dev/null 2>&1; do
		((SECONDS - start > 120)) && die "the default ServiceAccount never appeared (is kube-controller-manager running?)"
		sleep 1
	done
}

# The kwokctl flags of the optional features asked for.
feature_flags() {
	if [[ $NATIVE_GANG == 1 ]]; then
		printf '%s\n' --kube-feature-gates GenericWorkload=true,GangScheduling=true \
			--kube-runtime-config "$NATIVE_GANG_API=true"
	fi
}

# A running cluster keeps the features it was created with: say so rather than pretend.
check_features() {
	if [[ $NATIVE_GANG == 1 ]] && ! k get --raw "/apis/$NATIVE_GANG_API" >/dev/null 2>&1; then
		die "cluster '$TJC_CLUSTER' runs without native gang scheduling; bring it down first (cluster.sh down)"
	fi
	local w pidf
	pidf="$(cluster_dir)/pids/kube-controller-manager.pid"
	for w in $KCM_FLAGS; do
		tr '\0' '\n' <"/proc/$(<"$pidf")/cmdline" | grep -qxF -- "$w" ||
			die "cluster '$TJC_CLUSTER' runs kube-controller-manager without $w; bring it down first (cluster.sh down)"
	done
	return 0
}

# Kubeflow Trainer and JobSet (deploy/local/kubeflow-trainer.sh) stop with the cluster.
kubeflow_down() {
	[[ ! -d $TJC_CACHE/kubeflow/$TJC_CLUSTER ]] || "$here/kubeflow-trainer.sh" down
}

cmd_up() {
	command -v jq >/dev/null || die "jq is missing; run scripts/install-deps.sh"
	"$here/build-control-plane.sh"
	[[ -n $(kubectl_bin) ]] || die "no kubectl on PATH and none built"
	if is_up; then
		say "cluster '$TJC_CLUSTER' is already running"
		check_features
	else
		if [[ -d $(cluster_dir) ]]; then
			say "cluster '$TJC_CLUSTER' exists but does not answer; recreating it"
			kueue_down
			kubeflow_down
			real_nodes_down
			"$TJC_BIN/kwokctl" --name "$TJC_CLUSTER" delete cluster >/dev/null 2>&1 || true
		fi
		local stages config
		stages=$(kwok_stage_dir)
		mkdir -p "$(dirname "$TJC_KUBECONFIG")"
		rm -f "$TJC_KUBECONFIG"
		config="$(ports_dir)/$TJC_CLUSTER.kwokctl.yaml"
		mkdir -p "$(ports_dir)"
		kwokctl_config >"$config.new"
		mv "$config.new" "$config"
		# The real nodes' bridge before the API server: kwokctl makes its serving certificate
		# for the addresses of this machine's interfaces, so it then names the bridge's
		# address too, where the pods on the real nodes reach the API server (no kube-proxy
		# serves the kubernetes Service). Without real nodes this fails, harmlessly.
		[[ $REAL_NODES != 1 ]] || real_bridge_up >/dev/null 2>&1 || true
		local -a features
		mapfile -t features < <(feature_flags)
		say "starting cluster '$TJC_CLUSTER' (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok)${features[*]:+ with ${features[*]}}${KCM_FLAGS:+; kube-controller-manager $KCM_FLAGS}"
		# PATH first holds our own kubectl, if one was built, for kwokctl's readiness checks.
		PATH="$TJC_BIN:$PATH" "$TJC_BIN/kwokctl" --name "$TJC_CLUSTER" \
			-c "$here/node-stages.yaml" \
			-c "$stages/pod/fast/pod-ready.yaml" \
			-c "$here/stages.yaml" \
			-c "$config" \
			create cluster --runtime binary \
			--enable-crds Logs \
			--etcd-binary "$TJC_BIN/etcd" \
			--kube-apiserver-binary "$TJC_BIN/kube-apiserver" \
			--kube-controller-manager-binary "$TJC_BIN/kube-controller-manager" \
			--kube-scheduler-binary "$TJC_BIN/kube-scheduler" \
			--kwok-controller-binary "$TJC_BIN/kwok" \
			--kubeconfig "$TJC_KUBECONFIG" \
			"${features[@]}" \
			--wait 3m
		check_features
	fi
	apply_nodes
	wait_default_serviceaccount
	real_nodes_up
	# A cluster that ran Kueue gets it back if it stopped.
	if [[ ${TJC_KUEUE:-0} == 1 || -d $(kueue_dir) ]]; then
		kueue_up
	fi
	say "cluster '$TJC_CLUSTER' is ready: $(total_nodes) KWOK nodes$(real_nodes_running && echo ", ${#REAL_NODE_NAMES[@]} real")$(kueue_running && echo ", Kueue $(kueue_version)")"
	cat <<EOF

  export KUBECONFIG=$TJC_KUBECONFIG
  kubectl get nodes -L nvidia.com/gpu.product,kubernetes.io/arch

EOF
}

cmd_down() {
	if [[ -d $(cluster_dir) ]]; then
		kueue_down
		kubeflow_down
		real_nodes_down
		say "stopping cluster '$TJC_CLUSTER'"
		"$TJC_BIN/kwokctl" --name "$TJC_CLUSTER" delete cluster --kubeconfig "$TJC_KUBECONFIG" >/dev/null
		rm -f "$TJC_KUBECONFIG" "$(ports_dir)/$TJC_CLUSTER".{ports,kwokctl.yaml}
		say "cluster '$TJC_CLUSTER' removed"
	else
		say "cluster '$TJC_CLUSTER' is not running"
	fi
}

cmd_status() {
	if is_up && { [[ ! -d $(kueue_dir) ]] || kueue_running; }; then
		say "cluster '$TJC_CLUSTER' is running$(kueue_running && echo " with Kueue $(kueue_version)"); kubeconfig: $TJC_KUBECONFIG"
		real_nodes_status
		k get nodes -L nvidia.com/gpu.product,kubernetes.io/arch,nvidia.com/gpu.count
	else
		local dead
		dead=$(dead_components 2>/dev/null | tr '\n' ' ')
		[[ -d $(kueue_dir) ]] && ! kueue_running && dead+="kueue "
		if [[ -d $(cluster_dir) && -n $dead ]]; then
			say "cluster '$TJC_CLUSTER' is broken: ${dead% } not running (deploy/local/cluster.sh up recreates it)"
		else
			say "cluster '$TJC_CLUSTER' is not running"
		fi
		return 1
	fi
}

case ${1:-} in
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
kubeconfig) echo "$TJC_KUBECONFIG" ;;
nodes) apply_nodes ;;
real-image) real_torch_image ;;
controller-image) real_controller_image ;;
kueue-built) "$here/build-control-plane.sh" --built kueue kueue ;;
*)
	sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
