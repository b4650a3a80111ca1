#!/usr/bin/env bash
# Builds the controller's image from deploy/Containerfile with podman, as root, without a
# daemon, in a store of its own under the cache folder (vfs storage, which works on any file
# system, inside a container or a VM without overlayfs), and runs podman against that store.
#
#   image.sh build [PLATFORM]  build the image for PLATFORM (default: this machine's,
#                              e.g. linux/arm64), tagged localhost/trainjob-controller:PLATFORM's arch
#   image.sh save ARCH FILE    write the image of ARCH as a gzipped OCI archive to FILE and
#                              print its size in bytes
#   image.sh base              make the Debian base image below if the store lacks it (the
#                              local cluster's real nodes run their pods on it)
#   image.sh torch-cpu         build the training image of the local cluster's real nodes,
#                              localhost/trainjob-torch-cpu:latest, from deploy/local/real/torch-cpu
#                              unless the store has it built from the same inputs
#   image.sh podman ARGS...    podman with this store and the run settings below
#
# The Containerfile starts from debian:bookworm. No container registry is needed: when the
# store has no such image, it is made here from Debian's packages (mmdebstrap, the minbase
# variant, the same content as Debian's own image) and tagged as docker.io/library/debian:bookworm,
# once; builds then never pull. The layers podman caches live in the same store, so a
# rebuild after a source change only redoes the compile and the assembly of the root.
#
# Settings that make podman work where the process lacks CAP_SYS_RESOURCE and cgroups are a
# v1/v2 hybrid (as in a CI sandbox or a VM without systemd): runc with the cgroupfs manager
# (crun refuses hybrid cgroups), the events in a file (no journald), and explicit ulimits no
# higher than podman's own hard limits (podman asks for 1048576 open files otherwise, which
# only CAP_SYS_RESOURCE may set). The containers use the host's network.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source=deploy/local/env.sh
. "$here/local/env.sh"

store=$TJC_CACHE/containers
base_image=docker.io/library/debian:bookworm
image=localhost/trainjob-controller
torch_image=localhost/trainjob-torch-cpu:latest
torch_dir=$repo/deploy/local/real/torch-cpu

die() {
	printf 'image: %s\n' "$*" >&2
	exit 1
}

pod() {
	podman --root "$store/storage" --runroot "${TMPDIR:-/tmp}/trainjob-controller-podman-$(id -u)" \
		--storage-driver vfs --runtime runc --cgroup-manager cgroupfs --events-backend file "$@"
}

ulimits=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096)

base() {
	pod image exists "$base_image" && return
	command -v mmdebstrap >/dev/null || die "mmdebstrap is missing (scripts/install-deps.sh installs it)"
	local tar
	tar=$(mktemp --suffix=.tar)
	echo "image: making $base_image from Debian's packages (once)"
	mmdebstrap --variant=minbase --quiet bookworm "$tar"
	pod import --change 'CMD ["bash"]' "$tar" "$base_image" >/dev/null
	rm -f "$tar"
}

arch_of() { # linux/arm64 -> arm64
	local a=${1#*/}
	echo "${a%%/*}"
}

build() {
	local platform=${1:-linux/$(dpkg --print-architecture)}
	local arch
	arch=$(arch_of "$platform")
	base
	# The build stage runs on this machine's platform whatever the target (FROM
	# --platform=$BUILDPLATFORM), so the base image is only ever needed for it. Podman 4.3
	# sets BUILDPLATFORM for RUN but not in FROM lines unless it is passed explicitly.
	local host=linux/$(dpkg --print-architecture)
	local started=$SECONDS
	pod build --pull=never --layers --network host "${ulimits[@]}" --platform "$platform" \
		--build-arg BUILDPLATFORM="$host" \
		-f "$repo/deploy/Containerfile" -t "$image:$arch" "$repo"
	prune_before "$started"
}

# Removes the untagged images older than the build that started at $1 (in $SECONDS): each
# rebuild leaves the image it replaced, and the layers only it used, untagged, and in a vfs
# store every layer is a whole copy of its root. The build's own layers stay as the next
# build's cache.
prune_before() {
	echo "image: removing the untagged images that earlier builds left"
	pod image prune -f --filter "until=$((SECONDS - $1 + 1))s" >/dev/null
}

# The training image, built again only when a file of its folder changed: the hash of their
# names and contents, and the ID of the image built from them, are kept beside the store.
torch_cpu() {
	local hash stamp=$store/torch-cpu.inputs
	hash=$(cd "$torch_dir" && sha256sum -- * | sha256sum | cut -c1-16)
	if [[ -f $stamp && $(cat "$stamp") == "$hash $(pod image inspect --format '{{.Id}}' "$torch_image" 2>/dev/null)" ]]; then
		echo "image: $torch_image is built from these inputs ($hash)"
		return
	fi
	base
	echo "image: building $torch_image from deploy/local/real/torch-cpu (inputs $hash; Debian's" \
		"python3-torch, openmpi-bin and openssh-server, about 300 MB of packages the first time)"
	local started=$SECONDS
	pod build --pull=never --layers --network host "${ulimits[@]}" \
		-f "$torch_dir/Containerfile" -t "$torch_image" "$torch_dir"
	echo "$hash $(pod image inspect --format '{{.Id}}' "$torch_image")" >"$stamp"
	echo "image: built $torch_image in $((SECONDS - started)) s"
	prune_before "$started"
}

save() {
	local arch=${1:?arch} out=${2:?file}
	local dir
	dir=$(mktemp -d)
	pod save --format oci-archive -o "$dir/image.tar" "$image:$arch" >/dev/null
	gzip -9 -c "$dir/image.tar" >"$out"
	rm -rf "$dir"
	stat -c %s "$out"
}

case ${1:-} in
base) base ;;
build) build "${@:2}" ;;
save) save "${@:2}" ;;
torch-cpu) torch_cpu ;;
podman)
	shift
	case ${1:-} in
	run | create) pod "$1" "${ulimits[@]}" "${@:2}" ;;
	*) pod "$@" ;;
	esac
	;;
*) die "usage: image.sh build [PLATFORM] | save ARCH FILE | base | torch-cpu | podman ARGS..." ;;
esac
