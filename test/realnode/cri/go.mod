// The CRI client of the real-node tier's emulation check (main.go). Versions as in test/e2e/controlplane/go.sum
// (Kubernetes 1.34.12's), so the module cache already holds them.
module meshgate.test/realnode/cri

go 1.25.0

require (
	google.golang.org/grpc v1.72.1
	k8s.io/cri-api v0.34.12
)

require (
	golang.org/x/net v0.56.0 // indirect
	golang.org/x/sys v0.46.0 // indirect
	golang.org/x/text v0.39.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20250303144028-a0af3efb3deb // indirect
	google.golang.org/protobuf v1.36.12-0.20260120151049-f2248ac996af // indirect
)
