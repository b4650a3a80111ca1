# The local cluster's real nodes: two kubelets on this machine (real-0 and real-1) beside the
# KWOK nodes, each with a containerd of its own that runs the pods' containers with runc, pod
# networking through the standard CNI plugins (one bridge both nodes share, a host-local
# range of addresses each), and CoreDNS for the cluster domain; sourced by cluster.sh, not
# run.
#
# Why each piece is as it is:
# - One containerd per node: a kubelet takes every pod sandbox its runtime lists for its own
#   and kills those it does not know, so two kubelets on one containerd kill each other's pods.
# - One cgroup root per node (cgroupRoot), for the same reason: a kubelet removes the pod
#   cgroups under its kubepods cgroup that belong to no pod of its own.
# - CoreDNS runs on this machine, not in a pod, bound to the bridge's own address, which is
#   the kubelets' clusterDNS: pods reach it over the bridge, and no Service address and so
#   no kube-proxy is needed. Headless Services, which a TrainJob's pods use to find each
#   other, need nothing but the DNS records CoreDNS serves from their EndpointSlices.
# - No registry is reachable: the pause image is built from deploy/local/real/pause.c, the
#   pods' image is the Debian base image of deploy/image.sh, both imported into each
#   containerd, and the pods take them with imagePullPolicy Never or IfNotPresent.
# - The kubelet is built from the control plane's Kubernetes module (build-control-plane.sh);
#   this machine mounts cgroup v1, which a kubelet of 1.35 and newer refuses unless told
#   (failCgroupV1: false). containerd 1.6 (Debian 12) has no RuntimeConfig call, so the
#   kubelet takes the cgroup driver (cgroupfs) from its own config.
#
# Traffic stays on this machine: the kubelets, CoreDNS and the pods listen on the bridge's
# addresses, and the bridge has no route out (no masquerade, no forwarding). The bridge's own
# address is the nodes' InternalIP too (a kubelet refuses a loopback one), each kubelet on a
# port of its own.

REAL_NODES=${TJC_REAL_NODES:-1}
REAL_NODE_NAMES=(real-0 real-1)
REAL_LABEL=trainjob.flame.dev/real
REAL_CNI_BIN=/usr/lib/cni
REAL_PAUSE_IMAGE=localhost/trainjob-controller-pause:1
REAL_TEST_IMAGE=docker.io/library/debian:bookworm
# The training image (deploy/local/real/torch-cpu, built by deploy/image.sh torch-cpu), which
# only the clusters that run training import: `cluster.sh real-image`, not `up`.
REAL_TORCH_IMAGE=localhost/trainjob-torch-cpu:latest
REAL_CLUSTER_DOMAIN=cluster.local
# The controller's own image (deploy/image.sh build, this machine's architecture) under the
# name deploy/local/in-cluster runs: `cluster.sh controller-image`.
REAL_CONTROLLER_IMAGE=localhost/trainjob-controller:local

# On disk: each node's containerd root (images, snapshots), kubelet root, pod logs and
# configs; the sockets, containerd's state and the pid files live under /run.
real_dir() { echo "$TJC_CACHE/real/$TJC_CLUSTER"; }
real_run_dir() { echo "/run/trainjob-controller/$TJC_CLUSTER"; }
real_images_dir() { echo "$TJC_CACHE/real/images"; }
real_cgroup_root() { echo "/trainjob-controller/$TJC_CLUSTER/$1"; }

real_say() { printf '[cluster %s] real nodes: %s\n' "$(date +%H:%M:%S)" "$*"; }

# The cluster's network, from its port block so that two clusters never share one: the bridge
# tjcbrN with 10.(200+N).0.1/16, real-I's pods in 10.(200+N).(I+1).0/24.
real_net_index() {
	local first
	first=$(head -1 "$(ports_dir)/$TJC_CLUSTER.ports")
	echo $((((first - PORT_BASE) / PORT_BLOCK) % 50))
}
real_bridge() { echo "tjcbr$(real_net_index)"; }
real_net_prefix() { echo "10.$((200 + $(real_net_index)))"; }
real_dns_ip() { echo "$(real_net_prefix).0.1"; }

# The kubelets' ports: the two after the control plane's six in the cluster's block.
real_kubelet_port() {
	local -a p
	mapfile -t p < <(cluster_ports)
	echo "${p[$((6 + $1))]}"
}

# Why a real kubelet cannot run here, in one line, or nothing when it can.
real_check() {
	local c
	[[ $(uname -s) == Linux ]] || {
		echo "not Linux"
		return
	}
	[[ $(id -u) == 0 ]] || {
		echo "not root (a kubelet and containerd need root)"
		return
	}
	for c in containerd ctr runc ip podman cc; do
		command -v "$c" >/dev/null || {
			echo "$c is not installed (scripts/install-deps.sh installs it)"
			return
		}
	done
	for c in bridge host-local loopback; do
		[[ -x $REAL_CNI_BIN/$c ]] || {
			echo "the CNI plugin $REAL_CNI_BIN/$c is missing (containernetworking-plugins)"
			return
		}
	done
	if [[ $(stat -f -c %T /sys/fs/cgroup 2>/dev/null) != cgroup2fs ]]; then
		for c in cpu memory pids; do
			[[ -d /sys/fs/cgroup/$c && -w /sys/fs/cgroup/$c ]] || {
				echo "the cgroup v1 controller $c is not mounted writable at /sys/fs/cgroup/$c"
				return
			}
		done
	fi
	[[ -x $TJC_BIN/kubelet && -x $TJC_BIN/coredns ]] || {
		echo "kubelet or coredns was not built"
		return
	}
	local probe=tjcprobe$$
	ip link add "$probe" type bridge 2>/dev/null || {
		echo "cannot create a network bridge (ip link add ... type bridge failed: no CAP_NET_ADMIN?)"
		return
	}
	ip link del "$probe"
}

# The pause image and the pods' image as archives for `ctr images import`, made once: the
# pause image again when deploy/local/real/pause.c changes. 1 when one could not be made,
# with why in real_failure.
real_images_build() {
	local dir pause_hash image=$here/../image.sh
	dir=$(real_images_dir)
	mkdir -p "$dir"
	pause_hash=$(sha256sum "$here/real/pause.c" | cut -c1-16)
	if [[ ! -f $dir/pause.tar || $(cat "$dir/pause.stamp" 2>/dev/null) != "$pause_hash" ]]; then
		real_say "building the pause image from deploy/local/real/pause.c"
		local root
		root=$(mktemp -d)
		if ! cc -O2 -s -static -o "$root/pause" "$here/real/pause.c" >"$root.log" 2>&1 ||
			! tar -C "$root" -cf "$root.tar" pause ||
			! "$image" podman import --change 'ENTRYPOINT ["/pause"]' "$root.tar" "$REAL_PAUSE_IMAGE" >"$root.log" 2>&1 ||
			! "$image" podman save --format docker-archive -o "$dir/pause.tar.new" "$REAL_PAUSE_IMAGE" >"$root.log" 2>&1; then
			real_failure="the pause image could not be built: $(tail -1 "$root.log")"
			rm -rf "$root" "$root.tar" "$root.log"
			return 1
		fi
		mv "$dir/pause.tar.new" "$dir/pause.tar"
		rm -rf "$root" "$root.tar" "$root.log"
		echo "$pause_hash" >"$dir/pause.stamp"
	fi
	if [[ ! -f $dir/debian.tar ]]; then
		real_say "saving the pods' image $REAL_TEST_IMAGE (made from Debian's packages once, by deploy/image.sh)"
		if ! "$image" base >"$dir/debian.log" 2>&1 ||
			! "$image" podman save --format docker-archive -o "$dir/debian.tar.new" "$REAL_TEST_IMAGE" >"$dir/debian.log" 2>&1; then
			real_failure="the pods' image $REAL_TEST_IMAGE could not be made: $(tail -1 "$dir/debian.log")"
			return 1
		fi
		mv "$dir/debian.tar.new" "$dir/debian.tar"
		rm -f "$dir/debian.log"
	fi
}

real_snapshotter() {
	if grep -qw overlay /proc/filesystems; then echo overlayfs; else echo native; fi
}

# containerd's config for node $1: its own root, state, socket, CNI config and streaming port.
# restrict_oom_score_adj: the kubelet asks for an OOM score below containerd's own for the
# pause container (-998) and Guaranteed pods, which only CAP_SYS_RESOURCE may set, and a
# machine that runs its tests in a sandbox or VM may lack it (runc init then dies with
# "failed to update /proc/self/oom_score_adj: Permission denied"): containerd raises such
# scores to its own instead.
real_containerd_config() {
	local n=$1 d r
	d="$(real_dir)/$n"
	r="$(real_run_dir)/$n"
	cat <<EOF
version = 2
root = "$d/containerd"
state = "$r/containerd"
[grpc]
  address = "$r/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$REAL_PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_cdi = false
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "$(real_snapshotter)"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$REAL_CNI_BIN"
    conf_dir = "$d/cni"
EOF
}

# The CNI network of node $1 (index $2): the shared bridge, the node's own range of addresses.
real_cni_config() {
	local n=$1 i=$2 net
	net=$(real_net_prefix)
	jq -n --arg name "tjc-$n" --arg bridge "$(real_bridge)" --arg subnet "$net.0.0/16" \
		--arg start "$net.$((i + 1)).2" --arg last "$net.$((i + 1)).254" --arg gw "$net.0.1" \
		--arg data "$(real_dir)/$n/ipam" '{
		cniVersion: "1.0.0", name: $name,
		plugins: [{type: "bridge", bridge: $bridge, isGateway: true, ipMasq: false, hairpinMode: true,
			ipam: {type: "host-local", dataDir: $data,
				ranges: [[{subnet: $subnet, rangeStart: $start, rangeEnd: $last, gateway: $gw}]]}}]}'
}

# The kubelet's config for node $1 (index $2). Its API takes anonymous requests, as the API
# server sends them (kwokctl gives it no kubelet client certificate), and listens on the
# bridge's address only. The eviction and image GC thresholds are at their lowest: a
# developer's fuller disk must not evict the tests' pods or remove the imported images, which
# no registry could give back.
real_kubelet_config() {
	local n=$1 i=$2 d r
	d="$(real_dir)/$n"
	r="$(real_run_dir)/$n"
	cat <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $(real_dns_ip)
port: $(real_kubelet_port "$i")
readOnlyPort: 0
healthzPort: 0
containerRuntimeEndpoint: unix://$r/containerd.sock
cgroupDriver: cgroupfs
cgroupRoot: $(real_cgroup_root "$n")
failCgroupV1: false
failSwapOn: false
podLogsDir: $d/pod-logs
clusterDomain: $REAL_CLUSTER_DOMAIN
clusterDNS: [$(real_dns_ip)]
resolvConf: ""
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
  x509: {clientCAFile: $(cluster_dir)/pki/ca.crt}
authorization: {mode: AlwaysAllow}
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
maxPods: 20
registerWithTaints:
  - {key: $REAL_LABEL, value: "true", effect: NoSchedule}
EOF
}

# A client certificate for node $1 (user system:node:$1 in group system:nodes, as the Node
# authorizer and NodeRestriction expect), signed by the cluster's CA, and its kubeconfig.
real_kubeconfig() {
	local n=$1 d pki server
	d="$(real_dir)/$n"
	pki="$(cluster_dir)/pki"
	openssl req -newkey rsa:2048 -nodes -subj "/O=system:nodes/CN=system:node:$n" \
		-keyout "$d/node.key" -out "$d/node.csr" 2>/dev/null
	openssl x509 -req -in "$d/node.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
		-CAserial "$d/ca.srl" -days 365 -out "$d/node.crt" 2>/dev/null
	server=$(k config view --minify -o jsonpath='{.clusters[0].cluster.server}')
	cat <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: local
    cluster: {server: "$server", certificate-authority: "$pki/ca.crt"}
users:
  - name: $n
    user: {client-certificate: "$d/node.crt", client-key: "$d/node.key"}
contexts:
  - name: $n
    context: {cluster: local, user: $n}
current-context: $n
EOF
}

real_corefile() {
	cat <<EOF
$REAL_CLUSTER_DOMAIN:53 {
    bind $(real_dns_ip)
    errors
    kubernetes $REAL_CLUSTER_DOMAIN {
        kubeconfig $TJC_KUBECONFIG
    }
    cache 5
}
EOF
}

# Starts "$2..." in the background as a process of its own session, its pid in $1.pid and
# its output in $1.log.
real_spawn() {
	local base=$1
	shift
	setsid "$@" >"$base.log" 2>&1 </dev/null &
	echo $! >"$base.pid"
}

real_ctr() { ctr --address "$(real_run_dir)/$1/containerd.sock" --namespace k8s.io "${@:2}"; }

real_bridge_up() {
	local br
	br=$(real_bridge)
	ip link show "$br" >/dev/null 2>&1 || ip link add "$br" type bridge
	ip addr replace "$(real_dns_ip)/16" dev "$br"
	ip link set "$br" up
}

# The cgroup the kubelet of node $1 puts its pods under (its cgroupRoot), which must exist:
# in every cgroup v1 hierarchy, or in the unified one with the controllers the kubelet needs
# turned on along its path.
real_cgroup_make() {
	local path h
	path=$(real_cgroup_root "$1")
	if [[ $(stat -f -c %T /sys/fs/cgroup) == cgroup2fs ]]; then
		local dir=/sys/fs/cgroup part
		for part in ${path//\// }; do
			echo "+cpu +cpuset +memory +pids" >"$dir/cgroup.subtree_control"
			dir+="/$part"
			mkdir -p "$dir"
		done
		return
	fi
	for h in /sys/fs/cgroup/*/; do
		[[ $h == */unified/ ]] || mkdir -p "$h${path#/}"
	done
}

# Starts containerd, the kubelet and CoreDNS of each real node and waits until the nodes are
# Ready; 1 when they could not be, with what went wrong in real_failure.
real_nodes_start() {
	local n i d r images
	images=$(real_images_dir)
	real_bridge_up
	mkdir -p "$(real_run_dir)"
	real_corefile >"$(real_dir)/Corefile"
	real_spawn "$(real_run_dir)/coredns" "$TJC_BIN/coredns" -conf "$(real_dir)/Corefile"
	for i in "${!REAL_NODE_NAMES[@]}"; do
		n=${REAL_NODE_NAMES[$i]}
		d="$(real_dir)/$n"
		r="$(real_run_dir)/$n"
		mkdir -p "$d/cni" "$d/kubelet" "$d/pod-logs" "$r"
		real_containerd_config "$n" >"$d/containerd.toml"
		real_cni_config "$n" "$i" >"$d/cni/10-tjc.conflist"
		real_kubelet_config "$n" "$i" >"$d/kubelet.yaml"
		real_kubeconfig "$n" >"$d/kubeconfig"
		real_spawn "$r/containerd" containerd --config "$d/containerd.toml"
	done
	real_say "started containerd for ${REAL_NODE_NAMES[*]}; importing the pause image and $REAL_TEST_IMAGE into each"
	local -a imports=()
	for n in "${REAL_NODE_NAMES[@]}"; do
		r="$(real_run_dir)/$n"
		local start=$SECONDS
		until real_ctr "$n" version >/dev/null 2>&1; do
			((SECONDS - start < 30)) && pid_running "$r/containerd.pid" || {
				real_failure="the containerd of $n did not start: $(tail -1 "$r/containerd.log")"
				return 1
			}
			sleep 0.5
		done
		{
			real_ctr "$n" images import --snapshotter "$(real_snapshotter)" "$images/pause.tar" &&
				real_ctr "$n" images import --snapshotter "$(real_snapshotter)" "$images/debian.tar"
		} >"$r/import.log" 2>&1 &
		imports+=($!)
	done
	for i in "${!REAL_NODE_NAMES[@]}"; do
		n=${REAL_NODE_NAMES[$i]}
		wait "${imports[$i]}" || {
			real_failure="the images could not be imported into the containerd of $n: $(tail -1 "$(real_run_dir)/$n/import.log")"
			return 1
		}
	done
	for i in "${!REAL_NODE_NAMES[@]}"; do
		n=${REAL_NODE_NAMES[$i]}
		d="$(real_dir)/$n"
		r="$(real_run_dir)/$n"
		real_cgroup_make "$n"
		real_say "$n: starting the kubelet (port $(real_kubelet_port "$i"))"
		real_spawn "$r/kubelet" "$TJC_BIN/kubelet" --config "$d/kubelet.yaml" \
			--kubeconfig "$d/kubeconfig" --root-dir "$d/kubelet" --cert-dir "$d/kubelet/pki" \
			--hostname-override "$n" --node-ip "$(real_dns_ip)" \
			--node-labels "$REAL_LABEL=true,type=real"
	done
	local start=$SECONDS ready last=-1
	while true; do
		ready=$(k get nodes -l "$REAL_LABEL=true" -o json 2>/dev/null |
			jq '[.items[] | select(.status.conditions // [] | any(.type == "Ready" and .status == "True"))] | length')
		if ((ready != last)); then
			real_say "Ready: $ready/${#REAL_NODE_NAMES[@]}"
			last=$ready
		fi
		((ready >= ${#REAL_NODE_NAMES[@]})) && break
		for n in "${REAL_NODE_NAMES[@]}"; do
			r="$(real_run_dir)/$n"
			pid_running "$r/kubelet.pid" || {
				real_failure="the kubelet of $n stopped: $(grep -E '^E|rror' "$r/kubelet.log" | tail -1)"
				return 1
			}
		done
		((SECONDS - start < 120)) || {
			real_failure="only $ready of ${#REAL_NODE_NAMES[@]} became Ready within 120 s"
			return 1
		}
		sleep 1
	done
	pid_running "$(real_run_dir)/coredns.pid" || {
		real_failure="CoreDNS stopped: $(tail -1 "$(real_run_dir)/coredns.log")"
		return 1
	}
}

# Imports the podman image $1 into each real node's containerd that lacks this build of it,
# through the archive $2 of the node image folder (saved again when the build changed); the
# image's ID is the stamp of both. 1 when it could not, with why on stderr.
real_image_import() {
	local image=$1 archive id n i r
	archive="$(real_images_dir)/$2"
	real_nodes_running || {
		echo "the cluster $TJC_CLUSTER has no real nodes running: $(cat "$(real_why_file)" 2>/dev/null || echo "cluster.sh up starts them")" >&2
		return 1
	}
	id=$("$here/../image.sh" podman image inspect --format '{{.Id}}' "$image") || return 1
	mkdir -p "$(real_images_dir)"
	if [[ ! -f $archive || $(cat "$archive.stamp" 2>/dev/null) != "$id" ]]; then
		real_say "saving $image for the nodes' containerd"
		"$here/../image.sh" podman save --format docker-archive -o "$archive.new" "$image" || return 1
		mv "$archive.new" "$archive"
		echo "$id" >"$archive.stamp"
	fi
	local -a imports=() names=()
	for n in "${REAL_NODE_NAMES[@]}"; do
		r="$(real_dir)/$n/$2.imported"
		[[ $(cat "$r" 2>/dev/null) == "$id" ]] && continue
		real_say "$n: importing $image ($(du -m "$archive" | cut -f1) MB)"
		{ real_ctr "$n" images import --snapshotter "$(real_snapshotter)" "$archive" >/dev/null && echo "$id" >"$r"; } &
		imports+=($!)
		names+=("$n")
	done
	for i in "${!imports[@]}"; do
		wait "${imports[$i]}" || {
			echo "$image could not be imported into the containerd of ${names[$i]}" >&2
			return 1
		}
	done
	real_say "$image is on ${REAL_NODE_NAMES[*]}"
}

# `cluster.sh real-image`: the training image, built when its inputs changed, on the nodes.
real_torch_image() {
	"$here/../image.sh" torch-cpu && real_image_import "$REAL_TORCH_IMAGE" torch-cpu.tar
}

# `cluster.sh controller-image`: the controller's image of this machine's architecture, built
# when its sources changed, on the nodes as REAL_CONTROLLER_IMAGE (deploy/local/in-cluster
# runs it there).
real_controller_image() {
	local arch
	arch=$(dpkg --print-architecture)
	"$here/../image.sh" build "linux/$arch" &&
		"$here/../image.sh" podman tag "localhost/trainjob-controller:$arch" "$REAL_CONTROLLER_IMAGE" &&
		real_image_import "$REAL_CONTROLLER_IMAGE" controller.tar
}

real_nodes_running() {
	local n
	pid_running "$(real_run_dir)/coredns.pid" || return 1
	for n in "${REAL_NODE_NAMES[@]}"; do
		pid_running "$(real_run_dir)/$n/containerd.pid" && pid_running "$(real_run_dir)/$n/kubelet.pid" || return 1
	done
}

# Where `up` writes why the cluster has no real nodes, for the tests that need them.
real_why_file() { echo "$TJC_CACHE/real/$TJC_CLUSTER.why"; }

# `up`'s part: the real nodes, or one line saying why there are none.
real_nodes_up() {
	[[ $REAL_NODES == 1 ]] || return 0
	if real_nodes_running; then
		real_say "running (${REAL_NODE_NAMES[*]})"
		return 0
	fi
	real_nodes_down quiet
	mkdir -p "$(real_dir)"
	local why real_failure=""
	why=$(real_check)
	if [[ -z $why ]]; then
		if ! real_images_build; then
			why=$real_failure
		elif ! real_nodes_start; then
			why="$real_failure (logs: $(real_run_dir))"
		fi
	fi
	if [[ -n $why ]]; then
		real_say "none, KWOK nodes only: $why"
		[[ -d $(real_run_dir) ]] && real_nodes_down quiet keep-logs
		# The bridge `up` made before the API server, which `down` would not find.
		ip link del "$(real_bridge)" 2>/dev/null || true
		mkdir -p "$(dirname "$(real_why_file)")"
		echo "$why" >"$(real_why_file)"
	fi
}

# Stops the real nodes and removes all they leave: the pods' containers, mounts, network
# namespaces and cgroups, the bridge, the Node objects. $1 quiet says nothing when there is
# nothing to stop; $2 keep-logs leaves the logs under /run.
real_nodes_down() {
	local quiet=${1:-} keep=${2:-} n r d found=0
	for n in "${REAL_NODE_NAMES[@]}"; do
		[[ -e $(real_run_dir)/$n || -e $(real_dir)/$n ]] && found=1
	done
	[[ -e $(real_run_dir)/coredns.pid ]] && found=1
	((found)) || return 0
	[[ $quiet == quiet ]] || real_say "stopping ${REAL_NODE_NAMES[*]} and CoreDNS"
	for n in "${REAL_NODE_NAMES[@]}"; do
		r="$(real_run_dir)/$n"
		stop_pid "$r/kubelet.pid"
		if pid_running "$r/containerd.pid"; then
			local t
			for t in $(real_ctr "$n" tasks ls -q 2>/dev/null); do
				real_ctr "$n" tasks kill -s SIGKILL "$t" >/dev/null 2>&1 || true
			done
			for t in $(real_ctr "$n" tasks ls -q 2>/dev/null); do
				real_ctr "$n" tasks delete -f "$t" >/dev/null 2>&1 || true
			done
			for t in $(real_ctr "$n" containers ls -q 2>/dev/null); do
				real_ctr "$n" containers delete "$t" >/dev/null 2>&1 || true
			done
		fi
		stop_pid "$r/containerd.pid"
	done
	stop_pid "$(real_run_dir)/coredns.pid"
	real_netns_remove
	local m
	for d in "$(real_dir)" "$(real_run_dir)"; do
		findmnt -rn -o TARGET | { grep -F "$d/" || true; } | sort -r | while read -r m; do
			umount -l "$m" 2>/dev/null || true
		done
	done
	local h
	for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		if [[ -d ${h}trainjob-controller/$TJC_CLUSTER ]]; then
			find "${h}trainjob-controller/$TJC_CLUSTER" -depth -type d -exec rmdir {} + 2>/dev/null || true
			rmdir "${h}trainjob-controller" 2>/dev/null || true
		fi
	done
	if [[ -f $(ports_dir)/$TJC_CLUSTER.ports ]]; then
		ip link del "$(real_bridge)" 2>/dev/null || true
	fi
	if [[ -f $TJC_KUBECONFIG ]]; then
		k delete node "${REAL_NODE_NAMES[@]}" --ignore-not-found --request-timeout=10s >/dev/null 2>&1 || true
	fi
	rm -rf "$(real_dir)" "$(real_why_file)"
	[[ $keep == keep-logs ]] || rm -rf "$(real_run_dir)"
	rmdir "$(dirname "$(real_run_dir)")" 2>/dev/null || true
	return 0
}

# The network namespaces the CNI made for this cluster's pods: those whose eth0 has an
# address of the cluster's network.
real_netns_remove() {
	[[ -f $(ports_dir)/$TJC_CLUSTER.ports && -d /run/netns ]] || return 0
	local net ns
	net="$(real_net_prefix)."
	for ns in /run/netns/cni-*; do
		[[ -e $ns ]] || continue
		if ip -n "$(basename "$ns")" -4 -o addr show 2>/dev/null | grep -qF " inet $net"; then
			ip netns del "$(basename "$ns")" 2>/dev/null || { umount -l "$ns" && rm -f "$ns"; }
		fi
	done
}

real_nodes_status() {
	[[ $REAL_NODES == 1 ]] || return 0
	if real_nodes_running; then
		echo "real nodes: ${REAL_NODE_NAMES[*]} (containerd, kubelet) and CoreDNS at $(real_dns_ip) running"
	elif [[ -d $(real_run_dir) ]]; then
		echo "real nodes: not all running (logs: $(real_run_dir))"
	fi
}
