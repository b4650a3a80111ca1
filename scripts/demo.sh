#!/usr/bin/env bash
# The main job (README.md, "The two commands"): a local simulated GPU cluster with the
# controller running against it, and two example TrainJobs going through it, from Created to Running to
# Complete, with their pods on GH200 nodes; then a job whose worker crashes once, its
# message in the status and its pod kept for `kubectl logs` while the next attempt runs; and
# last a TrainJob that really trains, on the cluster's two real CPU nodes
# (examples/torch-cpu-2x2.yaml), with what its ranks said.
#
#   scripts/demo.sh         bring everything up and run the examples (again)
#   scripts/demo.sh down    stop the controller and the cluster
#
# The controller keeps running afterwards (its log: ~/.cache/trainjob-controller/demo.log),
# so more TrainJobs can be applied by hand. TJC_CLUSTER=NAME runs the demo on a cluster of
# that name (its controller's pid and log then carry the name too); the controller listens
# on 127.0.0.1:8080 (metrics) and :8081 (probes) either way, so one demo runs at a time.
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"
# shellcheck source=deploy/local/env.sh
. deploy/local/env.sh

suffix= again=
if [[ $TJC_CLUSTER != trainjob ]]; then
	suffix=-$TJC_CLUSTER
	again="TJC_CLUSTER=$TJC_CLUSTER "
fi
pidfile=$TJC_CACHE/demo$suffix.pid
logfile=$TJC_CACHE/demo$suffix.log
# The shipped config with the GPU class of the real nodes, which the runtime torch-cpu selects.
config=$TJC_CACHE/demo$suffix-config.yaml
examples=(examples/vit-single-gpu.yaml examples/gh200-4x4.yaml)

say() { printf '\n[demo %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
k() { kubectl --kubeconfig "$TJC_KUBECONFIG" "$@"; }

stop_controller() {
	if [[ -f $pidfile ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
		kill -TERM "$(cat "$pidfile")"
		while kill -0 "$(cat "$pidfile")" 2>/dev/null; do sleep 0.2; done
	fi
	rm -f "$pidfile"
}

if [[ ${1:-} == down ]]; then
	stop_controller
	deploy/local/cluster.sh down
	exit 0
fi

scripts/install-deps.sh
say "building the controller"
[[ -f build/release/build.ninja ]] || meson setup build/release >/dev/null
ninja -C build/release trainjob-controller | tail -1

deploy/local/cluster.sh up

say "installing the CRDs and the GPU-class runtimes"
k apply -k crds/ >/dev/null
# kubectl wait fails at once, rather than waiting, on a CRD so new that it has no conditions
# yet (".status.conditions accessor error"): ask again for a minute.
for try in $(seq 60); do
	k wait --for condition=Established --timeout=60s crd/trainjobs.trainer.kubeflow.org \
		>/dev/null 2>&1 && break
	if ((try == 60)); then
		echo "demo: the TrainJob CRD did not become Established" >&2
		exit 1
	fi
	sleep 1
done
until k apply -k crds/runtimes >/dev/null 2>&1; do sleep 1; done
# What Kubeflow's Python SDK reads (its version), so that its clients print no warning.
k apply -k deploy/kubeflow-sdk >/dev/null
k get clustertrainingruntimes

say "starting the controller (log: $logfile)"
stop_controller
if curl -s -o /dev/null http://127.0.0.1:8081/readyz; then
	echo "demo: 127.0.0.1:8081 is taken, by the demo of another cluster? (TJC_CLUSTER=NAME scripts/demo.sh down stops it)" >&2
	exit 1
fi
sed '/^gpuClasses:$/r deploy/local/real/gpu-class.yaml' deploy/config/config.yaml >"$config"
build/release/trainjob-controller --kubeconfig "$TJC_KUBECONFIG" --config "$config" \
	--metrics-bind-address 127.0.0.1:8080 --health-probe-bind-address 127.0.0.1:8081 \
	>>"$logfile" 2>&1 &
echo $! >"$pidfile"
until curl -sf http://127.0.0.1:8081/readyz >/dev/null; do
	kill -0 "$(cat "$pidfile")" 2>/dev/null || {
		tail -20 "$logfile"
		exit 1
	}
	sleep 0.2
done
echo "ready: http://127.0.0.1:8081/readyz, metrics on http://127.0.0.1:8080/metrics"

say "applying ${examples[*]}"
for f in "${examples[@]}"; do
	name=$(sed -n 's/^  name: //p' "$f" | head -1)
	k delete trainjob "$name" --ignore-not-found --wait=true >/dev/null
done
k delete trainjob crash-demo --ignore-not-found --wait=true >/dev/null
for f in "${examples[@]}"; do k apply -f "$f"; done

say "watching the TrainJobs until they finish (the simulated pods run for 20 s)"
# The table without its AGE column, whose values change every second; the next column
# starts where its header does.
without_age() {
	awk 'NR == 1 {
		a = index($0, "AGE")
		n = match(substr($0, a + 3), /[^ ]/)
		r = n ? a + 2 + n : length($0) + 1
	}
	{ print substr($0, 1, a - 1) substr($0, r) }'
}
# Prints the table of the TrainJobs named whenever a row changes, until each is Complete or
# Failed, for at most $1 seconds.
watch_jobs() {
	local limit=$1 start=$SECONDS last="" states table
	shift
	while true; do
		# The states first, then the table: once every state is final, so is the table shown.
		states=$(for job in "$@"; do k get trainjob "$job" -o jsonpath='{.status.state}{"\n"}'; done)
		table=$(k get trainjobs "$@" -o wide)
		# Printed again when a row changes but for its age, as `kubectl get -w` prints a row
		# when its object changes.
		if [[ $(without_age <<<"$table") != "$last" ]]; then
			printf '\n%s\n' "$table"
			last=$(without_age <<<"$table")
		fi
		if ! grep -qvE '^(Complete|Failed)$' <<<"$states"; then break; fi
		if ((SECONDS - start > limit)); then
			echo "demo: $* did not finish within $limit s" >&2
			exit 1
		fi
		sleep 1
	done
}
watch_jobs 300 vit-cifar10 vit-l-4x4

say "their pods, each on its own GH200 node"
k get pods -l trainer.kubeflow.org/trainjob-name -o wide \
	-L trainer.kubeflow.org/trainjob-name,trainjob.flame.dev/rank
echo
k get nodes -l nvidia.com/gpu.product=NVIDIA-GH200-480GB -L kubernetes.io/arch,nvidia.com/gpu.count

say "events of vit-l-4x4"
k describe trainjob vit-l-4x4 | sed -n '/^Events:/,$p'

say "a worker that crashes: its message in the status, its pod kept for kubectl logs"
# The simulated kubelet serves the crashed container's log from a file (a KWOK Logs object)
# and fails it with the end of that log as its termination message, as the kubelet does
# under terminationMessagePolicy FallbackToLogsOnError.
crash_log=$TJC_CACHE/demo$suffix-crash.log
{
	echo "2026-12-01T12:00:00.000000000Z stdout F epoch 1 step 200 loss 1.87"
	echo "2026-12-01T12:00:01.000000000Z stderr F Traceback (most recent call last):"
	echo '2026-12-01T12:00:01.000000000Z stderr F   File "/workspace/train.py", line 42, in <module>'
	echo "2026-12-01T12:00:01.000000000Z stderr F torch.OutOfMemoryError: CUDA out of memory"
} >"$crash_log"
k delete trainjob crash-demo --ignore-not-found --wait=true >/dev/null
k apply -f - >/dev/null <<YAML
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: crash-demo
spec:
  runtimeRef: {name: torch-gh200}
  trainer:
    numNodes: 2
    command: [torchrun, /workspace/train.py]
    resourcesPerNode: {limits: {nvidia.com/gpu: 4}}
  podTemplateOverrides:
  - targetJobs: [{name: node}]
    metadata: {annotations: {sim.trainjob.flame.dev/run-time: 120s}}
---
apiVersion: kwok.x-k8s.io/v1alpha1
kind: Logs
metadata:
  name: crash-demo-node-0-1-a0
spec:
  logs: [{containers: [node], logsFile: "$crash_log"}]
YAML
wait_pod() { # name phase
	local start=$SECONDS
	until [[ $(k get pod "$1" -o jsonpath='{.status.phase}' 2>/dev/null) == "$2" ]]; do
		((SECONDS - start < 120)) || {
			echo "demo: pod $1 was not $2 within 120 s" >&2
			exit 1
		}
		sleep 1
	done
}
wait_pod crash-demo-node-0-1-a0 Running
# The message is what the kubelet keeps of the log: its last lines.
k annotate pod crash-demo-node-0-1-a0 sim.trainjob.flame.dev/fail-exit-code=1 \
	"sim.trainjob.flame.dev/fail-message=$(cut -d' ' -f4- "$crash_log" | tail -3)" >/dev/null
wait_pod crash-demo-node-0-0-a1 Running
wait_pod crash-demo-node-0-1-a1 Running
k describe trainjob crash-demo | sed -n '/Last Failure:/,/Restart Count:/p'
echo
k get pods -l trainer.kubeflow.org/trainjob-name=crash-demo -L trainjob.flame.dev/failed-attempt
echo
echo "\$ kubectl logs -l trainer.kubeflow.org/trainjob-name=crash-demo,trainjob.flame.dev/failed-attempt"
k logs -l trainer.kubeflow.org/trainjob-name=crash-demo,trainjob.flame.dev/failed-attempt

say "a TrainJob that really trains: examples/torch-cpu-2x2.yaml on the real nodes real-0 and real-1"
# The training image is built once (a few minutes) and again only when its folder
# deploy/local/real/torch-cpu changes; each real node's containerd imports it once.
if deploy/local/cluster.sh real-image; then
	k apply -f deploy/local/real/torch-cpu.yaml >/dev/null
	k delete trainjob cpu-train --ignore-not-found --wait=true >/dev/null
	k apply -f examples/torch-cpu-2x2.yaml
	watch_jobs 300 cpu-train
	echo
	k get pods -l trainer.kubeflow.org/trainjob-name=cpu-train -o wide
	echo
	# Each rank's lines but those of its first nine steps.
	echo "\$ kubectl logs -l trainer.kubeflow.org/trainjob-name=cpu-train --prefix --tail=-1 | grep '] rank ' | grep -v 'step [1-9]/'"
	k logs -l trainer.kubeflow.org/trainjob-name=cpu-train --prefix --tail=-1 | grep '] rank ' | grep -v 'step [1-9]/'
else
	echo "demo: no real training here (the line above says why)"
fi

cat <<EOF

The controller is still running (pid $(cat "$pidfile")). Try:
  export KUBECONFIG=$TJC_KUBECONFIG
  kubectl get tj
  build/release/trainjob-controller render -f examples/gh200-4x4.yaml
  curl -s 127.0.0.1:8080/metrics | grep ^trainjob_
Stop everything with: ${again}scripts/demo.sh down
EOF
