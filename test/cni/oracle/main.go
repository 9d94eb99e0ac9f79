// cni-oracle reports what the REAL Go code of the container runtimes makes of CNI conf dirs, so that meshgate's
// TypeScript emulation (src/cni) can be compared with it case by case (test/cni/oracle.test.ts).
//
//   - containerd: github.com/containerd/go-cni, configured the way containerd's CRI plugin does it
//     (New with WithPluginConfDir, WithPluginMaxConfNum, WithPluginDir, WithMinNetworkCount(2); Load with
//     WithLoNetwork, WithDefaultConf), then GetConfig(). go-cni calls libcni's ConfFiles, ConfListFromFile,
//     ConfFromFile and ConfListFromConf itself.
//   - CRI-O: github.com/cri-o/ocicni cannot be fetched here (the module proxy answers 403 for it), so crio() below
//     follows ocicni's loadNetworks step by step over the real libcni calls: ConfFiles, sort.Strings,
//     ConfListFromFile for ".conflist", else ConfFromFile + the empty-type check + ConfListFromConf; skip a list
//     without plugins; skip a list that fails CNIConfig.ValidateNetworkList (which really executes each plugin
//     binary's VERSION command); a missing name becomes the file's base name; the first file left is the default.
//
// Which libcni and go-cni versions are linked is decided by the go.mod used to build (go.mod: the versions Debian's
// containerd 1.6.20 vendors; go.latest.mod: the newest releases); the output names them from the build info.
//
// Input (stdin): {"cases":[{"id":"…","confDir":"…","binDirs":["…"],"maxConfNum":1}]}
// Output (stdout): {"libcni":"v…","goCni":"v…","results":[{"id":"…","files":[…],"containerd":{…},"crio":{…}}]}
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"

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

// crioFile is what ocicni's loop does with one file: "loaded", "load_error" (read, parse or conversion) or
// "invalid" (ValidateNetworkList failed: a plugin binary missing, not executable, or not supporting the version).
type crioFile struct {
	File    string   `json:"file"`
	Outcome string   `json:"outcome"`
	Error   string   `json:"error,omitempty"`
	Network *network `json:"network,omitempty"`
}

type crioResult struct {
	Error   string     `json:"error,omitempty"`
	Files   []crioFile `json:"files"`
	Default string     `json:"default,omitempty"`
}

type result struct {
	ID         string           `json:"id"`
	Files      []string         `json:"files"`
	Containerd containerdResult `json:"containerd"`
	Crio       crioResult       `json:"crio"`
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
	return result{ID: c.ID, Files: names, Containerd: containerd(c, files), Crio: crio(c)}
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

// crio follows ocicni's loadNetworks (see the file comment) over the real libcni calls.
func crio(c caseInput) crioResult {
	cniConfig := libcni.NewCNIConfig(c.BinDirs, nil)
	files, err := libcni.ConfFiles(c.ConfDir, confExtensions)
	if err != nil {
		return crioResult{Error: err.Error(), Files: []crioFile{}}
	}
	sort.Strings(files)
	res := crioResult{Files: []crioFile{}}
	for _, path := range files {
		entry := crioFile{File: filepath.Base(path)}
		list, err := loadList(path)
		switch {
		case err != nil:
			entry.Outcome, entry.Error = "load_error", err.Error()
		case len(list.Plugins) == 0:
			entry.Outcome, entry.Error = "load_error", "no plugins"
		default:
			net := describe(list)
			entry.Network = &net
			if _, err := cniConfig.ValidateNetworkList(context.Background(), list); err != nil {
				entry.Outcome, entry.Error = "invalid", err.Error()
			} else {
				entry.Outcome = "loaded"
				if res.Default == "" {
					res.Default = entry.File
				}
			}
		}
		res.Files = append(res.Files, entry)
	}
	return res
}

func loadList(path string) (*libcni.NetworkConfigList, error) {
	if strings.HasSuffix(path, ".conflist") {
		return libcni.ConfListFromFile(path)
	}
	conf, err := libcni.ConfFromFile(path)
	if err != nil {
		return nil, err
	}
	if conf.Network.Type == "" {
		return nil, fmt.Errorf("no 'type'")
	}
	return libcni.ConfListFromConf(conf)
}

func describe(list *libcni.NetworkConfigList) network {
	net := network{Name: list.Name, CNIVersion: list.CNIVersion, Plugins: []string{}}
	for _, p := range list.Plugins {
		net.Plugins = append(net.Plugins, p.Network.Type)
	}
	return net
}
