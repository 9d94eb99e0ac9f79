/**
 * Value checks beyond the schema's kinds and enums (config/schema.ts, checked by config/load.ts): ranges, names, and
 * what must hold between keys. One sentence per problem.
 */
import { isIP } from 'node:net';
import type { MeshgateConfig } from './types.ts';
import { parseHostPort, parseQuantity } from '../util/values.ts';
import { imageRepository } from '../mesh/images.ts';
import { ambientProblems } from './ambient.ts';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/**
 * Images that exist only as examples or as the names of images meshgate never built (the first version's
 * defaults): a pod created with one would never start, so a config naming one is refused at startup.
 */
const PLACEHOLDER_REPOSITORIES = ['ghcr.io/meshgate/proxy', 'ghcr.io/meshgate/proxy-init'];
const PLACEHOLDER_HOSTS = /^(registry\.example|example\.(com|org|net)|.*\.example)(\/|$)/;

export function placeholderImage(image: string): string | undefined {
  if (image.trim() === '') return 'is not set';
  if (/[<>{}]|changeme|replace[-_]?me/i.test(image)) return `"${image}" is a placeholder`;
  const repo = imageRepository(image);
  if (PLACEHOLDER_REPOSITORIES.includes(repo)) return `"${image}" names an image that was never published`;
  if (PLACEHOLDER_HOSTS.test(repo)) return `"${image}" is on an example registry`;
  return undefined;
}

function port(problems: string[], path: string, value: number): void {
  if (!Number.isInteger(value) || value < 1 || value > 65535)
    problems.push(`${path}: ${value} is not a port (1-65535)`);
}

function id(problems: string[], path: string, value: number | undefined): void {
  // 0 is root: the proxy and validator must never run as root.
  if (value !== undefined && (!Number.isInteger(value) || value < 1 || value > 2147483647))
    problems.push(`${path}: ${value} is not a non-root ID`);
}

function name(problems: string[], path: string, value: string): void {
  if (!DNS_LABEL.test(value) || value.length > 63) problems.push(`${path}: "${value}" is not a valid container name`);
}

function image(problems: string[], path: string, value: string | undefined): void {
  const why = placeholderImage(value ?? '');
  if (why) problems.push(`${path}: ${why}; set the image this mesh really runs`);
}

/** A loopback probe is redirected only for the proxy's identity; any other probe only for everyone else. */
function probeProblems(c: MeshgateConfig, p: string[]): void {
  const probe = parseHostPort(c.validator.probeAddress);
  if (!probe.ok) {
    p.push(`validator.probeAddress: ${probe.error}`);
    return;
  }
  const { host, port: probePort } = probe.value;
  if (probePort === c.proxy.outboundPort || probePort === c.proxy.inboundPort) {
    p.push(
      `validator.probeAddress: port ${probePort} is a port the validator listens on, ` +
        'so the probe could reach it without any redirect',
    );
  }
  const loopback = isIP(host) === 4 ? host.startsWith('127.') : host === '::6';
  if (host === '127.0.0.1' || host === '::1')
    p.push(`validator.probeAddress: ${host} is never redirected by the meshes' rules (use 127.0.0.6, as Istio does)`);
  if (loopback && (c.validator.uid !== c.proxy.uid || (c.proxy.gid !== undefined && c.validator.gid !== c.proxy.gid))) {
    p.push(
      `validator.uid/gid: a loopback probe (${host}) is redirected only for the proxy's UID/GID ` +
        `(${c.proxy.uid}/${c.proxy.gid ?? '-'}), so the validator must run as them`,
    );
  }
  if (!loopback && c.validator.uid === c.proxy.uid) {
    p.push(
      `validator.uid: the probe ${host} leaves the loopback, ` +
        `and traffic of the proxy UID ${c.proxy.uid} is exempt from redirection: the validator must run as another UID`,
    );
  }
}

/** A Secret's name is a DNS subdomain. Eight are plenty for one image; each is copied into every injected pod. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const MAX_PULL_SECRETS = 8;

function pullSecrets(p: string[], names: readonly string[]): void {
  names.forEach((n, i) => {
    if (!DNS_SUBDOMAIN.test(n) || n.length > 253)
      p.push(`validator.imagePullSecrets[${i}]: "${n}" is not a Secret name`);
    else if (names.indexOf(n) !== i) p.push(`validator.imagePullSecrets[${i}]: "${n}" is listed twice`);
  });
  if (names.length > MAX_PULL_SECRETS)
    p.push(`validator.imagePullSecrets: ${names.length} names, at most ${MAX_PULL_SECRETS}`);
}

/** `namespace/name`, each a DNS-1123 label as Multus requires of network names (parsePodNetworkObjectName). */
const MULTUS_NETWORK = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function checkSemantics(c: MeshgateConfig): string[] {
  const p: string[] = [];
  c.apps.baselineNamespaces.forEach((ns, i) => {
    if (!DNS_LABEL.test(ns)) p.push(`apps.baselineNamespaces[${i}]: "${ns}" is not a namespace name`);
  });
  if (!DNS_LABEL.test(c.meshNamespace)) p.push(`meshNamespace: "${c.meshNamespace}" is not a namespace name`);
  name(p, 'proxy.name', c.proxy.name);
  name(p, 'init.name', c.init.name);
  name(p, 'validator.name', c.validator.name);
  if (new Set([c.proxy.name, c.init.name, c.validator.name]).size !== 3)
    p.push('proxy.name, init.name and validator.name must differ');
  port(p, 'proxy.outboundPort', c.proxy.outboundPort);
  port(p, 'proxy.inboundPort', c.proxy.inboundPort);
  id(p, 'proxy.uid', c.proxy.uid);
  id(p, 'proxy.gid', c.proxy.gid);
  id(p, 'validator.uid', c.validator.uid);
  id(p, 'validator.gid', c.validator.gid);
  if (!Number.isInteger(c.cni.maxVerdictAgeSeconds) || c.cni.maxVerdictAgeSeconds < 60) {
    p.push(
      `cni.maxVerdictAgeSeconds: ${c.cni.maxVerdictAgeSeconds} is not a whole number of seconds >= 60 ` +
        '(the agent heartbeats once per resync)',
    );
  }
  const network = c.cni.multusNetwork;
  if (network !== null && !MULTUS_NETWORK.test(network)) {
    p.push(
      `cni.multusNetwork: ${JSON.stringify(network)} is not namespace/name of a NetworkAttachmentDefinition ` +
        "(lower-case DNS labels; the namespace is required: a name alone resolves in each pod's own namespace, " +
        'where its admins could define it to run anything)',
    );
  }
  if (c.cni.pluginType.trim() === '')
    p.push(`cni.pluginType: must name the mesh CNI plugin the node agent checks for (e.g. istio-cni)`);
  image(p, 'validator.image', c.validator.image);
  if (c.validator.command.length === 0) p.push('validator.command: must name the program to run');
  probeProblems(c, p);
  if (!(c.validator.timeoutSeconds > 0 && c.validator.timeoutSeconds <= 300)) {
    p.push(`validator.timeoutSeconds: ${c.validator.timeoutSeconds} is not in (0, 300]`);
  }
  pullSecrets(p, c.validator.imagePullSecrets);
  p.push(...ambientProblems(c));
  if (
    !Number.isInteger(c.exclusions.outboundCidrCoverage) ||
    c.exclusions.outboundCidrCoverage < 1 ||
    c.exclusions.outboundCidrCoverage > 32
  ) {
    p.push(`exclusions.outboundCidrCoverage: ${c.exclusions.outboundCidrCoverage} is not a whole number in 1-32`);
  }
  for (const k of ['maxOutboundPorts', 'maxInboundPorts'] as const) {
    const v = c.exclusions[k];
    if (!Number.isInteger(v) || v < 0 || v > 65535) p.push(`exclusions.${k}: ${v} is not a number of ports (0-65535)`);
  }
  if (c.mesh === 'custom') {
    image(p, 'proxy.image', c.proxy.image);
    image(p, 'init.image', c.init.image);
    if (!c.init.args?.length && !c.init.command?.length)
      p.push('init.args: must tell the init container what to redirect');
    for (const section of ['requests', 'limits'] as const) {
      for (const [res, q] of Object.entries(c.proxy.resources?.[section] ?? {})) {
        const parsed = parseQuantity(String(q));
        if (!parsed.ok) p.push(`proxy.resources.${section}.${res}: ${parsed.error}`);
      }
    }
    (c.volumes ?? []).forEach((v, i) => {
      if (typeof v?.name !== 'string' || !DNS_LABEL.test(v.name))
        p.push(`volumes[${i}].name: missing or not a valid volume name`);
    });
  } else {
    for (const role of ['proxy', 'init', 'validator'] as const) {
      if (!c.recognisedImages?.[role].length)
        p.push(`recognisedImages.${role}: must list the repositories of the mesh's ${role} image`);
    }
    (c.learnImages?.namespaces ?? []).forEach((ns, i) => {
      if (!DNS_LABEL.test(ns) || ns.length > 63)
        p.push(`learnImages.namespaces[${i}]: "${ns}" is not a namespace name`);
    });
  }
  return p;
}
