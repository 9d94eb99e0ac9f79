/**
 * `meshgate uninstall`, in the order that keeps meshgate from undoing it (docs/install.md, "Uninstalling"):
 *   1. refuse while meshgate is still installed: its webhook configurations would pin recreated pods again, and
 *      its workloads would write again;
 *   2. wait until the pods of its workloads are gone (a node agent still terminating could publish a verdict after
 *      step 3), and delete its own bare pods (quarantine probes, a failed `helm test` pod);
 *   3. remove its label, annotations, condition and taint from every Node;
 *   4. delete Pending pods pinned to verified nodes by its affinity that a controller recreates (now without it),
 *      and name the bare ones, which only their owner can recreate;
 *   5. delete the Secrets and the Lease its components made (never one it did not make), and the PolicyReports of
 *      its audit findings (src/repair/reports/);
 *   6. the namespaces' enforcement levels (label meshgate.io/enforcement): kept, and said so with the command that
 *      removes them — they are the cluster admins' decisions, and a reinstall starts each namespace at its level,
 *      as an upgrade would (removing them would lower enforcement unasked) — or, with removeEnforcementLabels,
 *      removed. Pods admitted below enforce keep their record (meshgate.io/would-deny) until they are replaced:
 *      counted and said.
 * Idempotent: a second run finds nothing and says so. With dryRun nothing is written and nothing waited for.
 */
import { ApiException, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { describeKubeError } from '../kube/errors.ts';
import type { UninstallApi } from './kube-api.ts';
import { deleteReports, enforcementLabels, keptRecords } from './leftovers.ts';
import { POLICY_GRACE_MS, sleeper, Stop, type UninstallOptions } from './options.ts';
import { controllerOf } from '../check/records.ts';
import {
  madeByMeshgate,
  type ReleaseNames,
  nodeCleanup,
  ownBarePod,
  pinnedByMeshgate,
  meshgateWorkloadOf,
} from './plan.ts';

export type { UninstallOptions } from './options.ts';

/** 0: nothing of meshgate left (or, dry run, nothing would be); 1: it could not finish, and says what is left. */
export type UninstallExit = 0 | 1;

/** A Node changed by someone else between our read and our patch: re-read and retry this often. */
const CONFLICT_RETRIES = 5;
const podName = (p: V1Pod) => `${p.metadata?.namespace}/${p.metadata?.name}`;

export async function uninstall(api: UninstallApi, o: UninstallOptions): Promise<UninstallExit> {
  const n = o.names;
  const would = (done: string, planned: string) => (o.dryRun ? planned : done);
  o.out(
    `meshgate uninstall: release objects named ${n.name} in namespace ${n.namespace}${o.dryRun ? ' (dry run)' : ''}`,
  );
  try {
    await refuseWhileInstalled(api, n);
    const own = await stopOwnPods(api, o);
    const nodes = await cleanNodes(api, o);
    const pods = await unpinPods(api, o);
    const objects = (await deleteObjects(api, o)) + (await deleteReports(api, o));
    const levels = await enforcementLabels(api, o);
    const kept = await keptRecords(api, levels.kept);
    const changed = own + nodes + pods.deleted + objects + levels.removed;
    if (kept.length === 0)
      o.out(
        changed === 0
          ? 'nothing of meshgate was left'
          : would(
              `done: ${changed} removed, nothing of meshgate is left`,
              `would remove ${changed}; nothing was changed`,
            ),
      );
    else
      o.out(
        `${changed === 0 ? 'nothing of meshgate was left to remove' : would(`done: ${changed} removed`, `would remove ${changed}; nothing was changed`)}; ` +
          'left on purpose, with how to remove it:',
      );
    for (const line of kept) o.out(line);
    if (pods.bare.length > 0)
      o.out(
        `needs you: ${pods.bare.length} pod(s) without a controller stay Pending on meshgate's affinity; recreate them ` +
          `without it: ${pods.bare.join(', ')}`,
      );
    return 0;
  } catch (err) {
    o.out(`failed: ${err instanceof Stop ? err.message : describeKubeError(err)}`);
    return 1;
  }
}

async function refuseWhileInstalled(api: UninstallApi, n: ReleaseNames): Promise<void> {
  const configs = await api.webhookConfigurations(n.name);
  const live: string[] = configs.map((kind) => `${kind} ${n.name}`);
  for (const [kind, name] of [
    ['DaemonSet', n.nodeAgent],
    ['Deployment', n.name],
    ['Deployment', n.repairController],
  ] as const) {
    const w = await api.workload(kind, n.namespace, name);
    if (w && !w.deleting) live.push(`${kind} ${n.namespace}/${name}`);
  }
  if (live.length > 0)
    throw new Stop(
      `meshgate is still installed (${live.join(', ')}): it would pin recreated pods and publish verdicts again. ` +
        'Uninstall the chart first (helm uninstall runs this command itself), or delete its manifests',
    );
}

/** Deletes meshgate's bare pods (how many) and waits until its workloads' pods are gone. */
async function stopOwnPods(api: UninstallApi, o: UninstallOptions): Promise<number> {
  const n = o.names;
  const now = o.now ?? Date.now;
  const deadline = now() + o.timeoutMs;
  const bare = (await api.pods(n.namespace)).filter((p) => ownBarePod(p, n));
  for (const pod of bare) {
    if (!o.dryRun) await api.deletePod(pod);
    o.out(`  pod ${podName(pod)}: ${o.dryRun ? 'would delete' : 'deleted'} (meshgate's own, no controller)`);
  }
  for (;;) {
    const running = (await api.pods(n.namespace)).filter((p) => meshgateWorkloadOf(p, n) !== undefined);
    if (running.length === 0) {
      o.out('  meshgate workloads: stopped, no pod left');
      return bare.length;
    }
    const names = running.map((p) => `${p.metadata?.name} (${meshgateWorkloadOf(p, n)})`).join(', ');
    if (o.dryRun) {
      o.out(`  meshgate workloads: would wait for ${running.length} pod(s) to stop: ${names}`);
      return bare.length;
    }
    if (now() >= deadline)
      throw new Stop(
        `meshgate's pods are still there after ${o.timeoutMs / 1000}s: ${names}. Nodes were left as they are: an agent ` +
          'still running would publish its verdict again. Run again once they are gone',
      );
    o.out(`  waiting for ${running.length} pod(s) of meshgate to stop: ${names}`);
    await (o.sleep ?? sleeper)(o.pollMs);
  }
}

async function cleanNodes(api: UninstallApi, o: UninstallOptions): Promise<number> {
  let changed = 0;
  for (const listed of await api.nodes()) {
    const name = listed.metadata?.name;
    // Nodes come from a list of the apiserver, which names every one.
    if (!name) throw new Error('a listed Node has no metadata.name');
    const removed = o.dryRun ? nodeCleanup(listed)?.removes : await cleanNode(api, o, name, listed);
    if (!removed) continue;
    changed++;
    o.out(`  node ${name}: ${o.dryRun ? 'would remove' : 'removed'} ${removed.join(', ')}`);
  }
  return changed;
}

/** Patches one Node until it carries nothing of meshgate's; what it removed, or undefined when there was nothing. */
async function cleanNode(
  api: UninstallApi,
  o: UninstallOptions,
  name: string,
  listed: V1Node,
): Promise<string[] | undefined> {
  const now = o.now ?? Date.now;
  const policyDeadline = now() + POLICY_GRACE_MS;
  let node: V1Node | undefined = listed;
  let first: string[] | undefined;
  for (let conflicts = 0; ; ) {
    const plan = node && nodeCleanup(node);
    if (!plan) return first;
    first ??= plan.removes;
    try {
      // The status first: a node whose label is gone but condition True would still read as verified.
      if (plan.status) await api.patchNodeStatus(name, plan.status);
      if (plan.node) await api.patchNode(name, plan.node);
    } catch (err) {
      const why = describeKubeError(err);
      if (err instanceof ApiException && err.code === 409 && ++conflicts <= CONFLICT_RETRIES) {
        // Another writer changed the Node since we read it: read it again.
      } else if (why.includes('ValidatingAdmissionPolicy') && now() < policyDeadline) {
        await (o.sleep ?? sleeper)(o.pollMs);
      } else {
        throw new Stop(`node ${name}: ${why}`);
      }
    }
    node = await api.node(name);
  }
}

async function unpinPods(api: UninstallApi, o: UninstallOptions): Promise<{ deleted: number; bare: string[] }> {
  let deleted = 0;
  const bare: string[] = [];
  for (const pod of (await api.unboundPendingPods()).filter(pinnedByMeshgate)) {
    // The pod's controller (a DaemonSet, ReplicaSet, Job, …) recreates it when it is deleted.
    const owner = controllerOf(pod.metadata?.ownerReferences);
    if (!owner) {
      bare.push(podName(pod));
      continue;
    }
    if (!o.dryRun) await api.deletePod(pod);
    deleted++;
    o.out(
      `  pod ${podName(pod)}: ${o.dryRun ? 'would delete' : 'deleted'} (Pending on meshgate's verified-node ` +
        `affinity; its ${owner.kind} ${owner.name} recreates it without)`,
    );
  }
  return { deleted, bare };
}

async function deleteObjects(api: UninstallApi, o: UninstallOptions): Promise<number> {
  const n = o.names;
  let changed = 0;
  const found = [
    ...[n.tlsSecret, n.markSecret].map((name) => ({ kind: 'Secret', name, read: () => api.secret(n.namespace, name) })),
    { kind: 'Lease', name: n.lease, read: () => api.lease(n.namespace, n.lease) },
  ];
  for (const { kind, name, read } of found) {
    const obj = await read();
    if (!obj?.metadata) continue;
    const what = `${kind} ${n.namespace}/${obj.metadata.name}`;
    const owner = madeByMeshgate(obj, n);
    if (!owner.ours) {
      o.out(`  ${what}: ${owner.why}`);
      continue;
    }
    if (!o.dryRun) {
      if (kind === 'Lease') await api.deleteLease(n.namespace, name, obj.metadata.uid);
      else await api.deleteSecret(n.namespace, name, obj.metadata.uid);
    }
    changed++;
    o.out(`  ${what}: ${o.dryRun ? 'would delete' : 'deleted'} (made by ${owner.by})`);
  }
  return changed;
}
