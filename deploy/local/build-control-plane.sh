#!/usr/bin/env bash
# Builds the local control plane (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok, kwokctl) from their Go modules into a cache outside the repo, the
# real nodes' kubelet and CoreDNS unless TJC_REAL_NODES=0 (deploy/local/real-nodes.sh), and
# Kueue (sigs.k8s.io/kueue/cmd/kueue) too when TJC_KUEUE=1, and Kubeflow Trainer's
# trainer-controller-manager and JobSet's manager when TJC_KUBEFLOW=1 (for the side-by-side
# benchmark, deploy/local/kubeflow-trainer.sh; nothing of them ships in the product).
#
# The pinned versions live in the wrapper modules under tools/. Each binary set is
# stamped with a hash of its wrapper module, so a change of pin rebuilds it and nothing
# else; a second run with unchanged pins returns at once. `--built SET BINARY...` only says
# whether a set is in the cache (cluster.sh kueue-built).
#
# Why wrapper modules: k8s.io/kubernetes requires its staging modules at the fake version
# v0.0.0 and maps them with replace directives, which `go install pkg@version` refuses; the
# replaces of the main module are the only ones Go honours, so tools/k8s/go.mod pins every
# staging module itself. etcd's server module has replaces too, hence tools/etcd.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=deploy/local/env.sh
. "$here/env.sh"
# shellcheck source=deploy/local/kueue.sh
. "$here/kueue.sh"

mkdir -p "$TJC_BIN" "$GOMODCACHE" "$GOCACHE"

say() { printf '[build-control-plane %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

# The hash of a wrapper module: its go.mod, go.sum and its own Go files (CoreDNS's main).
module_hash() {
	{
		cat "$here/tools/$1/go.mod" "$here/tools/$1/go.sum"
		find "$here/tools/$1" -maxdepth 1 -name '*.go' -print0 | sort -z | xargs -0 -r cat
	} | sha256sum | cut -c1-16
}

k8s_version() {
	sed -n 's/^require k8s.io\/kubernetes \(v[0-9.]*\)$/\1/p' "$here/tools/k8s/go.mod"
}

# Runs a long go build and prints a progress line every 30 s, so that a cold build (tens of
# minutes on two cores) never looks like a hang.
build_with_progress() {
	local what=$1
	shift
	local start=$SECONDS
	"$@" &
	local pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		for _ in $(seq 30); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 1
		done
		if kill -0 "$pid" 2>/dev/null; then
			local cached
			cached=$(du -sm "$GOCACHE" 2>/dev/null | cut -f1)
			say "$what: still compiling, $((SECONDS - start)) s so far, build cache ${cached} MiB"
		fi
	done
	wait "$pid"
	say "$what: done in $((SECONDS - start)) s"
}

# Whether the binaries of a set (arguments: the set, its binaries) are in the cache, stamped
# with the hash of its wrapper module as it is now.
cached() {
	local set=$1 b
	shift
	[[ $(cat "$TJC_BIN/.$set.stamp" 2>/dev/null) == "$(module_hash "$set")" ]] || return 1
	for b in "$@"; do [[ -x $TJC_BIN/$b ]] || return 1; done
}

build_set() {
	local set=$1
	shift
	local stamp="$TJC_BIN/.$set.stamp" want
	want=$(module_hash "$set")
	if cached "$set" "$@"; then
		say "$set: cached in $TJC_BIN ($*)"
		return 0
	fi
	say "$set: downloading modules"
	(cd "$here/tools/$set" && go mod download)
	case $set in
	k8s)
		local v major minor ldf
		v=$(k8s_version)
		major=${v#v}
		major=${major%%.*}
		minor=${v#v*.}
		minor=${minor%%.*}
		ldf="-s -w -X k8s.io/component-base/version.gitVersion=$v"
		ldf+=" -X k8s.io/component-base/version.gitMajor=$major"
		ldf+=" -X k8s.io/component-base/version.gitMinor=$minor"
		ldf+=" -X k8s.io/component-base/version.gitTreeState=clean"
		ldf+=" -X k8s.io/client-go/pkg/version.gitVersion=$v"
		local pkgs=()
		for b in "$@"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
		say "k8s: building $* at $v (a cold build takes 20-40 min on two cores)"
		build_with_progress k8s \
			bash -c 'cd "$1" && shift && CGO_ENABLED=0 go build -trimpath -o "$TJC_BIN/" -ldflags "$@"' \
			_ "$here/tools/k8s" "$ldf" "${pkgs[@]}"
		;;
	etcd)
		say "etcd: building"
		build_with_progress etcd \
			bash -c 'cd "$1" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$TJC_BIN/etcd" go.etcd.io/etcd/server/v3' \
			_ "$here/tools/etcd"
		;;
	kwok)
		say "kwok: building kwok and kwokctl"
		build_with_progress kwok \
			bash -c 'cd "$1" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$TJC_BIN/" sigs.k8s.io/kwok/cmd/kwok sigs.k8s.io/kwok/cmd/kwokctl' \
			_ "$here/tools/kwok"
		;;
	coredns)
		# Our own main (tools/coredns/main.go) with only the plugins the Corefile uses.
		say "coredns: building (a cold build takes 2-5 min on two cores)"
		build_with_progress coredns \
			bash -c 'cd "$1" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$TJC_BIN/coredns" .' \
			_ "$here/tools/coredns"
		;;
	kueue)
		say "kueue: building $(kueue_version) (a cold build takes 15-30 min on two cores)"
		build_with_progress kueue \
			bash -c 'cd "$1" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$TJC_BIN/kueue" sigs.k8s.io/kueue/cmd/kueue' \
			_ "$here/tools/kueue"
		;;
	kubeflow)
		# One wrapper module requires both, so Trainer builds with the JobSet its go.mod names.
		say "kubeflow: building Kubeflow Trainer's trainer-controller-manager (a cold build takes 3-10 min on two cores)"
		build_with_progress trainer-controller-manager \
			bash -c 'cd "$1" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$TJC_BIN/trainer-controller-manager" github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager' \
			_ "$here/tools/kubeflow"
		say "kubeflow: building JobSet's manager (about a minute more: most packages are shared)"
		build_with_progress jobset-controller-manager \
			bash -c 'cd "$1" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$TJC_BIN/jobset-controller-manager" sigs.k8s.io/jobset' \
			_ "$here/tools/kubeflow"
		;;
	esac
	echo "$want" >"$stamp"
}

# `build-control-plane.sh --built SET BINARY...` builds nothing: its exit status says whether
# the set's binaries are in the cache at the pinned versions (0) or would be built (1).
if [[ ${1:-} == --built ]]; then
	shift
	cached "$@"
	exit
fi

command -v go >/dev/null || {
	echo "build-control-plane: go is not installed; run scripts/install-deps.sh first" >&2
	exit 1
}

build_set etcd etcd
build_set kwok kwok kwokctl
k8s_bins=(kube-apiserver kube-controller-manager kube-scheduler)
# kubectl comes from the machine when it has one; otherwise it is built with the rest.
if ! command -v kubectl >/dev/null 2>&1 || [[ -x $TJC_BIN/kubectl ]]; then
	k8s_bins+=(kubectl)
fi
# The real nodes' kubelet comes from the same Kubernetes module as the control plane.
if [[ ${TJC_REAL_NODES:-1} == 1 ]]; then
	k8s_bins+=(kubelet)
fi
build_set k8s "${k8s_bins[@]}"
if [[ ${TJC_REAL_NODES:-1} == 1 ]]; then
	build_set coredns coredns
fi
# Kueue is optional (TJC_KUEUE=1): only clusters that run it pay for its build.
if [[ ${TJC_KUEUE:-0} == 1 ]]; then
	build_set kueue kueue
fi
# So are Kubeflow Trainer and JobSet (TJC_KUBEFLOW=1), for the side-by-side benchmark only.
if [[ ${TJC_KUBEFLOW:-0} == 1 ]]; then
	build_set kubeflow trainer-controller-manager jobset-controller-manager
fi
say "all control-plane binaries are in $TJC_BIN"
