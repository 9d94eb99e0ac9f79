module meshgate.test/cnioracle

// containerd 2.0.x (built with `go build -modfile=go.libcni12.mod`): containerd v2.0.5's go.mod pins go-cni
// v1.1.12 and containernetworking/cni v1.2.3 (2.0.0: go-cni v1.1.10, the same libcni); 2.1 moved to libcni v1.3.0.
go 1.21

require (
	github.com/containerd/go-cni v1.1.12
	github.com/containernetworking/cni v1.2.3
)
