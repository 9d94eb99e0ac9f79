// The real-node harness (docs/real-nodes.md). Everything here runs inside the run's own network namespace: an
// entry script calls reexecIsolated() when !isInside(), then startRealCluster() in the re-executed child.
export { startRealCluster, type RealCluster, type RealClusterOptions } from './cluster.ts';
export { startRealNode, nodeIp, type RealNode, type RealNodeSpec } from './node.ts';
export {
  bridgePlugin,
  portmapPlugin,
  istioCniPlugin,
  standardChain,
  writeConflist,
  CONFLIST_NAME,
  type PluginConf,
  type CniNodeLayout,
} from './cni.ts';
export { buildImage, type BuiltImage, type ImageSpec, type ImageConfig } from './image.ts';
export {
  pauseImage,
  proxyImage,
  MESHGATE_REF,
  PROXY_REF,
  PROXYV2_HUB,
  PROXYV2_TAG,
  PROXY_UID,
  IMAGE_PREFIX,
} from './images.ts';
export { redirectionOf, PROBE_HOST, PROBE_PORT, OUTBOUND_PORT, type Redirection } from './judge.ts';
export { istioShapedPod, plainPod, appContainer, istioProxyContainer, ISTIO_STATUS_CNI } from './pods.ts';
export { startNodeAgent, VERIFIED_LABEL, type NodeAgentOptions, type RunningNodeAgent } from './agent.ts';
export { runCases, printResults, type Case, type CaseResult, type Expectation } from './runner.ts';
export { isInside, reexecIsolated, assertIsolated } from './isolation.ts';
export { Timings } from './timings.ts';
export { startMeshStack, meshgateConfig, OPT_IN_LABELS, type MeshStack, type AgentVariant } from './mesh.ts';
export { startWebhook, WEBHOOK_CONFIG_NAME, MESH_NAMESPACE, type Webhook, type FailurePolicy } from './webhook.ts';
export { PodMonitor, appRunning, redirected, APP_CONTAINER, type SeenPod } from './monitor.ts';
export { chartDefaults, type ChartDefaults } from './chart.ts';
export { startTierRegistry, pullOnEveryNode, type TierRegistry } from './registry.ts';
