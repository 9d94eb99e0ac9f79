// Command linkerd-proxy-injector is Linkerd's own proxy injector webhook, the `proxy-injector` subcommand of
// Linkerd's controller image, built from the vendored github.com/linkerd/linkerd2 (go.mod's replace) by
// scripts/build-linkerd.sh. It only calls the real Main: flags, TLS, API watches and the patch are Linkerd's.
package main

import (
	"os"

	proxyinjector "github.com/linkerd/linkerd2/controller/cmd/proxy-injector"
)

func main() {
	proxyinjector.Main(os.Args[1:])
}
