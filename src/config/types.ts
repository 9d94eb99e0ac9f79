/**
 * meshgate's one typed configuration, as an operator writes it, derived from its one declaration (config/schema.ts).
 * Parsed and validated once at the edge (config/load.ts) and compiled (config/compile.ts) into the read-only form
 * the admission path uses. `mesh` chooses a profile (src/mesh/) whose defaults fill everything else; which keys exist
 * depends on it: with `istio` and `linkerd` the mesh's own injector injects the proxy (meshgate is its companion), so
 * only the proxy's identity is configured here; with `custom` meshgate injects from the templates.
 */
import type { Infer } from '../contract/shape.ts';
import type {
  APP_PRIVILEGES,
  ContainerPortSchema,
  InitSchema,
  MeshgateConfigSchema,
  NATIVE_SIDECAR_MODES,
  ON_UNVERIFIED_NODE,
  ProxySchema,
  REDIRECT_MODES,
  ResourcesSchema,
  ValidatorSchema,
} from './schema.ts';

export { ENFORCEMENT_LEVELS } from './enums.ts';
import type { ENFORCEMENT_LEVELS } from './enums.ts';

export type MeshgateConfig = Infer<typeof MeshgateConfigSchema>;
export type ProxyConfig = Infer<typeof ProxySchema>;
export type InitConfig = Infer<typeof InitSchema>;
export type ValidatorConfig = Infer<typeof ValidatorSchema>;
export type ContainerPort = Infer<typeof ContainerPortSchema>;
export type Resources = Infer<typeof ResourcesSchema>;
export type AmbientSelector = MeshgateConfig['ambient']['enablementSelectors'][number];

export type RedirectMode = (typeof REDIRECT_MODES)[number];
export type OnUnverifiedNode = (typeof ON_UNVERIFIED_NODE)[number];
export type NativeSidecarMode = (typeof NATIVE_SIDECAR_MODES)[number];
export type AppPrivileges = (typeof APP_PRIVILEGES)[number];
export type EnforcementLevel = (typeof ENFORCEMENT_LEVELS)[number];
