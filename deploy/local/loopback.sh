# Helpers of the components that run as processes on this machine beside the local cluster
# (Kueue, Kubeflow Trainer and JobSet) and whose webhooks the API server reaches on the
# loopback; sourced, not run.

# A CA and a serving certificate for 127.0.0.1 (SAN IP:127.0.0.1) in folder $1, the CA named
# $2; made once, kept while the folder lives: ca.crt (for the caBundle of the webhook
# configurations), tls.crt and tls.key (for the server).
loopback_certs() {
	local d=$1 cn=$2
	[[ -f $d/tls.crt && -f $d/tls.key && -f $d/ca.crt ]] && return 0
	mkdir -p "$d"
	openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=$cn" \
		-keyout "$d/ca.key" -out "$d/ca.crt" 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
		-keyout "$d/tls.key" -out "$d/tls.csr" 2>/dev/null
	openssl x509 -req -in "$d/tls.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
		-days 3650 -extfile <(printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n') \
		-out "$d/tls.crt" 2>/dev/null
	rm -f "$d/tls.csr"
}

# True while the process whose pid file is $1 runs (a zombie does not count).
pid_running() {
	local f=$1 pid state
	[[ -f $f ]] || return 1
	pid=$(<"$f")
	state=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)
	[[ -n $state && $state != Z ]]
}

# Stops the process of pid file $1: SIGTERM, then SIGKILL if it still runs after 30 s.
stop_pid() {
	local f=$1 pid
	pid_running "$f" || return 0
	pid=$(<"$f")
	kill "$pid"
	for _ in $(seq 30); do
		pid_running "$f" || return 0
		sleep 1
	done
	kill -KILL "$pid" 2>/dev/null || true
}
