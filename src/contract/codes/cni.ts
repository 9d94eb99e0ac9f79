/**
 * The node agent's verdict on its node's CNI chain (src/cni/verify.ts), one code each with what it means and what an
 * operator does about it (`meshgate check-node` prints both; src/cni/reasons.ts adds the Multus variants). The code is
 * the MeshCNIVerified condition's `reason` on the Node (each matches Kubernetes' reason regex
 * `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`: test/agent/node-state.test.ts), the node agent's
 * meshgate_node_agent_verdict{reason} and the webhook's meshgate_nodes{reason}, a log field; never rename one.
 */
import type { Codes, ReasonEntry, Surface } from './entry.ts';

/** A chain verdict: on the Node, in both processes' metrics, in refusals that name the node, in `check-node` and `check`. */
const VERDICT = [
  'node-condition',
  'admission-message',
  'metric-label',
  'check-report',
] as const satisfies readonly Surface[];

export const CNI_CODES = {
  verified: {
    meaning:
      'The runtime loads a network whose chain runs the mesh plugin after the interface plugin, ' +
      'and every plugin binary is installed.',
    fix: 'Nothing: pods scheduled here get redirection from the CNI chain.',
    emitters: ['node-agent', 'webhook'],
    shows: VERDICT,
  },
  no_config: {
    meaning:
      'The CNI configuration directory holds no .conf, .conflist or .json file, so the runtime has no network to load.',
    fix: 'Wait for the primary CNI (Calico, Cilium, aws-node, …) to write its configuration, or check --cni-conf-dir.',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  unparsable_first_file: {
    meaning:
      'containerd must load a configuration file that does not parse as a CNI network, so it has no usable network.',
    fix: 'Fix or remove the broken file: containerd loads the first file(s) in name order and gives up on an error.',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  unreadable: {
    meaning: 'The CNI configuration the runtime would load could not be read.',
    fix: 'Check the permissions and type of the configuration directory and files (and the agent’s hostPath mount).',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  no_valid_config: {
    meaning: 'CRI-O finds no configuration file that parses and whose plugin binaries are all installed.',
    fix: 'Install the missing plugin binaries or fix the broken files listed above; CRI-O skips them.',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  mesh_plugin_missing: {
    meaning:
      'The network the runtime loads does not contain the mesh plugin, so new pods would start without redirection.',
    fix:
      'Let the mesh CNI installer add its plugin to the file listed (the one the runtime loads); if it edited another ' +
      'file, point it at this one. Do not delete the file listed without knowing whose it is: it may hold the ' +
      'node’s only pod network.',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  mesh_plugin_not_chained: {
    meaning: 'The mesh plugin is not chained after the interface plugin, so it cannot redirect the pod’s traffic.',
    fix: 'Move the mesh plugin after the interface plugin in the file listed (the mesh installer appends it at the end).',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  binary_missing: {
    meaning: 'A plugin of the chain the runtime loads has no binary in the CNI bin directories.',
    fix: 'Install the missing plugin binary into a CNI bin directory (the mesh CNI DaemonSet copies it there).',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  binary_not_executable: {
    meaning: 'A plugin binary of the chain the runtime loads is not executable.',
    fix: 'Make the plugin binary executable (chmod 0755) or let its installer copy it again.',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  unrendered_placeholder: {
    meaning:
      'The chain the runtime loads still contains an unrendered template placeholder, ' +
      'so its plugins cannot run as configured.',
    fix: 'Let the installer render the template (replace the placeholder) before it writes the file.',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  invalid_network_name: {
    meaning:
      'The network the runtime loads has a name libcni refuses when it adds a pod ' +
      '(empty, or not matching ^[a-zA-Z0-9][a-zA-Z0-9_.\\-]*$), so no plugin runs and no pod can start here.',
    fix:
      'Give the network in the file listed a name of letters, digits, "_", "." and "-" ' +
      'that starts with a letter or digit.',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  plugin_config_mismatch: {
    meaning:
      'The mesh plugin in the chain is configured for other proxy ports or another proxy UID ' +
      'than the mesh meshgate guards, so it would not redirect pods to their proxy.',
    fix:
      'Install the mesh CNI plugin with the ports and proxy UID of the mesh meshgate guards (its linkerd block), ' +
      "or fix meshgate's config (proxy.inboundPort, proxy.outboundPort, proxy.uid).",
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  libcni_lines_disagree: {
    meaning:
      'The libcni version of the node’s container runtime is unknown, and the libcni release lines read this ' +
      'configuration differently, so which chain the runtime loads cannot be told.',
    fix:
      'Make the configuration mean the same to every libcni line (the lines listed differ on it), ' +
      'or name the runtime: --runtime containerd://VERSION or cri-o://VERSION, or --libcni 1.1|1.2|1.3.',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  runtime_mismatch: {
    meaning:
      'The node reports another container runtime than the one meshgate was told to emulate, ' +
      'so its file selection would be judged by the wrong rules.',
    fix: "Set the node agent's --runtime (chart value nodeAgent.runtime) to the runtime the node reports.",
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  renamed_by_cilium: {
    meaning:
      'Cilium (cni.exclusive=true) renamed the other CNI configurations to *.cilium_bak or rewrote its own, ' +
      'so the network the runtime loads does not contain the mesh plugin.',
    fix:
      'Install Cilium with cni.exclusive=false (Helm value; cilium-config key cni-exclusive) so the mesh installer’s ' +
      'file stays, or chain the mesh through Cilium (cni.chainingMode/cni.chainingTarget, docs/platforms/cilium.md); ' +
      'then restart the mesh CNI DaemonSet so it writes its plugin again.',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  multus_delegate_unresolved: {
    meaning:
      'The runtime loads Multus, and meshgate cannot tell which network Multus runs for the pod from the files it reads.',
    fix:
      'Keep Multus’ file; give the node agent the dirs Multus reads (--multus-dir, chart nodeAgent.multus.dirs) and how ' +
      'Multus’ paths map to the host (--multus-path, nodeAgent.multus.paths), or fix the Multus configuration named.',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  multus_network_missing: {
    meaning:
      'The mesh plugin runs as a Multus additional network here, and Multus has no network of that name ' +
      'that runs the mesh plugin.',
    fix:
      'Let the mesh CNI installer write its standalone configuration into Multus’ confDir under the network name ' +
      'listed (Istio on OpenShift: cni.chained=false, cni.cniConfDir=/etc/cni/multus/net.d), or unset cni.multusNetwork.',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  ambient_disabled: {
    meaning:
      'The istio-cni plugin in the chain does not have ambient_enabled: true, so it would not hand Istio ambient ' +
      'pods to ztunnel.',
    fix:
      'Install istio-cni with ambient enabled (Helm ambient.enabled=true, or the ambient profile), or turn off ' +
      "meshgate's ambient checks (config ambient.enabled).",
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  ambient_agent_not_ready: {
    meaning:
      'istio-cni’s node agent is not ready on this node (its /readyz), so the istio-cni plugin cannot set up ' +
      'ambient pods here.',
    fix:
      'Check the istio-cni-node pod on this node (kubectl -n istio-system logs ds/istio-cni-node); its readiness is ' +
      'served on the node at :8000/readyz (the node agent’s --ambient-readyz).',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
  ztunnel_not_ready: {
    meaning:
      'No ztunnel is connected to istio-cni’s node agent on this node (its ZDS socket has no connection), so ambient ' +
      'pods would get no proxy.',
    fix:
      'Check the ztunnel pod on this node (kubectl -n istio-system logs ds/ztunnel): it must connect to the ZDS socket ' +
      '(default /var/run/ztunnel/ztunnel.sock).',
    emitters: ['node-agent'],
    shows: VERDICT,
  },
} as const satisfies Codes & Readonly<Record<string, ReasonEntry & { readonly fix: string }>>;

/** A chain verdict's code: the MeshCNIVerified condition's reason. */
export type CniReasonCode = keyof typeof CNI_CODES;
