/**
 * What must hold between keys, and what no schema keyword says (placeholder images, host:port, quantities, the
 * custom profile's volumes): checked after the declaration's kinds, enums and value constraints (config/load.ts,
 * config/constraints.ts). One sentence per problem.
 */
import { isIP } from 'node:net';
import type { MeshgateConfig } from './types.ts';
import { parseHostPort, parseQuantity } from '../util/values.ts';
import { imageRepository } from '../mesh/images.ts';
import { ambientProblems } from './ambient.ts';
import { DNS_LABEL } from '../util/names.ts';

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

/** A namespace is held to one level: listed as unable to comply and as needing hardening at once says neither. */
function appsProblems(c: MeshgateConfig, p: string[]): void {
  const both = c.apps.restrictedNamespaces.filter((ns) => c.apps.baselineNamespaces.includes(ns));
  if (both.length)
    p.push(
      `apps.restrictedNamespaces and apps.baselineNamespaces both list ${both.join(', ')}: a namespace is held to one level`,
    );
}

export function checkSemantics(c: MeshgateConfig): string[] {
  const p: string[] = [];
  appsProblems(c, p);
  if (new Set([c.proxy.name, c.init.name, c.validator.name]).size !== 3)
    p.push('proxy.name, init.name and validator.name must differ');
  image(p, 'validator.image', c.validator.image);
  probeProblems(c, p);
  p.push(...ambientProblems(c));
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
  }
  return p;
}
