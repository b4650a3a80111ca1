#!/usr/bin/env bash
# Kubeflow Trainer and JobSet beside a local cluster, for the side-by-side benchmark
# (tests/bench/bench_vs_kubeflow.py); test tooling only, nothing of it ships in the product.
#
#   kubeflow-trainer.sh build   build trainer-controller-manager and JobSet's manager (cached)
#   kubeflow-trainer.sh up      install their CRDs, webhook configurations and Kubeflow's
#                               runtimes on the running cluster, start both managers, wait
#                               until their webhooks answer (harmless when they run)
#   kubeflow-trainer.sh down    stop both managers and remove their webhook configurations
#   kubeflow-trainer.sh status  say whether both run
#   kubeflow-trainer.sh pids    print "<name> <pid>" for each manager
#   kubeflow-trainer.sh versions  print "trainer <version>" and "jobset <version>"
#
# TJC_CLUSTER names the cluster (default "bench-kubeflow"); it must be up already
# (TJC_CLUSTER=bench-kubeflow deploy/local/cluster.sh up). Never on a cluster where our own
# controller runs: both would own the same TrainJobs, and the CRDs installed here are
# Kubeflow's own.
#
# Everything comes from the modules pinned in tools/kubeflow/go.mod: Trainer at the newest
# release the Go module proxy serves, and the JobSet that Trainer's go.mod names. What differs
# from their own deployments, and why:
#
# - Both managers run as processes on this machine, as the API server does, so their webhooks
#   are reached through a `url` on the loopback with a certificate made here; the projects'
#   own webhook configurations (their kustomize patches applied: names, object selectors) get
#   that url and CA. The webhooks cannot be left out: JobSet's controller relies on defaults
#   that only its mutating webhook sets. Their internal certificate management (which writes
#   a Secret and certificates for a Service name) is off. Trainer then reads its serving
#   certificate from $TMPDIR/k8s-webhook-server/serving-certs, so it gets its own TMPDIR.
# - Leader election is off (one replica), metrics are off; everything else keeps the shipped
#   configuration, client limits included (Trainer 50 QPS / burst 100, JobSet 500 / 500), and
#   Trainer the shipped --zap-log-level=2.
# - They use the ports of the cluster's block after kwokctl's six (the two Kueue would take
#   among them), so Kueue and this never share a cluster.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export TJC_CLUSTER=${TJC_CLUSTER:-bench-kubeflow}
# shellcheck source=deploy/local/env.sh
. "$here/env.sh"
# shellcheck source=deploy/local/loopback.sh
. "$here/loopback.sh"

say() { printf '[kubeflow-trainer %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() {
	printf 'kubeflow-trainer: %s\n' "$*" >&2
	exit 1
}

FIELD_MANAGER=trainjob-local-cluster
TRAINER_MODULE=github.com/kubeflow/trainer/v2
JOBSET_MODULE=sigs.k8s.io/jobset

kubectl_bin() {
	if [[ -x $TJC_BIN/kubectl ]]; then
		echo "$TJC_BIN/kubectl"
	else
		command -v kubectl
	fi
}

k() { "$(kubectl_bin)" --kubeconfig "$TJC_KUBECONFIG" "$@"; }

apply() { k apply --server-side --force-conflicts --field-manager="$FIELD_MANAGER" "$@" >/dev/null; }

module_version() {
	sed -n "s|^\s*$1 \(v[0-9.]*\).*$|\1|p" "$here/tools/kubeflow/go.mod" | head -1
}

# The folder of a module of tools/kubeflow/go.mod in the module cache, downloaded on first use.
module_dir() {
	local v dir
	v=$(module_version "$1")
	[[ -n $v ]] || die "tools/kubeflow/go.mod names no $1"
	dir="$GOMODCACHE/$1@$v"
	[[ -d $dir ]] || (cd "$here/tools/kubeflow" && go mod download "$1" >/dev/null)
	[[ -d $dir ]] || die "$1@$v is missing from $GOMODCACHE"
	echo "$dir"
}

state_dir() { echo "$TJC_CACHE/kubeflow/$TJC_CLUSTER"; }

running() { pid_running "$(state_dir)/$1.pid"; }

# The ports after kwokctl's six in the cluster's block (deploy/local/cluster.sh): Trainer's
# webhook server, JobSet's, Trainer's health probes, JobSet's.
ports() {
	local f
	f="$TJC_CACHE/ports/$TJC_CLUSTER.ports"
	[[ -s $f ]] || die "cluster '$TJC_CLUSTER' has no ports; is it up?"
	sed -n '7,10p' "$f" | tr '\n' ' '
}

cmd_build() { TJC_KUBEFLOW=1 "$here/build-control-plane.sh"; }

trainer_config() {
	local mod=$1 webhook=$2 health=$3
	yq -y --argjson webhook "$webhook" --arg health "127.0.0.1:$health" '
		.health.healthProbeBindAddress = $health
		| .metrics.bindAddress = "0"
		| .webhook = {host: "127.0.0.1", port: $webhook}
		| .leaderElection.leaderElect = false
		| .certManagement.enable = false
	' "$mod/manifests/base/manager/controller_manager_config.yaml"
}

jobset_config() {
	local mod=$1 webhook=$2 health=$3 certs=$4
	yq -y --argjson webhook "$webhook" --arg health "127.0.0.1:$health" --arg certs "$certs" '
		.health.healthProbeBindAddress = $health
		| .metrics.bindAddress = "0"
		| .webhook = {host: "127.0.0.1", port: $webhook, certDir: $certs}
		| .leaderElection.leaderElect = false
		| .internalCertManagement = {enable: false}
	' "$mod/config/components/manager/controller_manager_config.yaml"
}

# The webhook configurations of a kustomization, each webhook sent to $url + its path; the
# configurations' names get prefix $4 (JobSet's default overlay adds "jobset-").
webhooks() {
	local kustomization=$1 url=$2 ca=$3 prefix=$4
	"$(kubectl_bin)" kustomize "$kustomization" |
		yq --arg url "$url" --arg ca "$ca" --arg prefix "$prefix" '
			select(. != null and (.kind | IN("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")))
			| .metadata.name = $prefix + .metadata.name
			| .webhooks |= map(.clientConfig = {url: ($url + .clientConfig.service.path), caBundle: $ca})' |
		jq -s '{apiVersion: "v1", kind: "List", items: .}'
}

webhook_names() {
	echo mutatingwebhookconfiguration/defaulter.trainer.kubeflow.org
	echo validatingwebhookconfiguration/validator.trainer.kubeflow.org
	echo mutatingwebhookconfiguration/jobset-mutating-webhook-configuration
	echo validatingwebhookconfiguration/jobset-validating-webhook-configuration
}

# Starts manager $1 (binary in $TJC_BIN) with the remaining arguments, logging into the state
# folder; TMPDIR is its own folder there.
start() {
	local name=$1 dir
	shift
	dir=$(state_dir)
	mkdir -p "$dir/$name-tmp"
	KUBECONFIG=$TJC_KUBECONFIG TMPDIR=$dir/$name-tmp setsid "$TJC_BIN/$name" "$@" \
		>>"$dir/$name.log" 2>&1 </dev/null &
	echo $! >"$dir/$name.pid"
}

wait_ready() {
	local name=$1 port=$2 start=$SECONDS dir
	dir=$(state_dir)
	until curl -sf "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
		running "$name" || die "$name exited; its log ends: $(tail -5 "$dir/$name.log")"
		((SECONDS - start > 120)) && die "$name was not ready within 120 s (log: $dir/$name.log)"
		sleep 1
	done
}

# A JobSet sent with a server-side dry run passes JobSet's mutating and validating webhooks:
# it succeeds once the manager has registered its webhook handlers, not only started its
# server.
jobset_probe() {
	cat <<'EOF'
{"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
 "metadata": {"name": "webhook-probe", "namespace": "default"},
 "spec": {"replicatedJobs": [{"name": "w", "template": {"spec": {"template": {"spec": {
   "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}]}}
EOF
}

jobset_accepted() { jobset_probe | k create --dry-run=server -f - >/dev/null; }

# Retries "$@" for up to 90 s: what a webhook decides fails until its handler is registered.
until_accepted() {
	local what=$1 start=$SECONDS out
	shift
	until out=$("$@" 2>&1); do
		((SECONDS - start > 90)) && die "$what was refused for 90 s: $out"
		sleep 1
	done
}

cmd_up() {
	command -v yq >/dev/null || die "yq is missing; run scripts/install-deps.sh"
	command -v openssl >/dev/null || die "openssl is missing; run scripts/install-deps.sh"
	k get --raw /readyz --request-timeout=5s >/dev/null 2>&1 ||
		die "cluster '$TJC_CLUSTER' does not answer; start it first (TJC_CLUSTER=$TJC_CLUSTER deploy/local/cluster.sh up)"
	[[ ! -d $TJC_CACHE/kueue/$TJC_CLUSTER ]] ||
		die "cluster '$TJC_CLUSTER' runs Kueue, which takes the ports Trainer and JobSet would use"
	if running trainer-controller-manager && running jobset-controller-manager; then
		say "Kubeflow Trainer and JobSet already run on cluster '$TJC_CLUSTER'"
		return 0
	fi
	cmd_build
	local trainer jobset dir tw jw th jh url_t url_j ca
	trainer=$(module_dir "$TRAINER_MODULE")
	jobset=$(module_dir "$JOBSET_MODULE")
	dir=$(state_dir)
	read -r tw jw th jh <<<"$(ports)"
	[[ -n $jh ]] || die "the port block of cluster '$TJC_CLUSTER' is too short"
	mkdir -p "$dir"
	loopback_certs "$dir/certs" trainjob-local-kubeflow-ca
	mkdir -p "$dir/trainer-controller-manager-tmp/k8s-webhook-server/serving-certs"
	cp "$dir/certs/tls.crt" "$dir/certs/tls.key" "$dir/trainer-controller-manager-tmp/k8s-webhook-server/serving-certs/"
	ca=$(base64 -w0 <"$dir/certs/ca.crt")
	url_t="https://127.0.0.1:$tw"
	url_j="https://127.0.0.1:$jw"
	trainer_config "$trainer" "$tw" "$th" >"$dir/trainer.yaml"
	jobset_config "$jobset" "$jw" "$jh" "$dir/certs" >"$dir/jobset.yaml"

	say "CRDs of Trainer $(module_version "$TRAINER_MODULE") and JobSet $(module_version "$JOBSET_MODULE")"
	apply -k "$trainer/manifests/base/crds"
	apply -f "$jobset/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"
	local start=$SECONDS
	until k wait --for condition=Established --timeout=30s crd/trainjobs.trainer.kubeflow.org \
		crd/clustertrainingruntimes.trainer.kubeflow.org crd/jobsets.jobset.x-k8s.io >/dev/null 2>&1; do
		((SECONDS - start > 90)) && die "the CRDs of Trainer and JobSet were not Established within 90 s"
		sleep 1
	done
	say "webhooks: Trainer's on $url_t, JobSet's on $url_j"
	webhooks "$trainer/manifests/base/webhook" "$url_t" "$ca" "" | apply -f -
	webhooks "$jobset/config/components/webhook" "$url_j" "$ca" jobset- | apply -f -

	say "starting JobSet's manager and Trainer's (logs: $dir/*.log)"
	running jobset-controller-manager || start jobset-controller-manager --config "$dir/jobset.yaml"
	running trainer-controller-manager ||
		start trainer-controller-manager --config "$dir/trainer.yaml" --zap-log-level=2
	wait_ready jobset-controller-manager "$jh"
	wait_ready trainer-controller-manager "$th"
	# Trainer's validating webhook checks the runtimes: their apply succeeds once it answers.
	say "Kubeflow's runtimes, and JobSet's webhooks answering"
	until_accepted "Kubeflow's runtimes" apply -k "$trainer/manifests/base/runtimes"
	until_accepted "a JobSet (server-side dry run)" jobset_accepted
	say "Kubeflow Trainer $(module_version "$TRAINER_MODULE") and JobSet $(module_version "$JOBSET_MODULE") are ready on cluster '$TJC_CLUSTER'"
}

cmd_down() {
	local dir name
	dir=$(state_dir)
	if [[ ! -d $dir ]]; then
		say "Kubeflow Trainer and JobSet are not running on cluster '$TJC_CLUSTER'"
		return 0
	fi
	for name in trainer-controller-manager jobset-controller-manager; do
		if running "$name"; then
			say "stopping $name"
			stop_pid "$dir/$name.pid"
		fi
	done
	# The webhook configurations would refuse every TrainJob, JobSet and JobSet pod with no
	# manager behind them; a cluster already gone has none to remove.
	if k get --raw /readyz --request-timeout=5s >/dev/null 2>&1; then
		webhook_names | xargs "$(kubectl_bin)" --kubeconfig "$TJC_KUBECONFIG" delete --ignore-not-found >/dev/null
	fi
	rm -rf "$dir"
}

cmd_status() {
	if running trainer-controller-manager && running jobset-controller-manager; then
		say "Kubeflow Trainer $(module_version "$TRAINER_MODULE") and JobSet $(module_version "$JOBSET_MODULE") run on cluster '$TJC_CLUSTER' (logs: $(state_dir))"
	else
		say "Kubeflow Trainer and JobSet are not running on cluster '$TJC_CLUSTER'"
		return 1
	fi
}

cmd_pids() {
	local name
	for name in trainer-controller-manager jobset-controller-manager; do
		running "$name" || die "$name is not running on cluster '$TJC_CLUSTER'"
		echo "$name $(<"$(state_dir)/$name.pid")"
	done
}

case ${1:-} in
build) cmd_build ;;
up) cmd_up ;;
down) cmd_down ;;
status) cmd_status ;;
pids) cmd_pids ;;
versions)
	echo "trainer $(module_version "$TRAINER_MODULE")"
	echo "jobset $(module_version "$JOBSET_MODULE")"
	;;
*)
	sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
