#!/usr/bin/env bash
# Installs every system package the project needs on a Debian 12 machine: the C toolchain
# and libraries of the controller, the static checkers, the fuzzing runtime, Prometheus and
# promtool (the alert tests and the Prometheus e2e), podman and mmdebstrap for the image
# (deploy/image.sh), etcdctl (the soak compacts the local cluster's etcd), containerd, runc
# and the CNI plugins for the local cluster's real nodes (deploy/local/real-nodes.sh), and Go
# for the local control plane. Safe to run again: packages already present are left alone.
set -euo pipefail

packages=(
	build-essential pkg-config meson ninja-build git ca-certificates curl openssl
	libuv1-dev libcurl4-openssl-dev libfyaml-dev libcjson-dev libcmocka-dev libmicrohttpd-dev
	clang clang-format clang-tidy cppcheck libclang-rt-14-dev valgrind
	jq yq procps psmisc iproute2 python3 python3-venv util-linux mount
	libgnutls28-dev openssh-client
	prometheus python3-yaml
	podman runc mmdebstrap
	etcd-client
	containerd containernetworking-plugins
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
if ((${#missing[@]})); then
	echo "install-deps: installing ${#missing[@]} Debian packages: ${missing[*]}"
	"${sudo[@]}" apt-get update -q
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
else
	echo "install-deps: all ${#packages[@]} Debian packages are present"
fi

# Go builds the test control plane. Debian 12's golang (1.19) is too old for Kubernetes'
# modules, so a machine without a recent go gets Debian's backport when it is offered.
need_go=1.26
have_go=$(command -v go >/dev/null && go env GOVERSION | sed 's/^go//' || true)
if [[ -z $have_go ]] || [[ $(printf '%s\n%s\n' "$need_go" "$have_go" | sort -V | head -1) != "$need_go" ]]; then
	echo "install-deps: go >= $need_go is required (found: ${have_go:-none})" >&2
	echo "install-deps: install Go $need_go or newer and put it on PATH" >&2
	exit 1
fi
echo "install-deps: go $have_go found"
