/**
 * RepairApi on a real apiserver: DELETE with a UID precondition, and core/v1 Events on the pod; ReportApi: the
 * PolicyReports.
 */
import type { KubeClient } from '../kube/api/client.ts';
import { core, group } from '../kube/api/paths.ts';
import { statusCode } from '../kube/errors.ts';
import { isNoResource, type ReportApi } from './reports/reports.ts';
import { REPORT_API, REPORT_LABELS, REPORT_NAME } from './reports/report.ts';
import { createEvent } from '../kube/events.ts';
import type { RepairApi } from './failed/controller.ts';

export function kubeRepairApi(client: KubeClient, component = 'meshgate-repair'): RepairApi {
  return {
    async deletePod(namespace, name, uid) {
      await client.delete(core('pods', { namespace, name }), { preconditions: { uid } });
    },
    async event(pod, type, reason, message) {
      // Pods come from a watch of the apiserver, which names every one.
      const { name, namespace, uid } = pod.metadata ?? {};
      if (!name || !namespace) throw new Error(`cannot record ${reason} on a pod without a name and namespace`);
      await createEvent(client, { kind: 'Pod', name, namespace, uid }, { type, reason, message, component });
    },
  };
}

/** The PolicyReports of src/repair/reports/: one per namespace, named `meshgate`, by server-side apply. */
export function kubeReportApi(client: KubeClient): ReportApi {
  const path = (namespace?: string) =>
    group(REPORT_API, 'policyreports', namespace === undefined ? {} : { namespace, name: REPORT_NAME });
  return {
    async apply(namespace, report) {
      await client.patch(path(namespace), 'apply', report, {
        query: { fieldManager: 'meshgate-repair-controller', force: true },
      });
    },
    async remove(namespace) {
      try {
        await client.delete(path(namespace));
      } catch (err) {
        if (statusCode(err) !== 404 || isNoResource(err)) throw err;
      }
    },
    async list() {
      const selector = Object.entries(REPORT_LABELS)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const list = await client.get<{ items?: Array<{ metadata?: { name?: string; namespace?: string } }> }>(path(), {
        query: { labelSelector: selector },
      });
      return (list.items ?? [])
        .filter((r) => r.metadata?.name === REPORT_NAME && r.metadata.namespace)
        .map((r) => r.metadata?.namespace as string);
    },
  };
}
