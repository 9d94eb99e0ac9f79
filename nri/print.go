// `meshgate-nri --print-seccomp FILE`: the seccomp policy the runtime would apply to a container of a guarded pod,
// given the policy it has (an OCI `linux.seccomp` object in FILE, `null` for none; `-` reads stdin), printed as OCI
// JSON. It goes through NRI's own adjustment code (runtime-tools/generate AdjustSeccompPolicy), so what it prints is
// what containerd hands runc. For operators checking a profile, and for test/nri/seccomp-runc.test.ts, which runs it
// under the real runc.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/runtime-tools/generate"
	rspec "github.com/opencontainers/runtime-spec/specs-go"
)

func printSeccomp(file string, cfg Config) error {
	in := io.Reader(os.Stdin)
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	var oci *rspec.LinuxSeccomp
	if err := json.NewDecoder(in).Decode(&oci); err != nil {
		return fmt.Errorf("%s: not an OCI seccomp object: %w", file, err)
	}
	var have *api.LinuxSeccomp
	if oci != nil {
		have = api.FromOCILinuxSeccomp(oci)
	}
	g := &generate.Generator{Config: &rspec.Spec{Linux: &rspec.Linux{Seccomp: oci}}}
	if err := g.AdjustSeccompPolicy(DenySetID(have, cfg.ProxyUIDs, cfg.ProxyGIDs, runtime.GOARCH)); err != nil {
		return err
	}
	out := json.NewEncoder(os.Stdout)
	out.SetIndent("", "  ")
	return out.Encode(g.Config.Linux.Seccomp)
}
