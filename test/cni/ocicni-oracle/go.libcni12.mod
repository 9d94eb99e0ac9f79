module meshgate.test/ocicnioracle

// CRI-O 1.31 and 1.32: ocicni v0.4.2/v0.4.3 (whose loadNetworks is the snapshot's in
// ../shared/vendor/ocicni-libcni-1.1, v0.4.2-6-g4cc060e) with the libcni CRI-O's own go.mod pins, v1.2.3.
go 1.21

require (
	github.com/containernetworking/cni v1.2.3
	github.com/cri-o/ocicni v0.0.0
	github.com/sirupsen/logrus v1.9.3
)

require (
	github.com/containernetworking/plugins v1.4.1 // indirect
	github.com/fsnotify/fsnotify v1.7.0 // indirect
	github.com/vishvananda/netlink v1.2.1-beta.2 // indirect
	github.com/vishvananda/netns v0.0.4 // indirect
	golang.org/x/sys v0.20.0 // indirect
)

replace github.com/cri-o/ocicni => ../ocicni-libcni-1.1
