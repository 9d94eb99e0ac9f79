// istio-iptables is Istio's traffic-redirection rule generator (istio.io/istio/tools/istio-iptables/pkg/cmd) as a
// binary of its own. Istio ships no main for it: the istio-init container runs it as `pilot-agent istio-iptables`,
// whose command is exactly this one (pilot/cmd/pilot-agent/app/cmd.go adds iptables.GetCommand(loggingOptions)).
// Building it here instead of pilot-agent keeps the closure small (no Envoy bootstrap, SDS, xDS proxy) while
// generating the same rules, e.g. for netns tests:
//
//	istio-iptables -p 15001 -z 15006 -u 1337 -m REDIRECT -i '*' -x "" -b '*' -d 15090,15021,15020 --dry-run
package main

import (
	"os"

	"istio.io/istio/pkg/log"
	iptables "istio.io/istio/tools/istio-iptables/pkg/cmd"
)

func main() {
	loggingOptions := log.DefaultOptions()
	cmd := iptables.GetCommand(loggingOptions)
	// The injected istio-init passes --log_output_level, a flag of pilot-agent's root command.
	loggingOptions.AttachCobraFlags(cmd)
	if err := cmd.Execute(); err != nil {
		log.Error(err)
		os.Exit(1)
	}
}
