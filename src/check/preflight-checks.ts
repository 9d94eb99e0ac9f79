/**
 * The checks of `meshgate check --pre`, run before installing (src/check/preflight.ts): their codes, what each
 * verifies and the fix when it fails, in the form of the catalogue of report.ts, which includes them in section
 * `preflight`. Placeholders as there ({ns}).
 */
export const PREFLIGHT_CHECKS = {
  kubernetes_version: {
    section: 'preflight',
    verifies: 'the apiserver runs Kubernetes 1.32 or later (the chart refuses older ones: docs/install.md)',
    hint: 'upgrade the control plane to 1.32 or later before installing meshgate',
  },
  cluster_features: {
    section: 'preflight',
    verifies: 'ValidatingAdmissionPolicy is served, webhook matchConditions are GA, kubelets run native sidecars',
    hint:
      'ValidatingAdmissionPolicy (GA in 1.30) and matchConditions (GA in 1.30) come with Kubernetes 1.32; kubelets ' +
      'older than 1.29 run no native sidecars (mesh proxies fall back to regular containers there)',
  },
  mesh_found: {
    section: 'preflight',
    verifies: "the configured mesh's control plane is installed: its version and revisions",
    hint:
      'install the mesh first (Istio: istiod and its istio-sidecar-injector ConfigMaps; Linkerd: linkerd-config), ' +
      'or pass --mesh for the one you run',
  },
  node_runtimes: {
    section: 'preflight',
    verifies: 'every node reports a container runtime whose libcni line meshgate knows (status.nodeInfo)',
    hint:
      'meshgate judges a node with an unknown runtime release by every libcni line, which must agree: check those ' +
      'nodes after installing (meshgate check)',
  },
  namespaces_guarded: {
    section: 'preflight',
    verifies: "which namespaces the chart's webhook entries would guard, and at which enforcement level",
    hint: 'opt a namespace in: kubectl label namespace NAMESPACE meshgate.io/inject=enabled',
  },
  pods_would_refuse: {
    section: 'preflight',
    verifies: 'no existing pod of a guarded namespace would be refused when recreated',
    hint:
      'install at level audit (the default for a new install): these pods keep running and each recreated one is ' +
      'recorded, not refused; fix them as their lines say before promoting their namespace to enforce',
  },
  pods_would_adjust: {
    section: 'preflight',
    verifies: 'which existing pods meshgate would adjust when recreated (redirect mode, pinned to verified nodes)',
    hint: 'nothing to do: this is what meshgate would change',
  },
} as const;
