/**
 * QuarantineApi on a real apiserver, as the repair controller's service account (RBAC: get/list/watch/patch nodes,
 * patch nodes/status, create/delete its probe pods, create Events; the chart's node policies let it only withdraw).
 * - withdraw: a merge patch of the Node (label "false", the mark and history annotations, and — only when the taint
 *   must be added — the whole taints list with the resourceVersion it was computed from, retried on 409), then a
 *   strategic merge patch of nodes/status setting the MeshCNIVerified condition False (`node_quarantined`) without
 *   touching its lastHeartbeatTime, which stays the node agent's.
 * - release: a merge patch removing the mark (and updating the history); the node agent publishes its own verdict.
 * - Events on the Node, in namespace default (where the kubelet's node Events go).
 */
import {
  ApiException,
  CoreV1Api,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { CONDITION_TYPE, UNVERIFIED_TAINT, VERIFIED_LABEL } from '../node/contract.ts';
import {
  describeMark,
  QUARANTINE_ANNOTATION,
  QUARANTINE_HISTORY_ANNOTATION,
  QUARANTINE_REASON,
  writeHistory,
  writeMark,
} from '../node/quarantine.ts';
import type { ValidatorWatch } from './decide.ts';
import { nodeView } from './node-view.ts';
import {
  buildProbePod,
  judgeProbe,
  PROBE_LABEL,
  PROBE_NODE_ANNOTATION,
  probeName,
  type ProbeTemplate,
} from './probe-pod.ts';
import type { QuarantineApi } from './quarantine.ts';

export const FIELD_MANAGER = 'meshgate-repair-controller';
/** A 409 means the Node changed between our read and our taints patch: read again, this often. */
const CONFLICT_RETRIES = 3;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const strategic = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

const is = (err: unknown, code: number) => err instanceof ApiException && err.code === code;

export function kubeQuarantineApi(kc: KubeConfig, probe: ProbeTemplate, validator: ValidatorWatch): QuarantineApi {
  const api = kc.makeApiClient(CoreV1Api);
  const kubeTime = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');

  async function patchNode(name: string, plan: (n: V1Node) => Record<string, unknown>): Promise<V1Node> {
    for (let attempt = 0; ; attempt++) {
      const node = await api.readNode({ name });
      try {
        return await api.patchNode({ name, body: plan(node), fieldManager: FIELD_MANAGER }, merge);
      } catch (err) {
        if (!is(err, 409) || attempt >= CONFLICT_RETRIES) throw err;
      }
    }
  }

  return {
    async readNode(name) {
      try {
        return nodeView(await api.readNode({ name }));
      } catch (err) {
        if (is(err, 404)) return undefined;
        throw err;
      }
    },

    async withdraw(view, mark, history) {
      const written = await patchNode(view.name, (node) => {
        const metadata: Record<string, unknown> = {
          labels: { [VERIFIED_LABEL]: 'false' },
          annotations: {
            [QUARANTINE_ANNOTATION]: writeMark(mark),
            [QUARANTINE_HISTORY_ANNOTATION]: writeHistory(history),
          },
        };
        const body: Record<string, unknown> = { metadata };
        const taints = node.spec?.taints ?? [];
        if (mark.taint && !taints.some((t) => t.key === UNVERIFIED_TAINT.key && t.effect === UNVERIFIED_TAINT.effect)) {
          const plain = taints.map((t) => ({
            key: t.key,
            effect: t.effect,
            ...(t.value !== undefined ? { value: t.value } : {}),
            ...(t.timeAdded ? { timeAdded: kubeTime(new Date(t.timeAdded)) } : {}),
          }));
          body.spec = { taints: [...plain, { ...UNVERIFIED_TAINT }] };
          metadata.resourceVersion = node.metadata?.resourceVersion;
        }
        return body;
      });
      const previous = written.status?.conditions?.find((c) => c.type === CONDITION_TYPE);
      const condition: Record<string, unknown> = {
        type: CONDITION_TYPE,
        status: 'False',
        reason: QUARANTINE_REASON,
        message: describeMark({ ok: true, mark }),
      };
      if (previous?.status !== 'False') condition.lastTransitionTime = kubeTime(new Date());
      const final = await api.patchNodeStatus(
        { name: view.name, body: { status: { conditions: [condition] } }, fieldManager: FIELD_MANAGER },
        strategic,
      );
      return nodeView(final);
    },

    async release(view, history) {
      const body = {
        metadata: {
          annotations: { [QUARANTINE_ANNOTATION]: null, [QUARANTINE_HISTORY_ANNOTATION]: writeHistory(history) },
        },
      };
      return nodeView(await api.patchNode({ name: view.name, body, fieldManager: FIELD_MANAGER }, merge));
    },

    async nodeEvent(view, type, reason, message) {
      const now = new Date();
      await api.createNamespacedEvent({
        namespace: 'default',
        body: {
          metadata: { generateName: `${view.name}.`, namespace: 'default' },
          involvedObject: { apiVersion: 'v1', kind: 'Node', name: view.name, uid: view.uid },
          reason,
          message,
          type,
          source: { component: FIELD_MANAGER },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    },

    async readProbe(node) {
      let pod: V1Pod;
      try {
        pod = await api.readNamespacedPod({ name: probeName(node), namespace: probe.namespace });
      } catch (err) {
        if (is(err, 404)) return undefined;
        throw err;
      }
      const createdAt = pod.metadata?.creationTimestamp ? new Date(pod.metadata.creationTimestamp).getTime() : 0;
      const deleting = !!pod.metadata?.deletionTimestamp;
      const ours =
        pod.metadata?.labels?.[PROBE_LABEL] === 'true' && pod.metadata?.annotations?.[PROBE_NODE_ANNOTATION] === node;
      if (!ours)
        return {
          createdAt,
          deleting,
          result: {
            state: 'inconclusive',
            detail: `pod ${probe.namespace}/${probeName(node)} exists but is not meshgate's probe of node ${node}`,
          },
        };
      return { createdAt, deleting, result: judgeProbe(pod.status, validator) };
    },

    async createProbe(node) {
      try {
        await api.createNamespacedPod({ namespace: probe.namespace, body: buildProbePod(probe, node) });
      } catch (err) {
        if (!is(err, 409)) throw err;
      }
    },

    async deleteProbe(node) {
      try {
        await api.deleteNamespacedPod({ name: probeName(node), namespace: probe.namespace });
      } catch (err) {
        if (!is(err, 404)) throw err;
      }
    },
  };
}
