# Kueue on the local cluster, an optional component of cluster.sh (TJC_KUEUE=1); sourced by
# cluster.sh, not run. Everything comes from Kueue's own Go module at the version pinned in
# tools/kueue/go.mod: the binary (built by build-control-plane.sh), its CRDs, its default
# configuration and its webhook configurations. What differs from Kueue's own deployment,
# and why:
#
# - Kueue runs as a process on this machine, as the API server does, so its webhooks are
#   reached through a `url` on the loopback, with a certificate made here (the CA in the
#   webhook configurations and the CRDs' conversion webhooks), and Kueue's internal
#   certificate management (which writes a Secret and certificates for a Service name) is
#   off. With it off Kueue also reads a certificate for its metrics server from the fixed
#   path /etc/kueue/metrics/certs, even with metrics switched off. The script writes nothing
#   under /etc: a throwaway pair is made in the cluster's own folder, and Kueue runs in a
#   mount namespace of its own (unshare; a user namespace too when not run as root) whose
#   /etc is a read-only overlay of that folder's etc/ on the machine's /etc.
# - Only the integration trainer.kubeflow.org/trainjob is enabled, and only Kueue's own
#   webhooks and the TrainJob ones are registered. The TrainJob webhooks see only the jobs
#   that carry kueue.x-k8s.io/queue-name (an objectSelector): Kueue's mutating webhook would
#   otherwise add an empty runtimePatch to every TrainJob, and the other e2e suites, which
#   may run on a cluster with Kueue, compare what they created.
# - Kueue's TrainJob controller watches JobSets (it owns the JobSet that Kubeflow's own
#   controller would create), so JobSet's CRD is installed, from the JobSet module Kueue is
#   built with; no JobSet controller runs and no JobSet is ever created.
# - The visibility API server is off (VisibilityOnDemand): it binds a fixed port, and
#   several clusters share this machine. Leader election is off: one replica.

# shellcheck source=deploy/local/loopback.sh
. "$here/loopback.sh"

kueue_version() {
	sed -n 's/^\s*sigs.k8s.io\/kueue \(v[0-9.]*\).*$/\1/p' "$here/tools/kueue/go.mod" | head -1
}

kueue_module_dir() {
	local dir="$GOMODCACHE/sigs.k8s.io/kueue@$(kueue_version)"
	[[ -d $dir/config ]] || (cd "$here/tools/kueue" && go mod download sigs.k8s.io/kueue >/dev/null)
	[[ -d $dir/config ]] || die "Kueue's module is missing from $dir"
	echo "$dir"
}

# The JobSet module Kueue is built with (its go.mod's requirement), for JobSet's CRD.
jobset_crd() {
	local v dir
	v=$(sed -n 's/^\s*sigs.k8s.io\/jobset \(v[0-9.]*\).*$/\1/p' "$here/tools/kueue/go.mod" | head -1)
	[[ -n $v ]] || die "tools/kueue/go.mod names no sigs.k8s.io/jobset"
	dir="$GOMODCACHE/sigs.k8s.io/jobset@$v"
	[[ -d $dir ]] || (cd "$here/tools/kueue" && go mod download sigs.k8s.io/jobset >/dev/null)
	[[ -f $dir/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml ]] ||
		die "JobSet's CRD is missing from $dir"
	echo "$dir/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml"
}

kueue_dir() { echo "$TJC_CACHE/kueue/$TJC_CLUSTER"; }

# The ports of the cluster's block after the six kwokctl takes: the webhook server, the
# health probes.
kueue_ports() {
	local -a p
	mapfile -t p < <(cluster_ports)
	((${#p[@]} >= 8)) || die "no ports for Kueue in cluster '$TJC_CLUSTER'"
	echo "${p[6]} ${p[7]}"
}

kueue_running() { pid_running "$(kueue_dir)/kueue.pid"; }

# A CA and a serving certificate for 127.0.0.1, made once per cluster.
kueue_certs() { loopback_certs "$(kueue_dir)/certs" trainjob-local-kueue-ca; }

# The files Kueue finds under /etc in its mount namespace (kueue_start): its metrics
# certificate at the fixed path it reads.
kueue_etc() { echo "$(kueue_dir)/etc"; }

kueue_metrics_cert() {
	local d
	d="$(kueue_etc)/kueue/metrics/certs"
	[[ -f $d/tls.crt && -f $d/tls.key ]] && return 0
	mkdir -p "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=kueue-metrics" \
		-addext "subjectAltName=IP:127.0.0.1" -keyout "$d/tls.key" -out "$d/tls.crt" 2>/dev/null
}

# Starts Kueue in the background, its pid in kueue.pid: in a mount namespace of its own
# (private, so nothing is seen outside it) whose /etc shows kueue_etc over the machine's
# /etc. unshare and sh exec in place (setsid too, as a background job of a script is no
# process group leader), so the pid recorded is Kueue's own.
kueue_start() {
	local dir=$1
	local -a ns=(--mount)
	((EUID == 0)) || ns=(--user --map-root-user --mount)
	KUBECONFIG=$TJC_KUBECONFIG setsid unshare "${ns[@]}" -- sh -c \
		'mount -t overlay overlay -o "lowerdir=$1:/etc" /etc && shift && exec "$@"' \
		sh "$(kueue_etc)" "$TJC_BIN/kueue" --config "$dir/config.yaml" \
		>>"$dir/kueue.log" 2>&1 </dev/null &
	echo $! >"$dir/kueue.pid"
}

# Kueue's default configuration with the settings of the local cluster. waitForPodsReady
# is on, as a cluster with gangs runs it: a job admitted whose pods are not all Ready (or
# done) within 30 s is evicted and requeued, again after 5 s, 10 s, ... (at most 60 s), for
# ever (no backoffLimitCount). The pods of the simulated nodes are Ready a second or two after
# they are created, so only a job that cannot start meets the timeout; tests/e2e/test_kueue.py
# counts on these numbers.
kueue_config() {
	local mod=$1 webhook=$2 health=$3
	yq -y --arg certs "$(kueue_dir)/certs" --argjson webhook "$webhook" --arg health "127.0.0.1:$health" '
		.health.healthProbeBindAddress = $health
		| .metrics.bindAddress = "0"
		| .webhook = {host: "127.0.0.1", port: $webhook, certDir: $certs}
		| .leaderElection.leaderElect = false
		| .internalCertManagement = {enable: false}
		| .integrations.frameworks = ["trainer.kubeflow.org/trainjob"]
		| .featureGates = {VisibilityOnDemand: false}
		| .waitForPodsReady = {timeout: "30s", blockAdmission: false,
			requeuingStrategy: {timestamp: "Eviction", backoffBaseSeconds: 5, backoffMaxSeconds: 60}}
	' "$mod/config/components/manager/controller_manager_config.yaml"
}

# Kueue's CRDs, with the conversion webhook its kustomization patches in, on our URL.
kueue_crds() {
	local mod=$1 url=$2 ca=$3 f
	for f in "$mod"/config/components/crd/bases/*.yaml; do
		yq --arg url "$url/convert" --arg ca "$ca" '
			if (.metadata.name | IN("localqueues.kueue.x-k8s.io", "clusterqueues.kueue.x-k8s.io",
				"cohorts.kueue.x-k8s.io", "workloads.kueue.x-k8s.io", "multikueueclusters.kueue.x-k8s.io"))
			then .spec.conversion = {strategy: "Webhook", webhook: {conversionReviewVersions: ["v1"],
				clientConfig: {url: $url, caBundle: $ca}}}
			else . end' "$f"
	done | jq -s '{apiVersion: "v1", kind: "List", items: .}'
}

# Kueue's webhook configurations, named as its deployment names them, keeping the webhooks
# of Kueue's own objects and of TrainJobs.
kueue_webhooks() {
	local mod=$1 url=$2 ca=$3
	yq --arg url "$url" --arg ca "$ca" '
		select(. != null)
		| .metadata.name = "kueue-" + .metadata.name
		| .webhooks |= map(select(.rules[0].apiGroups[0] | IN("kueue.x-k8s.io", "trainer.kubeflow.org"))
			| .clientConfig = {url: ($url + .clientConfig.service.path), caBundle: $ca}
			| if .rules[0].apiGroups[0] == "trainer.kubeflow.org"
			  then .objectSelector = {matchExpressions: [{key: "kueue.x-k8s.io/queue-name", operator: "Exists"}]}
			  else . end)' "$mod/config/components/webhook/manifests.yaml" |
		jq -s '{apiVersion: "v1", kind: "List", items: .}'
}

kueue_up() {
	command -v yq >/dev/null || die "yq is missing; run scripts/install-deps.sh"
	command -v openssl >/dev/null || die "openssl is missing; run scripts/install-deps.sh"
	command -v unshare >/dev/null || die "unshare (util-linux) is missing; run scripts/install-deps.sh"
	if kueue_running; then
		say "Kueue $(kueue_version) is already running"
		return 0
	fi
	local mod dir webhook health url ca
	mod=$(kueue_module_dir)
	dir=$(kueue_dir)
	read -r webhook health <<<"$(kueue_ports)"
	url="https://127.0.0.1:$webhook"
	mkdir -p "$dir"
	kueue_certs
	kueue_metrics_cert
	ca=$(base64 -w0 <"$dir/certs/ca.crt")
	kueue_config "$mod" "$webhook" "$health" >"$dir/config.yaml"
	say "Kueue: CRDs (Kueue $(kueue_version), JobSet's), webhooks on $url"
	# The TrainJob integration starts at once only if the TrainJob API is served when Kueue
	# starts; otherwise it waits with a backoff of up to two minutes.
	k apply -k "$here/../../crds" >/dev/null
	k apply --server-side --force-conflicts --field-manager=trainjob-local-cluster -f "$(jobset_crd)" >/dev/null
	kueue_crds "$mod" "$url" "$ca" |
		k apply --server-side --force-conflicts --field-manager=trainjob-local-cluster -f - >/dev/null
	# kubectl wait fails at once on a CRD so new that it has no conditions yet: ask again.
	local start=$SECONDS
	until k wait --for condition=Established --timeout=30s crd/workloads.kueue.x-k8s.io \
		crd/jobsets.jobset.x-k8s.io crd/trainjobs.trainer.kubeflow.org >/dev/null 2>&1; do
		((SECONDS - start > 90)) && die "the CRDs of Kueue, JobSet and TrainJob were not Established within 90 s"
		sleep 1
	done
	k create namespace kueue-system --dry-run=client -o yaml | k apply -f - >/dev/null
	kueue_webhooks "$mod" "$url" "$ca" |
		k apply --server-side --force-conflicts --field-manager=trainjob-local-cluster -f - >/dev/null
	say "Kueue: starting (log: $dir/kueue.log)"
	kueue_start "$dir"
	start=$SECONDS
	until curl -sf "http://127.0.0.1:$health/readyz" >/dev/null 2>&1; do
		kueue_running || die "Kueue exited; its log ends: $(tail -5 "$dir/kueue.log")"
		((SECONDS - start > 120)) && die "Kueue was not ready within 120 s (log: $dir/kueue.log)"
		sleep 1
	done
	say "Kueue $(kueue_version) is ready"
}

kueue_down() {
	local dir
	dir=$(kueue_dir)
	if kueue_running; then
		say "stopping Kueue"
		stop_pid "$dir/kueue.pid"
	fi
	rm -rf "$dir"
}
