/**
 * The seccomp and AppArmor confinement a mesh container gets from the POD (issue 33 §8). A container without its own
 * profile takes the pod's `securityContext.seccompProfile` / `appArmorProfile`; the injectors write none on their
 * containers, so a pod-level `Unconfined` runs the proxy, the init container and the validator without the runtime's
 * default profile — the container contracts (common.ts TIGHTENING) judge only what a container sets itself. The
 * older AppArmor annotation `container.apparmor.security.beta.kubernetes.io/<container>` still reaches the runtime
 * (the apiserver copies it into the field of a pod that sets none); the seccomp annotations are read by no
 * supported kubelet, but a value of `unconfined` there says the same and costs nothing to refuse.
 */
import type { Container, Pod } from '../../contract/pod.ts';
import { confinement } from './common.ts';
import type { Problem } from './types.ts';

const APPARMOR_ANNOTATION = 'container.apparmor.security.beta.kubernetes.io/';
const SECCOMP_POD_ANNOTATION = 'seccomp.security.alpha.kubernetes.io/pod';
const SECCOMP_ANNOTATION = 'container.seccomp.security.alpha.kubernetes.io/';

const PROFILES = [
  ['seccompProfile', confinement('seccomp')],
  ['appArmorProfile', confinement('AppArmor')],
] as const;

function hasConfinementAnnotation(annotations: Readonly<Record<string, string>>): boolean {
  for (const k in annotations)
    if (k.startsWith(APPARMOR_ANNOTATION) || k.startsWith(SECCOMP_ANNOTATION) || k === SECCOMP_POD_ANNOTATION)
      return true;
  return false;
}

/**
 * Why the pod leaves one of `meshContainers` unconfined where its own security context says nothing; undefined
 * when every one of them keeps a confining profile (or sets its own, which its contract judged).
 */
export function podConfinementProblem(pod: Pod, meshContainers: readonly Container[]): Problem {
  const podSc = pod.spec.securityContext as Record<string, unknown> | undefined;
  const annotations = pod.metadata?.annotations ?? {};
  // The annotations are looked up per container only on a pod that has any of them (most have none).
  const annotated = hasConfinementAnnotation(annotations);
  for (const c of meshContainers) {
    const own = c.securityContext as Record<string, unknown> | undefined;
    for (const [field, check] of PROFILES) {
      if (own?.[field] !== undefined) continue;
      const problem = check(podSc?.[field], undefined as never);
      if (problem) return `the pod's securityContext.${field} ${problem} (container ${c.name} sets none of its own)`;
    }
    if (!annotated) continue;
    const apparmor = annotations[`${APPARMOR_ANNOTATION}${c.name}`];
    if (apparmor !== undefined && own?.appArmorProfile === undefined && apparmor.trim().toLowerCase() === 'unconfined')
      return `annotation ${APPARMOR_ANNOTATION}${c.name}=${apparmor} runs container ${c.name} without AppArmor`;
    for (const key of [SECCOMP_POD_ANNOTATION, `${SECCOMP_ANNOTATION}${c.name}`]) {
      const v = annotations[key];
      if (v !== undefined && v.trim().toLowerCase() === 'unconfined')
        return `annotation ${key}=${v} asks to run container ${c.name} without seccomp`;
    }
  }
  return undefined;
}
