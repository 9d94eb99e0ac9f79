/**
 * One tree's three daemons as the chart runs them, from its image layout and Node flags (image.ts): the node agent
 * (its config file, a CNI conf dir of its own, /healthz and /metrics on a port), the webhook in cluster mode (caches,
 * certificates shared through a Secret, caBundle kept, the admission mark's Secret made) and the repair controller
 * (leader election, the chart's default unmeshed-pod report, the mark's keys). Each gets the admin kubeconfig: the
 * daemons' credentials are a kubeconfig here, a service account token in a cluster; both go through the same client.
 * A --before tree older than a flag gets the flags its own chart gave (markFlags).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../test/e2e/harness/index.ts';
import { corpus } from '../../test/cni/helpers.ts';
import { agentNode, webhookConfigName } from './cluster.ts';
import { startMeshgate, type ImageTree } from './image.ts';

/** The agent's conf file flips between these: Calico with istio-cni chained, and Calico alone. */
export const CNI_FILE = '10-calico.conflist';
export const MESHED = corpus('istio__10-calico.conflist-istioconfig');
export const PRIMARY = corpus('istio__calico.conflist');

/** Between two agent resyncs (a heartbeat each): the chart's 5m would give none within the steady minute. */
export const AGENT_RESYNC = '15s';

export interface Daemons {
  suffix: string;
  tree: ImageTree;
  agent: { child: ChildProcess; port: number; confDir: string };
  webhook: { child: ChildProcess; port: number; secret: string };
  repair: { child: ChildProcess; port: number };
  logFile: string;
}

/**
 * The admission mark's flags (webhook, repair controller) and the unmeshed-pod report's, as the tree's chart passes
 * them: trees before the mark had neither --mark-key-dir nor --unmeshed-pods (then --report-unmeshed). The key file
 * stands for the Secret the kubelet mounts (32 random bytes, what the webhook puts in the Secret it creates).
 */
function markFlags(tree: ImageTree, dir: string, suffix: string) {
  const source = (file: string) => readFileSync(join(tree.dir, 'src', 'cli', file), 'utf8');
  const repairSource = source('repair-controller.ts');
  const unmeshed = repairSource.includes("'unmeshed-pods'") ? '--unmeshed-pods=report' : '--report-unmeshed=true';
  if (!repairSource.includes("'mark-key-dir'")) return { webhook: [], repair: [unmeshed] };
  const keys = join(dir, 'admission-mark');
  mkdirSync(keys, { recursive: true });
  writeFileSync(join(keys, 'key'), randomBytes(32));
  const dirFlag = `--mark-key-dir=${keys}`;
  const secret = source('serve.ts').includes("'mark-key-secret'") ? [`--mark-key-secret=${markSecret(suffix)}`] : [];
  return { webhook: [dirFlag, ...secret], repair: [dirFlag, unmeshed] };
}

export const markSecret = (suffix: string) => `meshgate-admission-mark-${suffix}`;

export async function startDaemons(
  tree: ImageTree,
  suffix: string,
  workDir: string,
  kubeconfig: string,
): Promise<Daemons> {
  const dir = join(workDir, suffix);
  const confDir = join(dir, 'net.d');
  const binDir = join(dir, 'bin');
  mkdirSync(confDir, { recursive: true });
  mkdirSync(binDir, { recursive: true });
  for (const b of ['calico', 'portmap', 'istio-cni']) {
    writeFileSync(join(binDir, b), '#!/bin/sh\nexit 0\n');
    chmodSync(join(binDir, b), 0o755);
  }
  writeFileSync(join(confDir, CNI_FILE), MESHED);
  // The chart's ConfigMap holds the config as JSON; the agent, the webhook and the repair controller all read it.
  const config = join(dir, 'config.yaml');
  writeFileSync(config, `${JSON.stringify({ mesh: 'istio', meshNamespace: 'meshgate' }, null, 2)}\n`);
  const logFile = join(dir, 'daemons.log');
  const log = createWriteStream(logFile);
  const [agentPort, webhookPort, repairPort] = [await freePort(), await freePort(), await freePort()];
  const secret = `meshgate-tls-${suffix}`;
  const mark = markFlags(tree, dir, suffix);
  const agent = startMeshgate(
    tree,
    'agent',
    [
      'node-agent',
      `--config=${config}`,
      `--node-name=${agentNode(suffix)}`,
      `--cni-conf-dir=${confDir}`,
      `--cni-bin-dir=${binDir}`,
      `--resync=${AGENT_RESYNC}`,
      `--kubeconfig=${kubeconfig}`,
      `--port=${agentPort}`,
      '--host=127.0.0.1',
    ],
    log,
  );
  const webhook = startMeshgate(
    tree,
    'webhook',
    [
      'serve',
      `--config=${config}`,
      `--kubeconfig=${kubeconfig}`,
      `--port=${webhookPort}`,
      '--host=127.0.0.1',
      `--cert-secret=${secret}`,
      `--webhook-config=${webhookConfigName(suffix)}`,
      '--drain-seconds=0',
      '--webhook-timeout-seconds=10',
      '--log-level=info',
      ...mark.webhook,
    ],
    log,
  );
  const repair = startMeshgate(
    tree,
    'repair',
    [
      'repair-controller',
      `--config=${config}`,
      `--kubeconfig=${kubeconfig}`,
      `--lease-name=meshgate-repair-${suffix}`,
      `--port=${repairPort}`,
      '--host=127.0.0.1',
      `--webhook-config=${webhookConfigName(suffix)}`,
      '--log-level=info',
      ...mark.repair,
    ],
    log,
  );
  return {
    suffix,
    tree,
    agent: { child: agent, port: agentPort, confDir },
    webhook: { child: webhook, port: webhookPort, secret },
    repair: { child: repair, port: repairPort },
    logFile,
  };
}

/** Resident set size of a live process, from /proc (0 once it has exited). */
export function rssBytes(pid: number | undefined): number {
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}
