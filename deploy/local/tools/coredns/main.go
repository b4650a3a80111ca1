// CoreDNS with only the plugins the local cluster's Corefile uses. The module's own main
// (github.com/coredns/coredns) registers every plugin, and with them the SDKs of three
// clouds, a tracer and more: a longer download and build for nothing the cluster serves.
package main

import (
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/log"
)

func main() {
	coremain.Run()
}
