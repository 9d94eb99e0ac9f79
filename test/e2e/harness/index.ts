// The e2e harness: a real Kubernetes control plane (built by scripts/build-controlplane.sh) with kwok fake nodes.
//   const cp = await startControlPlane({ nodes: 2 });
//   try { ...cp.kc / cp.kubectl([...]) / waitForPodsRunning(cp.kc, ns, 'app=x', 2)... } finally { await cp.stop(); }
export { startControlPlane, type ControlPlane, type ComponentName, type StartOptions } from './controlplane.ts';
export { findControlPlaneBinaries, controlPlaneCacheKey, type ControlPlaneManifest } from './binaries.ts';
export { waitFor, FatalWaitError, describeError, httpStatus, type WaitOptions } from './wait.ts';
export { waitForPodsRunning, describePods, kwokNodeManifest, type NodeOptions } from './nodes.ts';
export { CertificateAuthority, type CertificateRequest, type KeyPair } from './pki.ts';
export { freePort, type RunOptions, type RunResult } from './net.ts';
export {
  startIstioInjector,
  renderIstioDiscovery,
  findIstioBinaries,
  istioCacheKey,
  type IstioInjector,
  type IstioInjectorOptions,
  type RenderOptions,
  type RenderedIstiod,
  type IstioManifest,
} from './istio.ts';
