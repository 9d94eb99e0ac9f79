// Command controller runs cert-manager's controller out of cluster: the control loops of
// github.com/cert-manager/cert-manager/pkg/controller that a self-signed or CA Issuer needs (issuers, clusterissuers,
// the CertificateRequest approver and its self-signed and CA signers, and the certificate loops that trigger,
// request, issue, store and revision a Certificate), built on the module's own ContextFactory exactly as
// cert-manager's cmd/controller builds it. ACME, Vault, Venafi, the ingress and Gateway shims are left out: meshgate's
// chart uses none of them, and they are what would dial anything but the apiserver.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	"github.com/meshgate/meshgate/test/cert-manager/internal/command"

	// Each registers its control loop with controller.Register (cert-manager's cmd/controller imports them the same
	// way); the issuer packages register the Issuer kinds the issuers controller can set up.
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	_ "github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	_ "github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	_ "github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

// Every loop registered above, started by default.
var allControllers = []string{
	"issuers",
	"clusterissuers",
	"certificaterequests-approver",
	"certificaterequests-issuer-selfsigned",
	"certificaterequests-issuer-ca",
	"certificates-trigger",
	"certificates-issuing",
	"certificates-key-manager",
	"certificates-request-manager",
	"certificates-readiness",
	"certificates-revision-manager",
}

// cert-manager's defaults (internal/apis/config/controller/v1alpha1/defaults.go of v1.21), which live in an internal
// package this module cannot import.
const (
	defaultQPS     = 20
	defaultBurst   = 50
	defaultWorkers = 5
	minimumBackoff = time.Hour
	maximumBackoff = 32 * time.Hour
	leaseName      = "cert-manager-controller"
)

var defaultCopiedAnnotationPrefixes = []string{"*", "-kubectl.kubernetes.io/", "-fluxcd.io/", "-argocd.argoproj.io/"}

type options struct {
	*command.Flags
	clusterResourceNamespace string
	controllers              []string
	workers                  int
}

func parseFlags(args []string) (*options, error) {
	fs, flags := command.NewFlagSet("controller", "watch only this namespace (ClusterIssuers are then disabled)", leaseName)
	o := &options{Flags: flags}
	fs.StringVar(&o.clusterResourceNamespace, "cluster-resource-namespace", command.DefaultNamespace,
		"namespace of the Secrets that ClusterIssuers refer to")
	fs.StringSliceVar(&o.controllers, "controllers", allControllers, "control loops to run")
	fs.IntVar(&o.workers, "concurrent-workers", defaultWorkers, "workers per control loop")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	known := controller.Known()
	for _, name := range o.controllers {
		if _, ok := known[name]; !ok {
			return nil, fmt.Errorf("--controllers: unknown control loop %q (known: %s)", name, strings.Join(allControllers, ", "))
		}
	}
	if o.Namespace != "" {
		o.controllers = slices.DeleteFunc(o.controllers, func(n string) bool { return n == "clusterissuers" })
	}
	return o, o.Check()
}

func main() {
	command.Main("controller", parseFlags, run)
}

func run(ctx context.Context, o *options) error {
	log := logf.FromContext(ctx)
	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         o.Kubeconfig,
		KubernetesAPIQPS:   defaultQPS,
		KubernetesAPIBurst: defaultBurst,
		Namespace:          o.Namespace,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: o.clusterResourceNamespace},
		CertificateOptions: controller.CertificateOptions{
			CopiedAnnotationPrefixes:                 defaultCopiedAnnotationPrefixes,
			CertificateRequestMinimumBackoffDuration: minimumBackoff,
			CertificateRequestMaximumBackoffDuration: maximumBackoff,
		},
	})
	if err != nil {
		return err
	}
	base, err := factory.Build()
	if err != nil {
		return err
	}
	if o.LeaderElect {
		if err := awaitLeadership(ctx, factory, o.LeaderElectionNamespace); err != nil {
			return err
		}
	}

	g, ctx := errgroup.WithContext(ctx)
	for _, name := range o.controllers {
		loop, err := controller.Known()[name](factory)
		if err != nil {
			return fmt.Errorf("control loop %s: %w", name, err)
		}
		g.Go(func() error { return loop.Run(o.workers, ctx) })
	}
	log.Info("starting cert-manager controller", "controllers", o.controllers)
	base.SharedInformerFactory.Start(ctx.Done())
	base.KubeSharedInformerFactory.Start(ctx.Done())
	base.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	return g.Wait()
}

// awaitLeadership returns once this process holds the Lease; losing it later ends the process, as cert-manager does.
func awaitLeadership(ctx context.Context, factory *controller.ContextFactory, namespace string) error {
	c, err := factory.Build("leader-election")
	if err != nil {
		return err
	}
	host, err := os.Hostname()
	if err != nil {
		return err
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, namespace, leaseName, c.Client.CoreV1(),
		c.Client.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: fmt.Sprintf("%s-%d", host, os.Getpid())})
	if err != nil {
		return err
	}
	elected := make(chan struct{})
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   command.LeaseDuration,
		RenewDeadline:   command.RenewDeadline,
		RetryPeriod:     command.RetryPeriod,
		ReleaseOnCancel: true,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { close(elected) },
			OnStoppedLeading: func() {
				if ctx.Err() == nil {
					logf.Log.Error(nil, "lost the Lease "+leaseName)
					logf.FlushLogs()
					os.Exit(1)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	go elector.Run(ctx)
	select {
	case <-elected:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
