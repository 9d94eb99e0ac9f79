module meshgate.test/ocicnioracle

// CRI-O's selection as CRI-O >= 1.33 ships it: ocicni at the commit in ../shared/vendor/ocicni-latest/SOURCE with
// libcni v1.3.0. The replace target exists only in the temporary build dir that scripts/build-ocicni-oracle.sh
// lays out (the snapshot is copied there, never into this repository); go.libcni11.mod and go.libcni12.mod build
// the older line.
go 1.25.0

require (
	github.com/containernetworking/cni v1.3.0
	github.com/cri-o/ocicni v0.0.0
	github.com/sirupsen/logrus v1.10.0
)

require (
	github.com/containernetworking/plugins v1.9.1 // indirect
	github.com/fsnotify/fsnotify v1.10.1 // indirect
	github.com/vishvananda/netlink v1.3.1 // indirect
	github.com/vishvananda/netns v0.0.5 // indirect
	golang.org/x/sys v0.46.0 // indirect
)

replace github.com/cri-o/ocicni => ../ocicni-latest
