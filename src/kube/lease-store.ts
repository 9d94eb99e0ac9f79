/**
 * LeaseStore on a real apiserver: one coordination.k8s.io/v1 Lease, read with GET and written with create or a
 * full update (PUT) carrying the resourceVersion it was computed from, so a concurrent writer makes the write fail
 * with 409 (LeaseConflict) instead of being overwritten. Times travel as MicroTime (RFC 3339 with microseconds).
 */
import type { KubeClient } from './api/client.ts';
import type { Lease } from './api/objects.ts';
import { group } from './api/paths.ts';
import { statusCode } from './errors.ts';
import { LeaseConflict, type LeaseSpec, type LeaseStore, type StoredLease } from './lease.ts';

/** MicroTime as the apiserver parses it: RFC 3339 with exactly six fractional digits. */
const microTime = (ms: number) => new Date(ms).toISOString().replace('Z', '000Z');

function stored(lease: Lease): StoredLease {
  const s = lease.spec ?? {};
  const ms = (t: string | undefined) => (t ? new Date(t).getTime() : 0);
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

function body(namespace: string, name: string, spec: LeaseSpec, resourceVersion?: string): Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, resourceVersion, labels: { 'app.kubernetes.io/managed-by': 'meshgate' } },
    spec: {
      holderIdentity: spec.holderIdentity,
      leaseDurationSeconds: spec.leaseDurationSeconds,
      acquireTime: microTime(spec.acquireTime),
      renewTime: microTime(spec.renewTime),
      leaseTransitions: spec.leaseTransitions,
    },
  };
}

export function kubeLeaseStore(client: KubeClient, namespace: string, name: string): LeaseStore {
  const leases = group('coordination.k8s.io/v1', 'leases', { namespace });
  const lease = group('coordination.k8s.io/v1', 'leases', { namespace, name });
  return {
    async get() {
      try {
        return stored(await client.get<Lease>(lease));
      } catch (err) {
        if (statusCode(err) === 404) return undefined;
        throw err;
      }
    },
    async create(spec) {
      try {
        return stored(await client.create<Lease>(leases, body(namespace, name, spec)));
      } catch (err) {
        if (statusCode(err) === 409) throw new LeaseConflict(`lease ${namespace}/${name} exists already`);
        throw err;
      }
    },
    async update(spec, resourceVersion) {
      try {
        return stored(await client.update<Lease>(lease, body(namespace, name, spec, resourceVersion)));
      } catch (err) {
        if (statusCode(err) === 409) throw new LeaseConflict(`lease ${namespace}/${name} changed since it was read`);
        throw err;
      }
    },
  };
}
