// meshgate-nri: meshgate's NRI plugin (policy.go says what it decides). It connects to the runtime's NRI socket
// (containerd: plugins."io.containerd.nri.v1.nri".socket_path, default /var/run/nri/nri.sock; CRI-O: [crio.nri]),
// subscribes to CreateContainer only, and exits when the connection ends (the DaemonSet restarts it; while it is
// away, containers are created without it — the node agent's guard still stops what runs as the proxy, and
// containerd's NRI default validator can require the plugin: docs/security.md).
//
//	meshgate-nri --proxy-uid 1337 --proxy-gid 1337 --mesh-container istio-proxy --mesh-container istio-init \
//	  --mesh-container istio-validation [--socket /var/run/nri/nri.sock] [--seccomp=false]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
)

// pluginName and pluginIdx: how the runtime lists and orders the plugin (lower indexes run first).
const (
	pluginName = "meshgate"
	pluginIdx  = "10"
)

type plugin struct {
	cfg    Config
	logger *log.Logger
}

// CreateContainer is the runtime's call for every container it is about to create.
func (p *plugin) CreateContainer(
	_ context.Context, pod *api.PodSandbox, ctr *api.Container,
) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	d := p.cfg.Decide(pod, ctr, runtime.GOARCH)
	if d.Refusal != "" {
		p.logger.Printf("refused: %s", d.Refusal)
		return nil, nil, errors.New(d.Refusal)
	}
	if d.Seccomp == nil {
		return nil, nil, nil
	}
	adjust := &api.ContainerAdjustment{}
	adjust.SetLinuxSeccompPolicy(d.Seccomp)
	p.logger.Printf("container %s of pod %s/%s: set*id to the proxy's identity denied (seccomp, %d rules)",
		ctr.GetName(), pod.GetNamespace(), pod.GetName(), len(d.Seccomp.GetSyscalls()))
	return adjust, nil, nil
}

// Synchronize is the runtime's first call after the plugin registered: from here on every creation passes through
// CreateContainer. (Containers already running are the node agent's guard's to judge.)
func (p *plugin) Synchronize(
	_ context.Context, pods []*api.PodSandbox, containers []*api.Container,
) ([]*api.ContainerUpdate, error) {
	p.logger.Printf("registered with the runtime: %d pods, %d containers running", len(pods), len(containers))
	return nil, nil
}

type ids []uint32

func (v *ids) String() string { return fmt.Sprint([]uint32(*v)) }
func (v *ids) Set(s string) error {
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return fmt.Errorf("not a UID/GID: %q", s)
	}
	*v = append(*v, uint32(n))
	return nil
}

type names []string

func (v *names) String() string     { return strings.Join(*v, ",") }
func (v *names) Set(s string) error { *v = append(*v, s); return nil }

func main() {
	var cfg Config
	var uids, gids ids
	var mesh, gidAnnotations names
	socket := flag.String("socket", "", "the runtime's NRI socket (default: NRI's /var/run/nri/nri.sock)")
	flag.Var(&uids, "proxy-uid", "a UID the mesh's redirect exempts (repeatable)")
	flag.Var(&gids, "proxy-gid", "a GID the mesh's redirect exempts (repeatable)")
	flag.Var(&mesh, "mesh-container", "a name of the mesh's own containers (repeatable)")
	flag.Var(&gidAnnotations, "exempt-gid-annotation", "a pod annotation naming a further exempt GID (repeatable)")
	flag.BoolVar(&cfg.Seccomp, "seccomp", true, "deny set*id calls to the proxy's identity by seccomp")
	printFile := flag.String("print-seccomp", "", "print the policy a guarded container gets from the one in FILE, and exit")
	flag.Parse()
	logger := log.New(os.Stderr, "meshgate-nri: ", log.LstdFlags|log.Lmsgprefix)
	if len(uids) == 0 || len(mesh) == 0 {
		logger.Fatal("--proxy-uid and --mesh-container are required (the chart renders them from meshgate's profile)")
	}
	cfg.ProxyUIDs, cfg.ProxyGIDs, cfg.MeshContainers, cfg.ExemptGIDAnnotations = uids, gids, mesh, gidAnnotations
	if *printFile != "" {
		if err := printSeccomp(*printFile, cfg); err != nil {
			logger.Fatal(err)
		}
		return
	}

	opts := []stub.Option{stub.WithPluginName(pluginName), stub.WithPluginIdx(pluginIdx)}
	if *socket != "" {
		opts = append(opts, stub.WithSocketPath(*socket))
	}
	s, err := stub.New(&plugin{cfg: cfg, logger: logger}, opts...)
	if err != nil {
		logger.Fatalf("cannot create the plugin: %v", err)
	}
	logger.Printf("connecting (proxy UIDs %v, GIDs %v, mesh containers %v, seccomp %v)", uids, gids, mesh, cfg.Seccomp)
	if err := s.Run(context.Background()); err != nil {
		logger.Fatalf("connection to the runtime ended: %v", err)
	}
	logger.Print("connection to the runtime ended")
	os.Exit(1)
}
