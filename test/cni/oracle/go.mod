module meshgate.test/cnioracle

// The versions Debian's containerd 1.6.20 builds with (containerd v1.6.20's go.mod: go-cni v1.1.6,
// containernetworking/cni v1.1.1). go.latest.mod pins the newest releases for the comparison with them.
go 1.19

require (
	github.com/containerd/go-cni v1.1.6
	github.com/containernetworking/cni v1.1.1
)
