// Command cainjector runs cert-manager's CA injector out of cluster: the reconcilers of
// github.com/cert-manager/cert-manager/pkg/controller/cainjector, registered on a controller-runtime manager as
// cert-manager's cmd/cainjector does (Secrets read uncached, every injectable kind enabled, Certificates as a data
// source), which fill webhook configurations' caBundle from the Certificate or Secret their annotations name.
package main

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiext "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	kscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	cliflag "k8s.io/component-base/cli/flag"
	apireg "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	cmscheme "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned/scheme"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/cert-manager/cert-manager/pkg/util"
	utilfeature "github.com/cert-manager/cert-manager/pkg/util/feature"

	"github.com/meshgate/meshgate/test/cert-manager/internal/command"
)

type options struct {
	*command.Flags
	featureGates map[string]bool
}

func parseFlags(args []string) (*options, error) {
	fs, flags := command.NewFlagSet("cainjector", "inject only from and into this namespace",
		"cert-manager-cainjector-leader-election")
	o := &options{Flags: flags}
	fs.Var(cliflag.NewMapStringBool(&o.featureGates), "feature-gates", "key=value pairs of cainjector feature gates, "+
		"e.g. CAInjectorMerging=false: replace caBundle instead of merging new CAs in (what it did before that gate)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(o.featureGates); err != nil {
		return nil, fmt.Errorf("--feature-gates: %w", err)
	}
	return o, o.Check()
}

func main() {
	command.Main("cainjector", parseFlags, run)
}

func run(ctx context.Context, o *options) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig %s: %w", o.Kubeconfig, err)
	}
	cfg = util.RestConfigWithUserAgent(cfg, "cainjector")
	ctrl.SetLogger(logf.Log)

	scheme := runtime.NewScheme()
	utilruntime.Must(kscheme.AddToScheme(scheme))
	utilruntime.Must(cmscheme.AddToScheme(scheme))
	utilruntime.Must(apiext.AddToScheme(scheme))
	utilruntime.Must(apireg.AddToScheme(scheme))

	var namespaces map[string]cache.Config
	if o.Namespace != "" {
		namespaces = map[string]cache.Config{o.Namespace: {}}
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme,
		Cache:  cache.Options{ReaderFailOnMissingInformer: true, DefaultNamespaces: namespaces},
		// As cert-manager: Secrets are read from the apiserver on each reconcile, never cached.
		Client:                        client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}},
		LeaderElection:                o.LeaderElect,
		LeaderElectionNamespace:       o.LeaderElectionNamespace,
		LeaderElectionID:              "cert-manager-cainjector-leader-election",
		LeaderElectionReleaseOnCancel: true,
		LeaderElectionResourceLock:    resourcelock.LeasesResourceLock,
		LeaseDuration:                 &command.LeaseDuration,
		RenewDeadline:                 &command.RenewDeadline,
		RetryPeriod:                   &command.RetryPeriod,
		// No metrics listener: "0" disables it (cert-manager's default is 0.0.0.0:9402).
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
	})
	if err != nil {
		return fmt.Errorf("error creating manager: %w", err)
	}
	err = cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		Namespace:                    o.Namespace,
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			cainjector.MutatingWebhookConfigurationName:   true,
			cainjector.ValidatingWebhookConfigurationName: true,
			cainjector.APIServiceName:                     true,
			cainjector.CustomResourceDefinitionName:       true,
		},
	})
	if err != nil {
		return fmt.Errorf("registering the injectors: %w", err)
	}
	logf.FromContext(ctx).Info("starting cert-manager cainjector")
	return mgr.Start(ctx)
}
