#!/usr/bin/env bash
# Prints the folder of Kubeflow Trainer's Go module at the pinned release, downloading it into
# the cache on first use. The e2e suites read Kubeflow's own manifests and examples from it
# (manifests/, examples/yaml/), unchanged, so a test runs what a Kubeflow user would apply.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=deploy/local/env.sh
source "$here/env.sh"
# The newest release of github.com/kubeflow/trainer/v2 that the module proxy serves (v2.3.1,
# v2.4.0 and later are refused there; they were not on the proxy when this was pinned).
TJC_KUBEFLOW_VERSION=${TJC_KUBEFLOW_VERSION:-v2.3.0}
mkdir -p "$GOMODCACHE"
dir=$(go env GOMODCACHE)/github.com/kubeflow/trainer/v2@$TJC_KUBEFLOW_VERSION
if [[ ! -d $dir/manifests ]]; then
	echo "kubeflow-module: downloading github.com/kubeflow/trainer/v2@$TJC_KUBEFLOW_VERSION" >&2
	# go mod download needs a module to run in; a throwaway one keeps the repository clean.
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && go mod init tjc.local/kubeflow >/dev/null 2>&1 &&
		GOFLAGS=-modcacherw go mod download -x "github.com/kubeflow/trainer/v2@$TJC_KUBEFLOW_VERSION" 2>&1 |
		grep -E '^# get .*\.zip' | sed 's/^/kubeflow-module: /' >&2 || true)
fi
[[ -d $dir/manifests ]] || { echo "kubeflow-module: $dir has no manifests/" >&2; exit 1; }
echo "$dir"
