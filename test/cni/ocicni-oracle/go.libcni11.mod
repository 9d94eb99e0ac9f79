module meshgate.test/ocicnioracle

// CRI-O 1.25-1.30: ocicni v0.4.x (the snapshot in ../shared/vendor/ocicni-libcni-1.1, v0.4.2-6-g4cc060e) with
// libcni v1.1.2.
go 1.20

require (
	github.com/containernetworking/cni v1.1.2
	github.com/cri-o/ocicni v0.0.0
	github.com/sirupsen/logrus v1.9.3
)

require (
	github.com/containernetworking/plugins v1.4.1 // indirect
	github.com/fsnotify/fsnotify v1.7.0 // indirect
	github.com/vishvananda/netlink v1.2.1-beta.2 // indirect
	github.com/vishvananda/netns v0.0.4 // indirect
	golang.org/x/sys v0.17.0 // indirect
)

replace github.com/cri-o/ocicni => ../ocicni-libcni-1.1
