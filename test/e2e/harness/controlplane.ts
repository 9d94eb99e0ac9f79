// Starts a real, throwaway Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler) plus kwok for fake nodes, all on 127.0.0.1 in a temp dir, and tears it down without leftovers.
// Only in a network namespace with no route out (test/support/isolation.ts): it refuses to start anywhere else.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, type V1Node } from '@kubernetes/client-node';
import { assertNoRouteOut } from '../../support/isolation.ts';
import { findControlPlaneBinaries, type ControlPlaneManifest } from './binaries.ts';
import * as args from './components.ts';
import { freePort, httpGet, runTool, type RunOptions, type RunResult } from './net.ts';
import { createKwokNode, type NodeOptions } from './nodes.ts';
import { CertificateAuthority, kubeconfig, newSigningKey } from './pki.ts';
import * as procs from './procs.ts';
import { waitFor } from './wait.ts';

export type ComponentName = 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'kwok';

export interface StartOptions {
  /** Fake nodes to create before returning: a count (named kwok-node-0, -1, ...) or named specs. Default 0. */
  nodes?: number | ({ name: string } & NodeOptions)[];
  /** Default true. Without it pods stay Pending (nothing binds them). */
  withScheduler?: boolean;
  /** Default true. Without it there are no default ServiceAccounts, so pods in new namespaces are rejected. */
  withControllerManager?: boolean;
  /** Default true. Without it nodes never become Ready and pods never Running. */
  withKwok?: boolean;
  /** kwok pod stages: 'fast' (default) sets pods Running at once; 'general' also walks init containers. */
  podStages?: 'fast' | 'general';
  /** Extra etcd flags, e.g. ['--quota-backend-bytes=8589934592'] (bench --scale). */
  etcdArgs?: string[];
  /** Extra kube-controller-manager flags, e.g. ['--node-monitor-grace-period=10m']. */
  controllerManagerArgs?: string[];
  /** Extra kube-apiserver flags, e.g. ['--runtime-config=admissionregistration.k8s.io/v1beta1=true']. */
  apiserverArgs?: string[];
  featureGates?: Record<string, boolean>;
  /**
   * Give the apiserver a client certificate of the cluster CA for kubelets (--kubelet-client-certificate), so
   * logs/exec/port-forward reach real kubelets (test/realnode), which trust that CA. Default false (kwok needs none).
   */
  kubeletClientCert?: boolean;
  /**
   * kwok's kubelet API for `kubectl logs` (test/e2e/docs-commands.test.ts): kwok serves HTTPS with a certificate of
   * the cluster CA (the apiserver dials nodes over HTTPS) and reads these extra --config files (ClusterLogs,
   * Logs: which file each container's log is). Default: plain HTTP, stages only.
   */
  kwokLogs?: { configs: string[] };
  /** Budget for the whole startup. Default 180 s: the apiserver alone needs ~10–40 s on a busy 2-core box. */
  startTimeoutMs?: number;
}

export interface ControlPlane {
  /** Temp dir holding etcd data, PKI, kubeconfigs and logs; removed by stop(). */
  dir: string;
  /** Admin kubeconfig (system:masters client certificate). */
  kubeconfigPath: string;
  kc: KubeConfig;
  /** https://127.0.0.1:<port> */
  server: string;
  binDir: string;
  versions: ControlPlaneManifest;
  /** The cluster CA: the apiserver trusts client certs it issues; use ca.issue() for webhook serving certs. */
  ca: CertificateAuthority;
  /** Pids (= process group ids) of the running components. */
  pids(): Partial<Record<ComponentName, number>>;
  kubectl(argv: string[], opts?: RunOptions): Promise<RunResult>;
  helm(argv: string[], opts?: RunOptions): Promise<RunResult>;
  addNode(name: string, opts?: NodeOptions): Promise<V1Node>;
  /** A component's full log so far ('' if it was not started). */
  logs(component: ComponentName): string;
  /** The last lines of every component's log, for failure messages. */
  describe(lines?: number): string;
  stop(): Promise<void>;
}

/** Startup attempts: a port picked free can be taken by a parallel test before the component binds it. */
const START_ATTEMPTS = 3;

/**
 * Refuses (throws) before starting anything unless this process's network namespace has no route out and none into
 * the cluster's ranges (issue 21): vitest, the bench and the demo re-execute themselves under `unshare --net`, and
 * this check keeps a run that bypassed them from letting the apiserver dial a ClusterIP through the gateway.
 */
export async function startControlPlane(opts: StartOptions = {}): Promise<ControlPlane> {
  assertNoRouteOut('a kube-apiserver (test/e2e/harness)', { cidrs: args.clusterCidrs(opts.apiserverArgs) });
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      const portTaken = err instanceof Error && err.message.includes('address already in use');
      if (!portTaken || attempt === START_ATTEMPTS) throw err;
      process.stderr.write(`control plane: a port was taken while starting (attempt ${attempt}); retrying\n`);
    }
  }
}

async function startOnce(opts: StartOptions): Promise<ControlPlane> {
  const bins = findControlPlaneBinaries();
  const withCM = opts.withControllerManager ?? true;
  const withScheduler = opts.withScheduler ?? true;
  const withKwok = opts.withKwok ?? true;
  const budget = opts.startTimeoutMs ?? 180_000;
  const deadline = Date.now() + budget;
  const remaining = () => Math.max(1_000, deadline - Date.now());

  const dir = mkdtempSync(join(tmpdir(), 'meshgate-cp-'));
  procs.removeDirOnExit(dir);
  const pgidFile = join(dir, 'pgids');
  writeFileSync(pgidFile, '');
  const stopWatchdog = procs.startWatchdog(dir, pgidFile);
  mkdirSync(join(dir, 'logs'));
  const logPath = (c: ComponentName) => join(dir, 'logs', `${c}.log`);
  const running = new Map<ComponentName, procs.Component>();
  let stopped = false;

  const describe = (lines = 30) =>
    [...running.keys()].map((c) => `--- ${c} (${logPath(c)}) ---\n${procs.tail(logPath(c), lines)}`).join('\n');
  const start = (name: ComponentName, argv: string[], env?: NodeJS.ProcessEnv) => {
    const c = procs.startComponent(name, bins.bin(name), argv, { logPath: logPath(name), pgidFile, env, cwd: dir });
    running.set(name, c);
    return c;
  };

  const stop = async () => {
    if (stopped) return;
    stopped = true;
    // Reverse start order: clients first, etcd last, so nothing logs storage errors while shutting down.
    for (const c of [...running.values()].reverse()) await procs.stopComponent(c);
    await stopWatchdog();
    rmSync(dir, { recursive: true, force: true });
    procs.forgetDir(dir);
  };

  try {
    const layout: args.Layout = {
      dir,
      etcdClientPort: await freePort(),
      etcdPeerPort: await freePort(),
      apiserverPort: await freePort(),
      controllerManagerPort: await freePort(),
      schedulerPort: await freePort(),
      kwokPort: await freePort(),
    };
    const server = `https://127.0.0.1:${layout.apiserverPort}`;
    const ca = new CertificateAuthority();
    const admin = writePki(dir, server, ca);

    const etcd = start('etcd', args.etcdArgs(layout, opts.etcdArgs));
    await waitFor(
      'etcd /health',
      async () => {
        procs.assertRunning(etcd);
        const r = await httpGet(`http://127.0.0.1:${layout.etcdClientPort}/health`);
        return r.status === 200 && r.body.includes('"true"');
      },
      { timeoutMs: remaining(), describe },
    );

    const kubeletClient = opts.kubeletClientCert ? writeKubeletClientCert(dir, ca) : [];
    const apiserver = start(
      'kube-apiserver',
      args.apiserverArgs(layout, [...kubeletClient, ...(opts.apiserverArgs ?? [])], opts.featureGates ?? {}),
    );
    await waitFor(
      'kube-apiserver /readyz',
      async () => {
        procs.assertRunning(apiserver);
        return (await httpGet(`${server}/readyz`, admin)).status === 200;
      },
      { timeoutMs: remaining(), describe },
    );

    const probes: Promise<unknown>[] = [];
    const probe = (c: procs.Component, url: string) =>
      probes.push(
        waitFor(
          `${c.name} ${url}`,
          async () => {
            procs.assertRunning(c);
            return (await httpGet(url, { insecure: true })).status === 200;
          },
          { timeoutMs: remaining(), describe },
        ),
      );
    if (withCM) {
      const cm = start('kube-controller-manager', [
        ...args.controllerManagerArgs(layout),
        ...(opts.controllerManagerArgs ?? []),
      ]);
      probe(cm, `https://127.0.0.1:${layout.controllerManagerPort}/healthz`);
    }
    if (withScheduler) {
      const s = start('kube-scheduler', args.schedulerArgs(layout));
      probe(s, `https://127.0.0.1:${layout.schedulerPort}/healthz`);
    }
    if (withKwok) {
      // HOME in the temp dir: kwok reads ~/.kwok/kwok.yaml if present and writes its work dir there.
      const kwokArgs = args.kwokArgs(layout, bins.kwokStageConfigs(opts.podStages ?? 'fast'));
      if (opts.kwokLogs) {
        const serving = ca.issue({ commonName: 'kwok', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
        writeFileSync(join(dir, 'kwok.crt'), serving.certPem);
        writeFileSync(join(dir, 'kwok.key'), serving.keyPem, { mode: 0o600 });
        kwokArgs.push(`--tls-cert-file=${join(dir, 'kwok.crt')}`, `--tls-private-key-file=${join(dir, 'kwok.key')}`);
        for (const c of opts.kwokLogs.configs) kwokArgs.push('--config', c);
      }
      const k = start('kwok', kwokArgs, { ...process.env, HOME: dir });
      probe(k, `${opts.kwokLogs ? 'https' : 'http'}://127.0.0.1:${layout.kwokPort}/healthz`);
    }
    await Promise.all(probes);

    const kc = new KubeConfig();
    kc.loadFromFile(args.pkiPaths(dir).adminKubeconfig);
    if (withCM) {
      // The controller-manager's serviceaccount controller creates it; pods are rejected until it exists.
      const core = kc.makeApiClient(CoreV1Api);
      await waitFor(
        'ServiceAccount default/default',
        () => core.readNamespacedServiceAccount({ name: 'default', namespace: 'default' }),
        { timeoutMs: remaining(), describe },
      );
    }

    const env = { ...process.env, KUBECONFIG: args.pkiPaths(dir).adminKubeconfig };
    const cp: ControlPlane = {
      dir,
      kubeconfigPath: args.pkiPaths(dir).adminKubeconfig,
      kc,
      server,
      binDir: bins.binDir,
      versions: bins.manifest,
      ca,
      pids: () => Object.fromEntries([...running].filter(([, c]) => !c.exit).map(([n, c]) => [n, c.pid])),
      kubectl: (argv, o) => runTool(bins.bin('kubectl'), argv, { ...o, env: { ...env, ...o?.env } }),
      helm: (argv, o) =>
        runTool(bins.bin('helm'), argv, { ...o, env: { ...env, HELM_CACHE_HOME: join(dir, 'helm'), ...o?.env } }),
      addNode: (name, o) => {
        if (!withKwok) throw new Error('addNode needs kwok: start the control plane with withKwok: true');
        return createKwokNode(kc, name, { ...o, controllerManager: withCM, describe });
      },
      logs: (c) => (running.has(c) ? procs.tail(logPath(c), Number.MAX_SAFE_INTEGER) : ''),
      describe,
      stop,
    };
    const nodes: ({ name: string } & NodeOptions)[] =
      typeof opts.nodes === 'number'
        ? Array.from({ length: opts.nodes }, (_, i) => ({ name: `kwok-node-${i}` }))
        : (opts.nodes ?? []);
    await Promise.all(nodes.map((n) => cp.addNode(n.name, n)));
    return cp;
  } catch (err) {
    const detail = describe(40);
    await stop();
    const msg = err instanceof Error ? err.message : String(err);
    throw new Error(`control plane failed to start: ${msg}\n${detail}`, { cause: err });
  }
}

/** Writes CA, serving cert, signing keys and kubeconfigs; returns the admin client TLS material for probes. */
function writePki(dir: string, server: string, ca: CertificateAuthority) {
  const p = args.pkiPaths(dir);
  mkdirSync(join(dir, 'pki'), { mode: 0o700 });
  const write = (f: string, s: string) => writeFileSync(f, s, { mode: 0o600 });
  write(p.caCert, ca.certPem);
  write(p.caKey, ca.keyPem);
  const serving = ca.issue({
    commonName: 'kube-apiserver',
    dnsNames: [
      'localhost',
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
    ],
    ipAddresses: ['127.0.0.1', '10.96.0.1'], // 10.96.0.1: the `kubernetes` Service IP in SERVICE_CIDR
  });
  write(p.apiserverCert, serving.certPem);
  write(p.apiserverKey, serving.keyPem);
  const sa = newSigningKey();
  write(p.saKey, sa.privatePem);
  write(p.saPub, sa.publicPem);
  // Usernames the bootstrap RBAC policy already grants each component's permissions to.
  const admin = ca.issue({ commonName: 'meshgate-e2e-admin', organizations: ['system:masters'], usage: 'client' });
  const cm = ca.issue({ commonName: 'system:kube-controller-manager', usage: 'client' });
  const sched = ca.issue({ commonName: 'system:kube-scheduler', usage: 'client' });
  write(p.adminKubeconfig, kubeconfig(server, ca.certPem, admin, 'admin'));
  write(p.controllerManagerKubeconfig, kubeconfig(server, ca.certPem, cm, 'kube-controller-manager'));
  write(p.schedulerKubeconfig, kubeconfig(server, ca.certPem, sched, 'kube-scheduler'));
  return { ca: ca.certPem, cert: admin.certPem, key: admin.keyPem };
}

/** The apiserver's client identity towards kubelets (system:masters, like kubeadm's apiserver-kubelet-client). */
function writeKubeletClientCert(dir: string, ca: CertificateAuthority): string[] {
  const pair = ca.issue({
    commonName: 'kube-apiserver-kubelet-client',
    organizations: ['system:masters'],
    usage: 'client',
  });
  const cert = join(dir, 'pki', 'kubelet-client.crt');
  const key = join(dir, 'pki', 'kubelet-client.key');
  writeFileSync(cert, pair.certPem, { mode: 0o600 });
  writeFileSync(key, pair.keyPem, { mode: 0o600 });
  return [
    `--kubelet-client-certificate=${cert}`,
    `--kubelet-client-key=${key}`,
    '--kubelet-preferred-address-types=InternalIP',
  ];
}
