/**
 * LeaseStore on a real apiserver: one coordination.k8s.io/v1 Lease, read with GET and written with create or a
 * full update (PUT) carrying the resourceVersion it was computed from, so a concurrent writer makes the write fail
 * with 409 (LeaseConflict) instead of being overwritten. Times travel as MicroTime (RFC 3339 with microseconds).
 */
import { ApiException, CoordinationV1Api, V1MicroTime, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { LeaseConflict, type LeaseSpec, type LeaseStore, type StoredLease } from './lease.ts';

function stored(lease: V1Lease): StoredLease {
  const s = lease.spec ?? {};
  const ms = (t: Date | undefined) => (t ? new Date(t).getTime() : 0);
  return {
    resourceVersion: lease.metadata?.resourceVersion ?? '',
    spec: {
      holderIdentity: s.holderIdentity ?? '',
      leaseDurationSeconds: s.leaseDurationSeconds ?? 0,
      acquireTime: ms(s.acquireTime),
      renewTime: ms(s.renewTime),
      leaseTransitions: s.leaseTransitions ?? 0,
    },
  };
}

function body(namespace: string, name: string, spec: LeaseSpec, resourceVersion?: string): V1Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, resourceVersion, labels: { 'app.kubernetes.io/managed-by': 'meshgate' } },
    spec: {
      holderIdentity: spec.holderIdentity,
      leaseDurationSeconds: spec.leaseDurationSeconds,
      acquireTime: new V1MicroTime(spec.acquireTime),
      renewTime: new V1MicroTime(spec.renewTime),
      leaseTransitions: spec.leaseTransitions,
    },
  };
}

const code = (err: unknown) => (err instanceof ApiException ? err.code : undefined);

export function kubeLeaseStore(kc: KubeConfig, namespace: string, name: string): LeaseStore {
  const api = kc.makeApiClient(CoordinationV1Api);
  return {
    async get() {
      try {
        return stored(await api.readNamespacedLease({ name, namespace }));
      } catch (err) {
        if (code(err) === 404) return undefined;
        throw err;
      }
    },
    async create(spec) {
      try {
        return stored(await api.createNamespacedLease({ namespace, body: body(namespace, name, spec) }));
      } catch (err) {
        if (code(err) === 409) throw new LeaseConflict(`lease ${namespace}/${name} exists already`);
        throw err;
      }
    },
    async update(spec, resourceVersion) {
      try {
        return stored(
          await api.replaceNamespacedLease({ name, namespace, body: body(namespace, name, spec, resourceVersion) }),
        );
      } catch (err) {
        if (code(err) === 409) throw new LeaseConflict(`lease ${namespace}/${name} changed since it was read`);
        throw err;
      }
    },
  };
}
