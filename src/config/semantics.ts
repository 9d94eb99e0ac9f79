/** Value checks beyond types: enums, ranges, names. Returns one sentence per problem, each naming its key path. */
import type { MeshgateConfig } from './types.ts';
import { parseHostPort, parseQuantity } from '../inject/values.ts';

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function oneOf(problems: string[], path: string, value: string, allowed: readonly string[]): void {
  if (!allowed.includes(value)) problems.push(`${path}: "${value}" is not one of ${allowed.join(', ')}`);
}

function port(problems: string[], path: string, value: number): void {
  if (!Number.isInteger(value) || value < 1 || value > 65535) problems.push(`${path}: ${value} is not a port (1-65535)`);
}

function uid(problems: string[], path: string, value: number): void {
  // 0 is root: the proxy and validator must never run as root.
  if (!Number.isInteger(value) || value < 1 || value > 2147483647) problems.push(`${path}: ${value} is not a non-root UID`);
}

function name(problems: string[], path: string, value: string): void {
  if (!DNS_LABEL.test(value) || value.length > 63) problems.push(`${path}: "${value}" is not a valid container name`);
}

export function checkSemantics(c: MeshgateConfig): string[] {
  const p: string[] = [];
  oneOf(p, 'redirect.mode', c.redirect.mode, ['auto', 'required', 'off']);
  oneOf(p, 'redirect.onUnverifiedNode', c.redirect.onUnverifiedNode, ['reject', 'validate']);
  oneOf(p, 'injection.nativeSidecar', c.injection.nativeSidecar, ['auto', 'on', 'off']);
  if (!DNS_LABEL.test(c.meshNamespace)) p.push(`meshNamespace: "${c.meshNamespace}" is not a namespace name`);
  name(p, 'proxy.name', c.proxy.name);
  name(p, 'init.name', c.init.name);
  name(p, 'validator.name', c.validator.name);
  if (new Set([c.proxy.name, c.init.name, c.validator.name]).size !== 3) {
    p.push('proxy.name, init.name and validator.name must differ');
  }
  port(p, 'proxy.outboundPort', c.proxy.outboundPort);
  port(p, 'proxy.inboundPort', c.proxy.inboundPort);
  uid(p, 'proxy.uid', c.proxy.uid);
  uid(p, 'validator.uid', c.validator.uid);
  if (c.validator.uid === c.proxy.uid) {
    p.push(`validator.uid: must differ from proxy.uid (${c.proxy.uid}), whose traffic the redirect rules exempt`);
  }
  for (const [k, v] of Object.entries({ 'proxy.image': c.proxy.image, 'init.image': c.init.image, 'validator.image': c.validator.image })) {
    if (v.trim() === '') p.push(`${k}: must not be empty`);
  }
  if (c.validator.command.length === 0) p.push('validator.command: must name the program to run');
  const probe = parseHostPort(c.validator.probeAddress);
  if (!probe.ok) p.push(`validator.probeAddress: ${probe.error}`);
  if (!(c.validator.timeoutSeconds > 0 && c.validator.timeoutSeconds <= 300)) {
    p.push(`validator.timeoutSeconds: ${c.validator.timeoutSeconds} is not in (0, 300]`);
  }
  for (const section of ['requests', 'limits'] as const) {
    for (const [res, q] of Object.entries(c.proxy.resources[section] ?? {})) {
      const parsed = parseQuantity(String(q));
      if (!parsed.ok) p.push(`proxy.resources.${section}.${res}: ${parsed.error}`);
    }
  }
  c.volumes.forEach((v, i) => {
    if (typeof v?.name !== 'string' || !DNS_LABEL.test(v.name)) p.push(`volumes[${i}].name: missing or not a valid volume name`);
  });
  return p;
}
