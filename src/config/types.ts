/**
 * meshgate's one typed configuration. Parsed and validated once at the edge (config/load.ts); everything else
 * receives a frozen `MeshgateConfig`. Defaults live in config/defaults.ts and are pinned by a test.
 */

export type RedirectMode = 'auto' | 'required' | 'off';
export type OnUnverifiedNode = 'reject' | 'validate';
export type NativeSidecarMode = 'auto' | 'on' | 'off';

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: Record<string, unknown>;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
}

export interface Resources {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
}

export interface ProxyTemplate {
  /** Container name; also how meshgate recognises its own proxy in a pod. */
  name: string;
  image: string;
  args: string[];
  env: EnvVar[];
  ports: ContainerPort[];
  resources: Resources;
  /** The proxy's fixed UID: redirect rules exempt it, so its own traffic is not looped back to itself. */
  uid: number;
  /** Where redirected outbound TCP lands (istio: 15001). */
  outboundPort: number;
  /** Where redirected inbound TCP lands (istio: 15006). */
  inboundPort: number;
  volumeMounts: Array<{ name: string; mountPath: string; readOnly?: boolean }>;
}

export interface InitTemplate {
  /** The privileged iptables init container's name. */
  name: string;
  image: string;
  /** Arguments before the per-pod ones (ports, exclusions) that meshgate appends. */
  args: string[];
}

export interface ValidatorTemplate {
  name: string;
  image: string;
  /** How the image runs `meshgate validate-redirect`: the distroless image has no shell and no meshgate on PATH. */
  command: string[];
  /** Runs as this UID: non-root and different from the proxy UID, or its probe would be exempt from redirect. */
  uid: number;
  /** Address the probe connects to; never reached when redirection works (see docs/validate-redirect.md). */
  probeAddress: string;
  timeoutSeconds: number;
}

export interface MeshgateConfig {
  /** meshgate's own namespace: never injected, so meshgate can never block its own pods. */
  meshNamespace: string;
  /** Namespaces never injected besides meshNamespace. */
  systemNamespaces: string[];
  injection: {
    /** false = enforce-only: leave injection to Istio/Linkerd and only apply the redirect decision. */
    enabled: boolean;
    nativeSidecar: NativeSidecarMode;
    /**
     * Namespaces whose pods may opt in with the pod label `meshgate.io/inject: "true"` although the namespace is
     * not labelled. Keys/values that must all match the namespace's labels; null disables pod opt-in.
     */
    podOptInNamespaceLabels: Record<string, string> | null;
    /** Init containers of other meshes that meshgate recognises (and replaces in CNI mode). */
    recognisedInitContainers: string[];
    /** Proxy containers of other meshes: a pod carrying one is not injected again. */
    recognisedProxyContainers: string[];
    /** Other meshes' CNI-mode validation init containers: proof of redirect as good as meshgate's validator. */
    recognisedValidatorContainers: string[];
  };
  redirect: {
    mode: RedirectMode;
    onUnverifiedNode: OnUnverifiedNode;
  };
  proxy: ProxyTemplate;
  init: InitTemplate;
  validator: ValidatorTemplate;
  volumes: Array<Record<string, unknown> & { name: string }>;
}
