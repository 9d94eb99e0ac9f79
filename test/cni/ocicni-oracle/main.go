// ocicni-oracle reports which CNI network CRI-O takes from a conf dir, by running CRI-O's own selection code:
// github.com/cri-o/ocicni's InitCNINoInotify, whose syncNetworkConfig → loadNetworks lists the dir with libcni,
// parses every file, runs ValidateNetworkList (which executes each plugin binary's VERSION command) and takes the
// first valid file as the default network. Built by scripts/build-ocicni-oracle.sh from the snapshots in
// ../shared/vendor/ocicni-* (the module proxy refuses github.com/cri-o/ocicni); which libcni it links is decided
// by the go.mod it is built with (go.mod: ocicni-latest with libcni v1.3.0, as CRI-O ≥ 1.33 ships it;
// go.libcni12.mod: ocicni v0.4 with libcni v1.2.3, as CRI-O 1.31 and 1.32; go.libcni11.mod: ocicni v0.4 with
// libcni v1.1.2, as CRI-O 1.25–1.30).
//
// What happened to each file is read from ocicni's own log lines ("Found CNI network … at FILE", "Error validating
// CNI config file FILE: …"; any other file was skipped while loading), the default network from inside the
// package (export.go.in, added to the temporary copy).
//
// Input (stdin): {"cases":[{"id":"…","confDir":"…","binDirs":["…"]}]}
// Output (stdout): {"ocicni":"…","libcni":"v…","results":[{"id":"…","files":[…],"default":{…}}]}
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"github.com/cri-o/ocicni/pkg/ocicni"
	"github.com/sirupsen/logrus"
)

// ocicniSource names the snapshot built in (its SOURCE commit), set by the build script with -ldflags -X.
var ocicniSource = "unknown"

type input struct {
	Cases []caseInput `json:"cases"`
}

type caseInput struct {
	ID      string   `json:"id"`
	ConfDir string   `json:"confDir"`
	BinDirs []string `json:"binDirs"`
}

type network struct {
	File       string   `json:"file"`
	Name       string   `json:"name"`
	CNIVersion string   `json:"cniVersion"`
	Plugins    []string `json:"plugins"`
}

// fileOutcome is "loaded" (ocicni found a valid network in it), "invalid" (ValidateNetworkList failed: a plugin
// binary missing, not executable, or not supporting the version) or "load_error" (anything else: unreadable,
// does not parse, no plugins), with ocicni's message when it logged one.
type fileOutcome struct {
	File    string `json:"file"`
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
}

type result struct {
	ID      string        `json:"id"`
	Error   string        `json:"error,omitempty"`
	Files   []fileOutcome `json:"files"`
	Default *network      `json:"default,omitempty"`
}

// recorder keeps ocicni's log entries of the case being run.
type recorder struct {
	mu      sync.Mutex
	entries []string
}

func (r *recorder) Levels() []logrus.Level { return logrus.AllLevels }

func (r *recorder) Fire(e *logrus.Entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, e.Message)
	return nil
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.entries
	r.entries = nil
	return out
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		fmt.Fprintf(os.Stderr, "ocicni-oracle: reading cases from stdin: %v\n", err)
		os.Exit(2)
	}
	log := &recorder{}
	logrus.SetOutput(io.Discard)
	logrus.SetLevel(logrus.InfoLevel)
	logrus.AddHook(log)
	out := struct {
		Ocicni  string   `json:"ocicni"`
		Libcni  string   `json:"libcni"`
		Go      string   `json:"go"`
		Results []result `json:"results"`
	}{Ocicni: ocicniSource, Libcni: moduleVersion("github.com/containernetworking/cni"), Results: []result{}}
	if info, ok := debug.ReadBuildInfo(); ok {
		out.Go = info.GoVersion
	}
	for _, c := range in.Cases {
		out.Results = append(out.Results, run(c, log))
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "ocicni-oracle: writing results: %v\n", err)
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
			if dep.Replace != nil {
				return dep.Replace.Version
			}
			return dep.Version
		}
	}
	return "unknown"
}

func run(c caseInput, log *recorder) result {
	res := result{ID: c.ID, Files: []fileOutcome{}}
	plugin, err := ocicni.InitCNINoInotify("", c.ConfDir, "", c.BinDirs...)
	lines := log.take()
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer plugin.Shutdown()
	if file, name, version, plugins, ok := ocicni.MeshgateOracleDefault(plugin); ok {
		res.Default = &network{File: filepath.Base(file), Name: name, CNIVersion: version, Plugins: plugins}
	}
	res.Files = outcomes(c.ConfDir, lines)
	for _, l := range lines {
		if strings.HasPrefix(l, "CNI sync network config failed: ") {
			res.Error = strings.TrimPrefix(l, "CNI sync network config failed: ")
		}
	}
	return res
}

// outcomes turns ocicni's log lines into one outcome per file of the conf dir, in name order (ocicni's order).
func outcomes(confDir string, lines []string) []fileOutcome {
	dir := regexp.QuoteMeta(confDir + string(filepath.Separator))
	found := regexp.MustCompile(`^Found CNI network .* at ` + dir + `([^/]+)$`)
	invalid := regexp.MustCompile(`^Error validating CNI config file ` + dir + `([^/]+?): (.*)$`)
	loadError := regexp.MustCompile(`^(?:Error loading CNI config (?:list )?file |Error converting CNI config file |CNI config list )` +
		dir + `([^/]+?)(?:: | to list: | has no networks, skipping)(.*)$`)
	seen := map[string]int{}
	out := []fileOutcome{}
	record := func(file, outcome, msg string) {
		if i, ok := seen[file]; ok {
			if out[i].Outcome == "load_error" && out[i].Error == "" {
				out[i] = fileOutcome{File: file, Outcome: outcome, Error: msg}
			}
			return
		}
		seen[file] = len(out)
		out = append(out, fileOutcome{File: file, Outcome: outcome, Error: msg})
	}
	for _, l := range lines {
		if m := found.FindStringSubmatch(l); m != nil {
			record(m[1], "loaded", "")
		} else if m := invalid.FindStringSubmatch(l); m != nil {
			record(m[1], "invalid", m[2])
		} else if m := loadError.FindStringSubmatch(l); m != nil {
			msg := m[2]
			if msg == "" {
				msg = "no plugins"
			}
			record(m[1], "load_error", msg)
		}
	}
	// Files ocicni skipped without a log line (it logs no "not found" errors) are listed too, so the test sees
	// every file; they were not loaded.
	entries, err := os.ReadDir(confDir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		ext := filepath.Ext(e.Name())
		if e.IsDir() || (ext != ".conf" && ext != ".conflist" && ext != ".json") {
			continue
		}
		if _, ok := seen[e.Name()]; !ok {
			seen[e.Name()] = len(out)
			out = append(out, fileOutcome{File: e.Name(), Outcome: "load_error", Error: "(skipped without a log line)"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}
