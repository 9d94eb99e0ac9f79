// istio-injector serves Istio's own sidecar injection webhook — istio.io/istio/pkg/kube/inject, the Webhook and
// /inject handler istiod runs — on its own, so meshgate's tests can put the real thing next to a real
// kube-apiserver (as the reference for behaviour and performance) without the rest of istiod (xDS, CA, CRDs).
//
// It is wired the way pilot/pkg/bootstrap wires it (sidecarinjector.go, mesh.go, server.go): the injection
// template and values from the files istiod mounts from the istio-sidecar-injector ConfigMap (<inject-dir>/config
// and <inject-dir>/values, watched with inject.NewFileWatcher), the mesh config from the file istiod mounts from
// the istio ConfigMap (watched with meshwatcher), and a multicluster controller over a real kube client so the
// Node informer decides native sidecars exactly as in istiod (ENABLE_NATIVE_SIDECARS=auto by default).
//
// Endpoints (HTTPS only): POST /inject (and /inject/...), GET /ready (200 once the kube caches have synced).
package main

import (
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"istio.io/istio/pkg/log"
)

type options struct {
	listen     string
	certFile   string
	keyFile    string
	injectDir  string
	meshFile   string
	kubeconfig string
	namespace  string
	revision   string
	logLevel   string
}

func parseFlags() (options, error) {
	var o options
	flag.StringVar(&o.listen, "listen", "127.0.0.1:15017", "HTTPS listen address (istiod's webhook port is 15017)")
	flag.StringVar(&o.certFile, "tls-cert", "", "PEM serving certificate (required)")
	flag.StringVar(&o.keyFile, "tls-key", "", "PEM private key of the serving certificate (required)")
	flag.StringVar(&o.injectDir, "inject-dir", "", "directory holding `config` and `values` from the "+
		"istio-sidecar-injector ConfigMap, like istiod's /var/lib/istio/inject (required)")
	flag.StringVar(&o.meshFile, "mesh-config", "", "file holding `mesh` from the istio ConfigMap, like istiod's "+
		"/etc/istio/config/mesh (required)")
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster whose Nodes decide native sidecars (required)")
	flag.StringVar(&o.namespace, "namespace", "istio-system", "istiod's namespace (where istiod would look for remote-cluster secrets)")
	flag.StringVar(&o.revision, "revision", "", "the istio.io/rev this injector serves (istiod's --revision)")
	flag.StringVar(&o.logLevel, "log-level", "info", "Istio log level for every scope: debug, info, warn, error or none "+
		"(istiod's default is info, which logs one line per injection)")
	flag.Parse()
	if flag.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	for name, v := range map[string]string{"--tls-cert": o.certFile, "--tls-key": o.keyFile,
		"--inject-dir": o.injectDir, "--mesh-config": o.meshFile, "--kubeconfig": o.kubeconfig} {
		if v == "" {
			return o, fmt.Errorf("%s is required", name)
		}
	}
	return o, nil
}

func configureLogging(level string) error {
	switch level {
	case "debug", "info", "warn", "error", "none":
	default:
		return fmt.Errorf("--log-level: unknown level %q (want debug, info, warn, error or none)", level)
	}
	opts := log.DefaultOptions()
	opts.SetDefaultOutputLevel(log.OverrideScopeName, log.StringToLevel(level))
	return log.Configure(opts)
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "istio-injector: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	o, err := parseFlags()
	if err != nil {
		return err
	}
	if err := configureLogging(o.logLevel); err != nil {
		return err
	}
	// Fail on a bad key pair before anything else starts; the apiserver would only report a TLS handshake error.
	cert, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
	if err != nil {
		return fmt.Errorf("loading --tls-cert %s / --tls-key %s: %v", o.certFile, o.keyFile, err)
	}

	stop := make(chan struct{})
	mux := http.NewServeMux()
	inj, err := startInjector(o, mux, stop)
	if err != nil {
		return err
	}
	mux.HandleFunc("/ready", func(w http.ResponseWriter, _ *http.Request) {
		if !inj.ready() {
			http.Error(w, "kube caches not synced", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %v", o.listen, err)
	}
	// Like istiod's httpsServer: TLS 1.2 minimum, HTTP/2 allowed (Go enables it for TLS servers by default).
	srv := &http.Server{
		Handler:   mux,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		// Slow or stuck clients cannot hold connections forever; the apiserver's webhook timeout is at most 30 s.
		ReadHeaderTimeout: 10 * time.Second,
	}
	served := make(chan error, 1)
	go func() { served <- srv.ServeTLS(ln, "", "") }()
	log.Infof("serving https://%s/inject", ln.Addr())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case s := <-sig:
		log.Infof("%v: shutting down", s)
	case err := <-served:
		close(stop)
		return fmt.Errorf("https server: %v", err)
	}
	close(stop)
	// Two seconds is plenty for in-flight reviews, each a few milliseconds.
	const drain = 2 * time.Second
	if err := shutdown(srv, drain); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
