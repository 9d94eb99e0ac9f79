/**
 * Reasons are data: every CNI verdict has a stable code, one sentence saying what it means and one saying what
 * to do. The code is the Node condition's `reason` (it matches Kubernetes' reason regex
 * `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`), a metric label and a log field; never rename one.
 */

export const CNI_REASONS = {
  verified:
    'The runtime loads a network whose chain runs the mesh plugin after the interface plugin, ' +
    'and every plugin binary is installed.',
  no_config:
    'The CNI configuration directory holds no .conf, .conflist or .json file, so the runtime has no network to load.',
  unparsable_first_file:
    'containerd must load a configuration file that does not parse as a CNI network, so it has no usable network.',
  unreadable: 'The CNI configuration the runtime would load could not be read.',
  no_valid_config: 'CRI-O finds no configuration file that parses and whose plugin binaries are all installed.',
  mesh_plugin_missing:
    'The network the runtime loads does not contain the mesh plugin, so new pods would start without redirection.',
  mesh_plugin_not_chained:
    'The mesh plugin is not chained after the interface plugin, so it cannot redirect the pod’s traffic.',
  binary_missing: 'A plugin of the chain the runtime loads has no binary in the CNI bin directories.',
  binary_not_executable: 'A plugin binary of the chain the runtime loads is not executable.',
  unrendered_placeholder:
    'The chain the runtime loads still contains an unrendered template placeholder, ' +
    'so its plugins cannot run as configured.',
  invalid_network_name:
    'The network the runtime loads has a name libcni refuses when it adds a pod ' +
    '(empty, or not matching ^[a-zA-Z0-9][a-zA-Z0-9_.\\-]*$), so no plugin runs and no pod can start here.',
  plugin_config_mismatch:
    'The mesh plugin in the chain is configured for other proxy ports or another proxy UID ' +
    'than the mesh meshgate guards, so it would not redirect pods to their proxy.',
  libcni_lines_disagree:
    'The libcni version of the node’s container runtime is unknown, and the libcni release lines read this ' +
    'configuration differently, so which chain the runtime loads cannot be told.',
  runtime_mismatch:
    'The node reports another container runtime than the one meshgate was told to emulate, ' +
    'so its file selection would be judged by the wrong rules.',
  renamed_by_cilium:
    'Cilium (cni.exclusive=true) renamed the other CNI configurations to *.cilium_bak or rewrote its own, ' +
    'so the network the runtime loads does not contain the mesh plugin.',
  multus_delegate_unresolved:
    'The runtime loads Multus, and meshgate cannot tell which network Multus runs for the pod from the files it reads.',
  multus_network_missing:
    'The mesh plugin runs as a Multus additional network here, and Multus has no network of that name ' +
    'that runs the mesh plugin.',
  ambient_disabled:
    'The istio-cni plugin in the chain does not have ambient_enabled: true, so it would not hand Istio ambient ' +
    'pods to ztunnel.',
  ambient_agent_not_ready:
    'istio-cni’s node agent is not ready on this node (its /readyz), so the istio-cni plugin cannot set up ' +
    'ambient pods here.',
  ztunnel_not_ready:
    'No ztunnel is connected to istio-cni’s node agent on this node (its ZDS socket has no connection), so ambient ' +
    'pods would get no proxy.',
} as const;

export type CniReasonCode = keyof typeof CNI_REASONS;

/** What an operator can do about each reason: printed by `meshgate check-node`. */
export const CNI_ADVICE: Record<CniReasonCode, string> = {
  verified: 'Nothing: pods scheduled here get redirection from the CNI chain.',
  no_config:
    'Wait for the primary CNI (Calico, Cilium, aws-node, …) to write its configuration, or check --cni-conf-dir.',
  unparsable_first_file:
    'Fix or remove the broken file: containerd loads the first file(s) in name order and gives up on an error.',
  unreadable:
    'Check the permissions and type of the configuration directory and files (and the agent’s hostPath mount).',
  no_valid_config: 'Install the missing plugin binaries or fix the broken files listed above; CRI-O skips them.',
  mesh_plugin_missing:
    'Let the mesh CNI installer add its plugin to the file listed (the one the runtime loads); if it edited another ' +
    'file, point it at this one. Do not delete the file listed without knowing whose it is: it may hold the ' +
    'node’s only pod network.',
  mesh_plugin_not_chained:
    'Move the mesh plugin after the interface plugin in the file listed (the mesh installer appends it at the end).',
  binary_missing:
    'Install the missing plugin binary into a CNI bin directory (the mesh CNI DaemonSet copies it there).',
  binary_not_executable: 'Make the plugin binary executable (chmod 0755) or let its installer copy it again.',
  unrendered_placeholder: 'Let the installer render the template (replace the placeholder) before it writes the file.',
  invalid_network_name:
    'Give the network in the file listed a name of letters, digits, "_", "." and "-" ' +
    'that starts with a letter or digit.',
  plugin_config_mismatch:
    'Install the mesh CNI plugin with the ports and proxy UID of the mesh meshgate guards (its linkerd block), ' +
    "or fix meshgate's config (proxy.inboundPort, proxy.outboundPort, proxy.uid).",
  libcni_lines_disagree:
    'Make the configuration mean the same to every libcni line (the lines listed differ on it), ' +
    'or name the runtime: --runtime containerd://VERSION or cri-o://VERSION, or --libcni 1.1|1.2|1.3.',
  runtime_mismatch: "Set the node agent's --runtime (chart value nodeAgent.runtime) to the runtime the node reports.",
  renamed_by_cilium:
    'Install Cilium with cni.exclusive=false (Helm value; cilium-config key cni-exclusive) so the mesh installer’s ' +
    'file stays, or chain the mesh through Cilium (cni.chainingMode/cni.chainingTarget, docs/platforms/cilium.md); ' +
    'then restart the mesh CNI DaemonSet so it writes its plugin again.',
  multus_delegate_unresolved:
    'Keep Multus’ file; give the node agent the dirs Multus reads (--multus-dir, chart nodeAgent.multus.dirs) and how ' +
    'Multus’ paths map to the host (--multus-path, nodeAgent.multus.paths), or fix the Multus configuration named.',
  multus_network_missing:
    'Let the mesh CNI installer write its standalone configuration into Multus’ confDir under the network name ' +
    'listed (Istio on OpenShift: cni.chained=false, cni.cniConfDir=/etc/cni/multus/net.d), or unset cni.multusNetwork.',
  ambient_disabled:
    'Install istio-cni with ambient enabled (Helm ambient.enabled=true, or the ambient profile), or turn off ' +
    "meshgate's ambient checks (config ambient.enabled).",
  ambient_agent_not_ready:
    'Check the istio-cni-node pod on this node (kubectl -n istio-system logs ds/istio-cni-node); its readiness is ' +
    'served on the node at :8000/readyz (the node agent’s --ambient-readyz).',
  ztunnel_not_ready:
    'Check the ztunnel pod on this node (kubectl -n istio-system logs ds/ztunnel): it must connect to the ZDS socket ' +
    '(default /var/run/ztunnel/ztunnel.sock).',
};

/**
 * The advice for a verdict: the reason's, unless the runtime loads Multus. Then the file listed is Multus' own, and
 * deleting it would leave pods without their network: say where the mesh plugin has to go instead.
 */
export function cniAdviceFor(reason: CniReasonCode, multus?: { file?: string; network?: string }): string {
  if (!multus) return CNI_ADVICE[reason];
  const where = multus.file ?? 'its delegates[0], inline in the file listed,';
  if (reason === 'mesh_plugin_missing')
    return (
      `Keep Multus’ file: Multus runs ${where} as the pod’s network. Let the mesh CNI installer chain its plugin ` +
      'after Multus in the file the runtime loads (Istio: cni.cniConfFileName set to it) or into that network, or ' +
      'run the mesh plugin as a Multus additional network (cni.multusNetwork, docs/platforms/openshift.md).'
    );
  if (reason === 'mesh_plugin_not_chained')
    return `Keep Multus’ file; move the mesh plugin after the interface plugin in ${where}.`;
  return CNI_ADVICE[reason];
}

export function isCniReasonCode(value: unknown): value is CniReasonCode {
  return typeof value === 'string' && Object.hasOwn(CNI_REASONS, value);
}
