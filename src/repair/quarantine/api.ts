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
import type { KubeClient } from '../../kube/api/client.ts';
import type { Node, KubePod } from '../../kube/api/objects.ts';
import { core } from '../../kube/api/paths.ts';
import { statusCode } from '../../kube/errors.ts';
import { createEvent } from '../../kube/events.ts';
import { CONDITION_TYPE, UNVERIFIED_TAINT, VERIFIED_LABEL } from '../../contract/node.ts';
import {
  describeMark,
  QUARANTINE_ANNOTATION,
  QUARANTINE_HISTORY_ANNOTATION,
  QUARANTINE_REASON,
  writeHistory,
  writeMark,
} from '../../node/quarantine.ts';
import type { ValidatorWatch } from '../failed/decide.ts';
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

export const REPAIR_FIELD_MANAGER = 'meshgate-repair-controller';
/** A 409 means the Node changed between our read and our taints patch: read again, this often. */
const CONFLICT_RETRIES = 3;
const WRITE = { query: { fieldManager: REPAIR_FIELD_MANAGER } };

const is = (err: unknown, code: number) => statusCode(err) === code;

export function kubeQuarantineApi(client: KubeClient, probe: ProbeTemplate, validator: ValidatorWatch): QuarantineApi {
  const nodePath = (name: string) => core('nodes', { name });
  const probePath = (node: string) => core('pods', { namespace: probe.namespace, name: probeName(node) });
  const readNode = (name: string) => client.get<Node>(nodePath(name));
  const kubeTime = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000).toISOString().replace('.000Z', 'Z');

  async function patchNode(name: string, plan: (n: Node) => Record<string, unknown>): Promise<Node> {
    for (let attempt = 0; ; attempt++) {
      const node = await readNode(name);
      try {
        return await client.patch<Node>(nodePath(name), 'merge', plan(node), WRITE);
      } catch (err) {
        if (!is(err, 409) || attempt >= CONFLICT_RETRIES) throw err;
      }
    }
  }

  return {
    async readNode(name) {
      try {
        return nodeView(await readNode(name));
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
      const status = core('nodes', { name: view.name, sub: 'status' });
      const final = await client.patch<Node>(status, 'strategic', { status: { conditions: [condition] } }, WRITE);
      return nodeView(final);
    },

    async release(view, history) {
      const body = {
        metadata: {
          annotations: { [QUARANTINE_ANNOTATION]: null, [QUARANTINE_HISTORY_ANNOTATION]: writeHistory(history) },
        },
      };
      return nodeView(await client.patch<Node>(nodePath(view.name), 'merge', body, WRITE));
    },

    async nodeEvent(view, type, reason, message) {
      const involved = { kind: 'Node' as const, name: view.name, uid: view.uid };
      await createEvent(client, involved, { type, reason, message, component: REPAIR_FIELD_MANAGER });
    },

    async readProbe(node) {
      let pod: KubePod;
      try {
        pod = await client.get<KubePod>(probePath(node));
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
        await client.create(core('pods', { namespace: probe.namespace }), buildProbePod(probe, node));
      } catch (err) {
        if (!is(err, 409)) throw err;
      }
    },

    async deleteProbe(node) {
      try {
        await client.delete(probePath(node));
      } catch (err) {
        if (!is(err, 404)) throw err;
      }
    },
  };
}
