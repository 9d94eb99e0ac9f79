package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pkg/cluster"
	"istio.io/istio/pkg/config/constants"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/config/mesh/meshwatcher"
	"istio.io/istio/pkg/filewatcher"
	"istio.io/istio/pkg/kube"
	"istio.io/istio/pkg/kube/inject"
	"istio.io/istio/pkg/kube/krt"
	"istio.io/istio/pkg/kube/multicluster"
	"istio.io/istio/pkg/log"
)

// injector is the running webhook and what its readiness depends on.
type injector struct {
	mc     *multicluster.Controller
	synced atomic.Bool
}

// ready: the kube informers (Nodes, for native-sidecar detection) have synced, as istiod's readiness requires.
func (i *injector) ready() bool { return i.synced.Load() && i.mc.HasSynced() }

// startInjector registers Istio's /inject handler on mux and starts what it watches; everything stops with stop.
func startInjector(o options, mux *http.ServeMux, stop chan struct{}) (*injector, error) {
	configFile := filepath.Join(o.injectDir, "config")
	valuesFile := filepath.Join(o.injectDir, "values")
	if err := checkInputs(configFile, valuesFile, o.meshFile); err != nil {
		return nil, err
	}
	env, err := newEnvironment(o.meshFile, stop)
	if err != nil {
		return nil, err
	}

	// istiod's cluster id defaults to "Kubernetes"; the webhook looks its Node client up by it.
	clusterID := cluster.ID(constants.DefaultClusterName)
	client, err := kube.NewClient(kube.BuildClientCmd(o.kubeconfig, ""), clusterID)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %v", o.kubeconfig, err)
	}
	// As pilot/pkg/bootstrap/server.go does: the config cluster only (no remote-cluster secrets exist here).
	mc := multicluster.NewController(client, o.namespace, clusterID, env.Watcher)

	// As pilot/pkg/bootstrap/sidecarinjector.go does when istiod finds <inject-dir>/config.
	watcher, err := inject.NewFileWatcher(configFile, valuesFile)
	if err != nil {
		return nil, fmt.Errorf("watching %s: %v", o.injectDir, err)
	}
	wh, err := inject.NewWebhook(inject.WebhookParameters{
		Watcher:      watcher,
		Env:          env,
		Mux:          mux,
		Revision:     o.revision,
		MultiCluster: mc,
	})
	if err != nil {
		return nil, fmt.Errorf("creating the injection webhook from %s: %v", o.injectDir, err)
	}

	inj := &injector{mc: mc}
	if err := mc.Run(stop); err != nil {
		return nil, fmt.Errorf("starting the multicluster controller: %v", err)
	}
	wh.Run(stop)
	go func() {
		t0 := time.Now()
		if client.RunAndWait(stop) {
			log.Infof("kube caches synced in %v", time.Since(t0))
			inj.synced.Store(true)
		}
	}()
	go func() { <-stop; client.Shutdown() }()
	return inj, nil
}

// checkInputs names the missing or unreadable file up front; Istio's watchers would only say "no such file".
func checkInputs(files ...string) error {
	for _, f := range files {
		if _, err := os.ReadFile(f); err != nil {
			return fmt.Errorf("injector input: %v", err)
		}
	}
	return nil
}

// newEnvironment builds the model.Environment istiod hands the webhook: the mesh config from a watched file over
// Istio's defaults (pilot/pkg/bootstrap/mesh.go), and a push context whose ProxyConfigs hold no ProxyConfig
// resources, so each pod's proxy config is the mesh's defaultConfig plus its own proxy.istio.io/config annotation —
// what istiod computes when no ProxyConfig resources exist.
func newEnvironment(meshFile string, stop chan struct{}) (*model.Environment, error) {
	data, err := os.ReadFile(meshFile)
	if err != nil {
		return nil, fmt.Errorf("--mesh-config: %v", err)
	}
	if _, err := mesh.ApplyMeshConfig(string(data), mesh.DefaultMeshConfig()); err != nil {
		return nil, fmt.Errorf("--mesh-config %s is not a valid MeshConfig: %v", meshFile, err)
	}
	opts := krt.NewOptionsBuilder(stop, "", nil)
	src, err := meshwatcher.NewFileSource(filewatcher.NewWatcher(), meshFile, opts)
	if err != nil {
		return nil, fmt.Errorf("watching --mesh-config %s: %v", meshFile, err)
	}
	col := meshwatcher.NewCollection(opts, src)
	col.AsCollection().WaitUntilSynced(stop)

	env := model.NewEnvironment()
	env.Watcher = meshwatcher.ConfigAdapter(col)
	push := model.NewPushContext()
	push.ProxyConfigs = &model.ProxyConfigs{}
	env.SetPushContext(push)
	return env, nil
}

// shutdown stops accepting connections and waits up to grace for in-flight requests.
func shutdown(srv *http.Server, grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return srv.Shutdown(ctx)
}
