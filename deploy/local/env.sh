# Shared settings of the local cluster scripts; sourced, not run.
# Everything built or downloaded lives under one cache folder outside the repository.
TJC_CACHE=${TJC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/trainjob-controller}
TJC_BIN=${TJC_BIN:-$TJC_CACHE/bin}
TJC_CLUSTER=${TJC_CLUSTER:-trainjob}
TJC_KUBECONFIG=${TJC_KUBECONFIG:-$TJC_CACHE/kubeconfig-$TJC_CLUSTER}
export TJC_CACHE TJC_BIN TJC_CLUSTER TJC_KUBECONFIG
export GOMODCACHE=${TJC_GOMODCACHE:-$TJC_CACHE/gomod}
export GOCACHE=${TJC_GOCACHE:-$TJC_CACHE/gobuild}
# The wrapper modules are resolved through the module proxy; -mod=mod lets go fill go.sum
# entries that a fresh module cache lacks.
export GOFLAGS=-mod=mod
export PATH=/usr/local/go/bin:$PATH
# kwokctl keeps its clusters under this folder.
export KWOK_WORKDIR=${KWOK_WORKDIR:-$TJC_CACHE/kwok}
