/**
 * A container contract: every field a mesh's injector (or meshgate's template) sets on one of its containers, each
 * with what may legitimately vary and why; anything else in the container is refused (issue 21 §1,
 * docs/security.md "Mesh containers, field by field"). Contracts are data: src/policy/judge/istio.ts, linkerd.ts,
 * own.ts; src/policy/judge/judge.ts applies one to a container.
 */
import type { MeshIdentity, PodView, Problem, Role } from '../../mesh/types.ts';
import type { ControlPlane } from '../../mesh/control-plane.ts';
import type { Container } from '../../contract/pod.ts';

/** A problem with a value, as words completing "its <field> …"; undefined when the value is allowed. */
export type { Problem };

/**
 * What a check may consult besides the value: the container, what of its pod a judgement may read (PodView: the
 * volumes it mounts, among others; never the whole pod, so a verdict can be reused: src/policy/verdict-cache.ts) and
 * the configuration's mesh identity and control plane.
 */
export interface ContractContext {
  readonly pod: PodView;
  readonly container: Container;
  readonly role: Role;
  readonly id: MeshIdentity;
  /** Where the mesh's proxy may connect and whom it trusts (src/mesh/control-plane.ts). */
  readonly cp: ControlPlane;
}

export type FieldCheck = (value: unknown, ctx: ContractContext) => Problem;

export interface ContainerContract {
  /** Who produces this container, for messages: "Istio's injector", "meshgate's template". */
  readonly producer: string;
  /**
   * Every field the producer may set, each with its check. `name` is implied. A field absent here is refused
   * whatever its value: a field the producer never sets is one a pod author added.
   */
  readonly fields: Readonly<Record<string, FieldCheck>>;
}
