/**
 * Reasons are data: every CNI verdict has a stable code, one sentence saying what it means and one saying what
 * to do. The code is the Node condition's `reason` (it matches Kubernetes' reason regex
 * `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`), a metric label and a log field; never rename one.
 */

export const REASONS = {
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
} as const;

export type ReasonCode = keyof typeof REASONS;

/** What an operator can do about each reason: printed by `meshgate check-node`. */
export const ADVICE: Record<ReasonCode, string> = {
  verified: 'Nothing: pods scheduled here get redirection from the CNI chain.',
  no_config:
    'Wait for the primary CNI (Calico, Cilium, aws-node, …) to write its configuration, or check --cni-conf-dir.',
  unparsable_first_file:
    'Fix or remove the broken file: containerd loads the first file(s) in name order and gives up on an error.',
  unreadable:
    'Check the permissions and type of the configuration directory and files (and the agent’s hostPath mount).',
  no_valid_config: 'Install the missing plugin binaries or fix the broken files listed above; CRI-O skips them.',
  mesh_plugin_missing:
    'Let the mesh CNI installer add its plugin to the file listed, ' +
    'or remove the file that sorts before the one it edited.',
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
};

export function isReasonCode(value: unknown): value is ReasonCode {
  return typeof value === 'string' && Object.hasOwn(REASONS, value);
}
