// meshgate-e2e-cri: the few CRI calls the emulation check of the real-node tier makes against a containerd that
// has no kubelet (test/realnode/emulation): what the kubelet would call, over the same gRPC API (k8s.io/cri-api
// runtime.v1), so containerd's CRI plugin runs its real code path: loads the CNI config through go-cni, creates
// the pod network namespace, runs the chain, starts the pause container.
//
//	meshgate-e2e-cri status SOCKET                                    runtime conditions + verbose info (cniconfig, lastCNILoadStatus)
//	meshgate-e2e-cri runp SOCKET NAME UID NAMESPACE CGROUP_PARENT LOGDIR  RunPodSandbox: {"id": ...} or {"error": ...}
//	meshgate-e2e-cri rmp SOCKET ID                                    StopPodSandbox + RemovePodSandbox
//
// Every answer is one JSON line on stdout and exit status 0; exit 2 is a usage error, 1 a failure to reach the
// socket at all. Built by scripts/build-realnode.sh.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtime "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// A sandbox with the pause container starts in well under a second here; 60 s only bounds a hung runtime.
const callTimeout = 60 * time.Second

func main() {
	if len(os.Args) < 3 {
		usage()
	}
	conn, err := grpc.NewClient("unix://"+os.Args[2], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fmt.Fprintf(os.Stderr, "meshgate-e2e-cri: %v\n", err)
		os.Exit(1)
	}
	defer conn.Close()
	rt := runtime.NewRuntimeServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	switch os.Args[1] {
	case "status":
		r, err := rt.Status(ctx, &runtime.StatusRequest{Verbose: true})
		if err != nil {
			answer(map[string]any{"error": err.Error()})
		}
		conditions := map[string]any{}
		for _, c := range r.GetStatus().GetConditions() {
			conditions[c.Type] = map[string]any{"status": c.Status, "reason": c.Reason, "message": c.Message}
		}
		answer(map[string]any{"conditions": conditions, "info": r.GetInfo()})
	case "runp":
		if len(os.Args) != 8 {
			usage()
		}
		name, uid, namespace, cgroupParent, logDir := os.Args[3], os.Args[4], os.Args[5], os.Args[6], os.Args[7]
		r, err := rt.RunPodSandbox(ctx, &runtime.RunPodSandboxRequest{Config: &runtime.PodSandboxConfig{
			Metadata:     &runtime.PodSandboxMetadata{Name: name, Uid: uid, Namespace: namespace},
			Hostname:     name,
			LogDirectory: logDir,
			Labels:       map[string]string{"meshgate.test/emulation": "true"},
			Linux: &runtime.LinuxPodSandboxConfig{
				// Below the run's own cgroups, so teardown finds and kills the sandbox's processes.
				CgroupParent:    cgroupParent,
				SecurityContext: &runtime.LinuxSandboxSecurityContext{NamespaceOptions: &runtime.NamespaceOption{Network: runtime.NamespaceMode_POD}},
			},
		}})
		if err != nil {
			answer(map[string]any{"error": err.Error()})
		}
		answer(map[string]any{"id": r.PodSandboxId})
	case "rmp":
		if len(os.Args) != 4 {
			usage()
		}
		id := os.Args[3]
		if _, err := rt.StopPodSandbox(ctx, &runtime.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
			answer(map[string]any{"error": "stop: " + err.Error()})
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtime.RemovePodSandboxRequest{PodSandboxId: id}); err != nil {
			answer(map[string]any{"error": "remove: " + err.Error()})
		}
		answer(map[string]any{"removed": id})
	default:
		usage()
	}
}

func answer(v map[string]any) {
	out, _ := json.Marshal(v)
	fmt.Println(string(out))
	os.Exit(0)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: meshgate-e2e-cri status SOCKET | runp SOCKET NAME UID NAMESPACE CGROUP_PARENT LOGDIR | rmp SOCKET ID")
	os.Exit(2)
}
