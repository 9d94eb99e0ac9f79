// Package command holds what this module's two commands (controller/, cainjector/) do alike, as cert-manager's own
// commands run out of cluster: the flags both take (the cluster's kubeconfig, a namespace to keep to, leader election
// and cert-manager's logging flags), cert-manager's leader-election timing, and a main that parses the flags, runs
// until SIGTERM or an interrupt, and exits 1 with the error logged.
package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	logsapi "k8s.io/component-base/logs/api/v1"

	logf "github.com/cert-manager/cert-manager/pkg/logs"
)

// cert-manager's leader-election defaults (internal/apis/config/shared/v1alpha1/defaults.go of v1.21), which live in
// an internal package this module cannot import.
var (
	LeaseDuration = 60 * time.Second
	RenewDeadline = 40 * time.Second
	RetryPeriod   = 15 * time.Second
)

// DefaultNamespace is where cert-manager keeps its Leases (and the Secrets of ClusterIssuers) unless told otherwise.
const DefaultNamespace = "kube-system"

// Flags are the flags both commands take.
type Flags struct {
	Kubeconfig              string
	Namespace               string
	LeaderElect             bool
	LeaderElectionNamespace string
	Logging                 *logsapi.LoggingConfiguration
}

// NewFlagSet is a flag set for the command `name` with the common flags registered: `namespace` says what
// --namespace limits, `lease` names the Lease that --leader-elect holds.
func NewFlagSet(name, namespace, lease string) (*pflag.FlagSet, *Flags) {
	f := &Flags{Logging: logsapi.NewLoggingConfiguration()}
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to run against (required: out of cluster)")
	fs.StringVar(&f.Namespace, "namespace", "", namespace)
	fs.BoolVar(&f.LeaderElect, "leader-elect", false, "run only while holding the Lease "+lease)
	fs.StringVar(&f.LeaderElectionNamespace, "leader-election-namespace", DefaultNamespace, "namespace of that Lease")
	logf.AddFlags(f.Logging, fs)
	return fs, f
}

// Check refuses a run without --kubeconfig and applies the logging flags; call it once the flags are parsed.
func (f *Flags) Check() error {
	if f.Kubeconfig == "" {
		return fmt.Errorf("--kubeconfig is required")
	}
	return logf.ValidateAndApply(f.Logging)
}

// Main runs the command `name`: its options parsed from the arguments by `parse`, then `run` until SIGTERM or an
// interrupt; --help exits 0, any error is logged and exits 1.
func Main[O any](name string, parse func(args []string) (O, error), run func(ctx context.Context, o O) error) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	logf.InitLogs()
	ctx = logf.NewContext(ctx, logf.Log, name)
	o, err := parse(os.Args[1:])
	if err == nil {
		err = run(ctx, o)
	}
	if errors.Is(err, pflag.ErrHelp) {
		return
	}
	if err != nil {
		logf.Log.Error(err, "cert-manager "+name+" failed")
		logf.FlushLogs()
		os.Exit(1)
	}
	logf.FlushLogs()
}
