// What the plugin decides for one container, given its pod (pure: main.go wires it to the runtime).
//
// A container is judged when its pod is one meshgate admitted as meshed (the pod annotation meshgate.io/status, or
// the admission mark meshgate.io/admitted: the runtime hands the plugin the pod's annotations as the kubelet passed
// them) and it is not one of the mesh's own containers (the profile's names, and the names meshgate's status lists).
// Then:
//   - a container that would start as the proxy's UID or GID (its process.user, resolved by the runtime from
//     runAsUser/runAsGroup or the image's USER) is refused: its creation fails, it never runs;
//   - every other one gets a seccomp policy that makes each set*id call naming the proxy's UID or GID fail with
//     EPERM (setuid with the default capabilities, or a file capability on the entrypoint, can no longer switch
//     to it), merged into the policy the container already has.
//
// What seccomp cannot see: a set-user-ID binary owned by the proxy's UID (execve switches without a set*id call);
// the node agent's guard stops that one when it runs (docs/security.md "Who can become the proxy").
package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/containerd/nri/pkg/api"
)

const (
	statusAnnotation   = "meshgate.io/status"
	admittedAnnotation = "meshgate.io/admitted"
	// refusedCode is the reason code (meshgate's src/contract/reasons.ts); the kubelet copies the message into the
	// container's waiting state, where the node agent finds it.
	refusedCode = "proxy_identity_refused"
)

// Config is what the plugin knows of the mesh: the chart renders it from meshgate's profile.
type Config struct {
	// ProxyUIDs and ProxyGIDs: the identity the mesh's redirect exempts.
	ProxyUIDs []uint32
	ProxyGIDs []uint32
	// MeshContainers: the names of the mesh's own containers (proxy, init, validator).
	MeshContainers []string
	// ExemptGIDAnnotations: pod annotations whose value is a further exempt GID (Linkerd's
	// config.linkerd.io/proxy-gid); meshgate's webhook admits at most one.
	ExemptGIDAnnotations []string
	// Seccomp: deny set*id calls to the identity (default on).
	Seccomp bool
}

// Decision for one container: refuse it (Refusal set), adjust it (Seccomp set), or leave it alone (both nil).
type Decision struct {
	Refusal string
	Seccomp *api.LinuxSeccomp
}

type meshStatus struct {
	InitContainers []string `json:"initContainers"`
	Containers     []string `json:"containers"`
}

// guarded: whether meshgate admitted the pod as meshed.
func guarded(annotations map[string]string) bool {
	_, status := annotations[statusAnnotation]
	_, mark := annotations[admittedAnnotation]
	return status || mark
}

// exempt: whether the container is one of the mesh's (by the profile's names and meshgate's status).
func (c *Config) exempt(name string, annotations map[string]string) bool {
	if slices.Contains(c.MeshContainers, name) {
		return true
	}
	var s meshStatus
	if raw, ok := annotations[statusAnnotation]; ok && json.Unmarshal([]byte(raw), &s) == nil {
		return slices.Contains(s.InitContainers, name) || slices.Contains(s.Containers, name)
	}
	return false
}

// identity: the UIDs and GIDs this pod's redirect exempts.
func (c *Config) identity(annotations map[string]string) (uids, gids []uint32) {
	gids = slices.Clone(c.ProxyGIDs)
	for _, key := range c.ExemptGIDAnnotations {
		if v, err := strconv.ParseUint(annotations[key], 10, 32); err == nil {
			gids = append(gids, uint32(v))
		}
	}
	return c.ProxyUIDs, gids
}

// Decide judges one container of one pod; arch is the node's (runtime.GOARCH) for a new seccomp policy.
func (c *Config) Decide(pod *api.PodSandbox, ctr *api.Container, arch string) Decision {
	annotations := pod.GetAnnotations()
	if !guarded(annotations) || c.exempt(ctr.GetName(), annotations) {
		return Decision{}
	}
	uids, gids := c.identity(annotations)
	where := fmt.Sprintf("container %s of pod %s/%s", ctr.GetName(), pod.GetNamespace(), pod.GetName())
	if u := ctr.GetUser(); u != nil {
		what := ""
		switch {
		case slices.Contains(uids, u.GetUid()):
			what = fmt.Sprintf("UID %d", u.GetUid())
		case slices.Contains(gids, u.GetGid()):
			what = fmt.Sprintf("GID %d", u.GetGid())
		}
		if what != "" {
			return Decision{Refusal: fmt.Sprintf(
				"meshgate: %s would run as %s (its runAsUser/runAsGroup or its image's USER), the proxy's identity, "+
					"whose traffic the pod's redirect exempts [%s]", where, what, refusedCode)}
		}
	}
	if !c.Seccomp {
		return Decision{}
	}
	return Decision{Seccomp: DenySetID(ctr.GetLinux().GetSeccompPolicy(), uids, gids, arch)}
}
