package main

import (
	"strings"
	"testing"

	"github.com/containerd/nri/pkg/api"
)

var istio = Config{
	ProxyUIDs:      []uint32{1337},
	ProxyGIDs:      []uint32{1337},
	MeshContainers: []string{"istio-proxy", "istio-init", "istio-validation"},
	Seccomp:        true,
}

var linkerd = Config{
	ProxyUIDs:            []uint32{2102},
	MeshContainers:       []string{"linkerd-proxy", "linkerd-init", "linkerd-network-validator"},
	ExemptGIDAnnotations: []string{"config.linkerd.io/proxy-gid"},
	Seccomp:              true,
}

const status = `{"version":1,"mode":"cni","initContainers":["meshgate-validation"],"containers":[]}`

func pod(annotations map[string]string) *api.PodSandbox {
	return &api.PodSandbox{Name: "web", Namespace: "demo", Annotations: annotations}
}

func ctr(name string, uid, gid uint32) *api.Container {
	return &api.Container{Name: name, User: &api.User{Uid: uid, Gid: gid}}
}

func TestDecide(t *testing.T) {
	guarded := map[string]string{"meshgate.io/status": status}
	marked := map[string]string{"meshgate.io/admitted": "v1.x"}
	cases := []struct {
		name    string
		cfg     Config
		pod     *api.PodSandbox
		ctr     *api.Container
		refused string // a fragment of the refusal; "" = not refused
		seccomp bool
	}{
		{"an app whose image USER is 1337", istio, pod(guarded), ctr("app", 1337, 0), "would run as UID 1337", false},
		{"an app in group 1337", istio, pod(guarded), ctr("app", 1000, 1337), "would run as GID 1337", false},
		{"guarded by the admission mark alone", istio, pod(marked), ctr("app", 1337, 1337), "UID 1337", false},
		{"a root app: admitted, set*id to 1337 denied", istio, pod(guarded), ctr("app", 0, 0), "", true},
		{"the proxy itself", istio, pod(guarded), ctr("istio-proxy", 1337, 1337), "", false},
		{"meshgate's validator, listed in its status", istio, pod(guarded), ctr("meshgate-validation", 1337, 1337), "", false},
		{"a pod meshgate did not admit", istio, pod(nil), ctr("app", 1337, 1337), "", false},
		{"Linkerd's proxy UID", linkerd, pod(guarded), ctr("app", 2102, 0), "UID 2102", false},
		{"Linkerd: no GID exempt by default", linkerd, pod(guarded), ctr("app", 1000, 1337), "", true},
		{
			"Linkerd: the GID a pod's annotation exempts", linkerd,
			pod(map[string]string{"meshgate.io/status": status, "config.linkerd.io/proxy-gid": "1337"}),
			ctr("app", 1000, 1337), "GID 1337", false,
		},
		{"no user from the runtime: seccomp only", istio, pod(guarded), &api.Container{Name: "app"}, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := c.cfg.Decide(c.pod, c.ctr, "amd64")
			if c.refused == "" && d.Refusal != "" {
				t.Fatalf("refused: %s", d.Refusal)
			}
			if c.refused != "" {
				if !strings.Contains(d.Refusal, c.refused) || !strings.HasSuffix(d.Refusal, "[proxy_identity_refused]") {
					t.Fatalf("refusal %q does not say %q and end with the code", d.Refusal, c.refused)
				}
				if !strings.Contains(d.Refusal, "container app of pod demo/web") {
					t.Fatalf("refusal %q does not name the container and pod", d.Refusal)
				}
			}
			if (d.Seccomp != nil) != c.seccomp {
				t.Fatalf("seccomp adjusted: %v, want %v", d.Seccomp != nil, c.seccomp)
			}
		})
	}
}

func TestSeccompOff(t *testing.T) {
	cfg := istio
	cfg.Seccomp = false
	if d := cfg.Decide(pod(map[string]string{"meshgate.io/status": status}), ctr("app", 0, 0), "amd64"); d.Seccomp != nil {
		t.Fatal("--seccomp=false still adjusts")
	}
}
