// Command controller runs cert-manager's controller out of cluster: the control loops of
// github.com/cert-manager/cert-manager/pkg/controller that a self-signed or CA Issuer needs (issuers, clusterissuers,
// the CertificateRequest approver and its self-signed and CA signers, and the certificate loops that trigger,
// request, issue, store and revision a Certificate), built on the module's own ContextFactory exactly as
// cert-manager's cmd/controller builds it. ACME, Vault, Venafi, the ingress and Gateway shims are left out: meshgate's
// chart uses none of them, and they are what would dial anything but the apiserver.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	logsapi "k8s.io/component-base/logs/api/v1"

	"github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

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
	defaultQPS       = 20
	defaultBurst     = 50
	defaultWorkers   = 5
	minimumBackoff   = time.Hour
	maximumBackoff   = 32 * time.Hour
	leaseDuration    = 60 * time.Second
	renewDeadline    = 40 * time.Second
	retryPeriod      = 15 * time.Second
	leaseName        = "cert-manager-controller"
	defaultNamespace = "kube-system"
)

var defaultCopiedAnnotationPrefixes = []string{"*", "-kubectl.kubernetes.io/", "-fluxcd.io/", "-argocd.argoproj.io/"}

type options struct {
	kubeconfig               string
	namespace                string
	clusterResourceNamespace string
	controllers              []string
	workers                  int
	leaderElect              bool
	leaderElectionNamespace  string
	logging                  *logsapi.LoggingConfiguration
}

func parseFlags(args []string) (*options, error) {
	o := &options{logging: logsapi.NewLoggingConfiguration()}
	fs := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to run against (required: out of cluster)")
	fs.StringVar(&o.namespace, "namespace", "", "watch only this namespace (ClusterIssuers are then disabled)")
	fs.StringVar(&o.clusterResourceNamespace, "cluster-resource-namespace", defaultNamespace,
		"namespace of the Secrets that ClusterIssuers refer to")
	fs.StringSliceVar(&o.controllers, "controllers", allControllers, "control loops to run")
	fs.IntVar(&o.workers, "concurrent-workers", defaultWorkers, "workers per control loop")
	fs.BoolVar(&o.leaderElect, "leader-elect", false, "run the loops only while holding the Lease "+leaseName)
	fs.StringVar(&o.leaderElectionNamespace, "leader-election-namespace", defaultNamespace, "namespace of that Lease")
	logf.AddFlags(o.logging, fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if o.kubeconfig == "" {
		return nil, fmt.Errorf("--kubeconfig is required")
	}
	known := controller.Known()
	for _, name := range o.controllers {
		if _, ok := known[name]; !ok {
			return nil, fmt.Errorf("--controllers: unknown control loop %q (known: %s)", name, strings.Join(allControllers, ", "))
		}
	}
	if o.namespace != "" {
		o.controllers = slices.DeleteFunc(o.controllers, func(n string) bool { return n == "clusterissuers" })
	}
	return o, logf.ValidateAndApply(o.logging)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	logf.InitLogs()
	ctx = logf.NewContext(ctx, logf.Log, "controller")
	o, err := parseFlags(os.Args[1:])
	if err == nil {
		err = run(ctx, o)
	}
	if errors.Is(err, pflag.ErrHelp) {
		return
	}
	if err != nil {
		logf.Log.Error(err, "cert-manager controller failed")
		logf.FlushLogs()
		os.Exit(1)
	}
	logf.FlushLogs()
}

func run(ctx context.Context, o *options) error {
	log := logf.FromContext(ctx)
	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         o.kubeconfig,
		KubernetesAPIQPS:   defaultQPS,
		KubernetesAPIBurst: defaultBurst,
		Namespace:          o.namespace,
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
	if o.leaderElect {
		if err := awaitLeadership(ctx, factory, o.leaderElectionNamespace); err != nil {
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
		LeaseDuration:   leaseDuration,
		RenewDeadline:   renewDeadline,
		RetryPeriod:     retryPeriod,
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
