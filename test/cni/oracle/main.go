// cni-oracle reports what the REAL Go code of the container runtimes makes of CNI conf dirs, so that meshgate's
// TypeScript emulation (src/cni) can be compared with it case by case (test/cni/oracle.test.ts).
//
//   - containerd: github.com/containerd/go-cni, configured the way containerd's CRI plugin does it
//     (New with WithPluginConfDir, WithPluginMaxConfNum, WithPluginDir, WithMinNetworkCount(2); Load with
//     WithLoNetwork, WithDefaultConf), then GetConfig(). go-cni calls libcni's ConfFiles, ConfListFromFile,
//     ConfFromFile and ConfListFromConf itself.
//   - CRI-O is not here: its selection runs in test/cni/ocicni-oracle, built from CRI-O's own ocicni snapshots.
//
// Which libcni and go-cni versions are linked is decided by the go.mod used to build (go.mod: the versions Debian's
// containerd 1.6.20 vendors, libcni v1.1.1; go.libcni12.mod: containerd 2.0's, libcni v1.2.3; go.latest.mod: the
// newest releases, libcni v1.3.1 as containerd 2.4 vendors it); the output names them from the build info.
//
// Input (stdin): {"cases":[{"id":"…","confDir":"…","binDirs":["…"],"maxConfNum":1}]}
// Output (stdout): {"libcni":"v…","goCni":"v…","results":[{"id":"…","files":[…],"containerd":{…}}]}
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"

	gocni "github.com/containerd/go-cni"
	"github.com/containernetworking/cni/libcni"
)

type input struct {
	Cases []caseInput `json:"cases"`
}

type caseInput struct {
	ID         string   `json:"id"`
	ConfDir    string   `json:"confDir"`
	BinDirs    []string `json:"binDirs"`
	MaxConfNum int      `json:"maxConfNum"`
}

// network is one loaded network list: libcni's name (before any fallback), version and plugin types in order.
type network struct {
	File       string   `json:"file,omitempty"`
	Name       string   `json:"name"`
	CNIVersion string   `json:"cniVersion"`
	Plugins    []string `json:"plugins"`
}

type containerdResult struct {
	OK       bool      `json:"ok"`
	Error    string    `json:"error,omitempty"`
	Networks []network `json:"networks,omitempty"`
}

type result struct {
	ID         string           `json:"id"`
	Files      []string         `json:"files"`
	Containerd containerdResult `json:"containerd"`
}

var confExtensions = []string{".conf", ".conflist", ".json"}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintf(os.Stderr, "cni-oracle: reading cases from stdin: %v\n", err)
		os.Exit(2)
	}
	out := struct {
		Libcni  string   `json:"libcni"`
		GoCni   string   `json:"goCni"`
		Go      string   `json:"go"`
		Results []result `json:"results"`
	}{Libcni: moduleVersion("github.com/containernetworking/cni"), GoCni: moduleVersion("github.com/containerd/go-cni")}
	if info, ok := debug.ReadBuildInfo(); ok {
		out.Go = info.GoVersion
	}
	for _, c := range in.Cases {
		out.Results = append(out.Results, run(c))
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "cni-oracle: writing results: %v\n", err)
		os.Exit(2)
	}
}

func moduleVersion(path string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	for _, dep := range info.Deps {
		if dep.Path == path {
			return dep.Version
		}
	}
	return "unknown"
}

func run(c caseInput) result {
	files, err := libcni.ConfFiles(c.ConfDir, confExtensions)
	names := []string{}
	if err == nil {
		sort.Strings(files)
		for _, f := range files {
			names = append(names, filepath.Base(f))
		}
	}
	return result{ID: c.ID, Files: names, Containerd: containerd(c, files)}
}

// containerd loads the conf dir through go-cni exactly as containerd 1.6's CRI plugin does.
func containerd(c caseInput, files []string) containerdResult {
	cni, err := gocni.New(gocni.WithMinNetworkCount(2), gocni.WithPluginConfDir(c.ConfDir),
		gocni.WithPluginMaxConfNum(c.MaxConfNum), gocni.WithPluginDir(c.BinDirs))
	if err != nil {
		return containerdResult{Error: err.Error()}
	}
	if err := cni.Load(gocni.WithLoNetwork, gocni.WithDefaultConf); err != nil {
		return containerdResult{Error: err.Error()}
	}
	res := containerdResult{OK: true}
	loaded := 0
	for _, n := range cni.GetConfig().Networks {
		if n.IFName == "lo" {
			continue
		}
		net := network{Name: n.Config.Name, CNIVersion: n.Config.CNIVersion, Plugins: []string{}}
		for _, p := range n.Config.Plugins {
			net.Plugins = append(net.Plugins, p.Network.Type)
		}
		// go-cni stops at the first error, so its k-th network comes from the k-th file in sorted order.
		if loaded < len(files) {
			net.File = filepath.Base(files[loaded])
		}
		loaded++
		res.Networks = append(res.Networks, net)
	}
	return res
}
