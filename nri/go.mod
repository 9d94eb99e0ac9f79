// meshgate's NRI plugin (docs/security.md "Who can become the proxy"): shown every container at creation by
// containerd (>= 1.7 with NRI on; on by default in 2.x) or CRI-O, it refuses a container of a meshgate-admitted pod
// that would run as the proxy's UID/GID and denies it, by seccomp, every set*id call to them. Built by
// scripts/build-nri.sh from the Go module proxy; nri pinned to the release containerd 2.4.2 vendors.
module github.com/meshgate/meshgate/nri

go 1.24.0

require (
	github.com/containerd/nri v0.12.3
	github.com/opencontainers/runtime-spec v1.3.0
)

require (
	github.com/containerd/log v0.1.0 // indirect
	github.com/containerd/ttrpc v1.2.7 // indirect
	github.com/knqyf263/go-plugin v0.9.0 // indirect
	github.com/moby/sys/mountinfo v0.7.2 // indirect
	github.com/sirupsen/logrus v1.9.4 // indirect
	github.com/tetratelabs/wazero v1.11.0 // indirect
	golang.org/x/mod v0.32.0 // indirect
	golang.org/x/sys v0.39.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20240528184218-531527333157 // indirect
	google.golang.org/grpc v1.65.1 // indirect
	google.golang.org/protobuf v1.34.1 // indirect
)
