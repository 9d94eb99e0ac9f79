/**
 * Linkerd, as its proxy injector and its CNI plugin (linkerd2-proxy-init: proxy-init/cmd/root.go, cni-plugin)
 * shape and read pods: linkerd-proxy runs as 2102; linkerd-init runs `linkerd2-proxy-init` (in the proxy image, or
 * the older proxy-init image) with NET_ADMIN and NET_RAW; with the CNI plugin, linkerd-network-validator listens on
 * the outbound port (4140) and connects to an address that only redirection can bring back. Linkerd's rules exempt
 * the proxy UID and all loopback traffic, so its probe cannot stay inside the pod (docs/validate-redirect.md).
 * linkerd-cni acts when the pod has linkerd-proxy and no linkerd-init; it finds a native-sidecar proxy (an init
 * container) only from cni-plugin v1.5.0 (Linkerd edge-24.4.x) on — see `cni.redirectsNativeSidecars`.
 * Exemptions come from config.linkerd.io/skip-* annotations; config.linkerd.io/proxy-uid changes the exempt UID.
 */
import { isLinkerdConfigMap, linkerdConfigImages } from './learn.ts';
import type { Pod } from '../contract/pod.ts';
import { addedCapabilities } from '../pod/security.ts';
import { fromRepositories } from './images.ts';
import { readFlags, goBool, type PflagSpec } from './flags.ts';
import {
  addCidrs as addCidrList,
  addPortRanges,
  emptySettings,
  type MeshProfile,
  type RedirectSettings,
} from './types.ts';

const CONFIG = 'config.linkerd.io';

const INIT_FLAGS: PflagSpec = {
  long: {
    'incoming-proxy-port': 'string',
    'outgoing-proxy-port': 'string',
    'proxy-uid': 'string',
    'proxy-gid': 'string',
    'ports-to-redirect': 'list',
    'inbound-ports-to-ignore': 'list',
    'outbound-ports-to-ignore': 'list',
    'subnets-to-ignore': 'list',
    simulate: 'bool',
    netns: 'string',
    'use-wait-flag': 'bool',
    'timeout-close-wait-secs': 'string',
    'log-format': 'string',
    'log-level': 'string',
    'firewall-bin-path': 'string',
    'firewall-save-bin-path': 'string',
    'iptables-mode': 'string',
    ipv6: 'bool',
  },
  short: {
    p: 'incoming-proxy-port',
    o: 'outgoing-proxy-port',
    u: 'proxy-uid',
    r: 'ports-to-redirect',
    w: 'use-wait-flag',
  },
};

const VALIDATOR_FLAGS: PflagSpec = {
  long: {
    'connect-addr': 'string',
    'listen-addr': 'string',
    timeout: 'string',
    'log-format': 'string',
    'log-level': 'string',
  },
};

/** The binaries proxy-init may run: anything else (e.g. /bin/true) would install nothing. */
const FIREWALL_BINARIES = new Set([
  'iptables',
  'iptables-legacy',
  'iptables-nft',
  'ip6tables',
  'ip6tables-legacy',
  'ip6tables-nft',
]);
const FIREWALL_SAVE = new Set([...FIREWALL_BINARIES].map((b) => `${b}-save`));

function binaryName(path: string): string {
  return path.replace(/^\/(usr\/)?s?bin\//, '');
}

function optOut(pod: Pod): string | undefined {
  const v = pod.metadata?.annotations?.['linkerd.io/inject'];
  return v === 'disabled' ? 'annotation linkerd.io/inject=disabled' : undefined;
}

/** A list flag's or annotation's values (pflag splits each occurrence at commas) as the one list they make. */
const joined = (values: readonly string[] | undefined) => values?.join(',');

function addPorts(
  s: RedirectSettings,
  where: string,
  values: readonly string[] | undefined,
  into: 'outboundPorts' | 'inboundPorts',
): void {
  addPortRanges(s, where, joined(values), into);
}

function addCidrs(s: RedirectSettings, where: string, values: readonly string[] | undefined): void {
  addCidrList(s, where, joined(values));
}

function annotationSettings(a: Readonly<Record<string, string>>): RedirectSettings {
  const s = emptySettings();
  const split = (k: string) => (a[`${CONFIG}/${k}`] === undefined ? undefined : [a[`${CONFIG}/${k}`]]);
  addPorts(s, `annotation ${CONFIG}/skip-outbound-ports`, split('skip-outbound-ports'), 'outboundPorts');
  addPorts(s, `annotation ${CONFIG}/skip-inbound-ports`, split('skip-inbound-ports'), 'inboundPorts');
  addCidrs(s, `annotation ${CONFIG}/skip-subnets`, split('skip-subnets'));
  return s;
}

/**
 * A GID Linkerd's rules would exempt: recorded in the settings (the identity rules judge every other container
 * against it), or why it cannot be read. Integers as Go reads them: decimal, 0x, 0o, 0b and a leading-0 octal
 * (proxy-init parses its flags with base 0); a negative one means none.
 */
function exemptGid(s: RedirectSettings, where: string, raw: string | undefined): void {
  if (raw === undefined || raw.trim() === '') return;
  const v = raw.trim();
  const m = /^(-?)(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/.exec(v);
  if (!m) {
    s.invalid.push(`${where}: "${raw}" is not an integer`);
    return;
  }
  const body = m[2];
  const n = /^0[0-7]+$/.test(body) ? Number.parseInt(body.slice(1), 8) : Number(body.replace(/^0[oO]/, '0o'));
  if (m[1] === '-' || n === 0) return;
  if (!Number.isSafeInteger(n) || n > 2147483647) s.invalid.push(`${where}: ${v} is not a GID`);
  else s.exemptGids.push(n);
}

/** The UID/GID the pod's annotations make linkerd-cni exempt, when they differ from the proxy's. */
function identityOverride(a: Readonly<Record<string, string>> | undefined, uid: number): string | undefined {
  const v = a?.[`${CONFIG}/proxy-uid`];
  if (v !== undefined && v.trim() !== String(uid))
    return `annotation ${CONFIG}/proxy-uid=${v} makes the redirect exempt UID ${v} instead of the proxy's ${uid}`;
  return undefined;
}

export const linkerd: MeshProfile = {
  name: 'linkerd',
  title: 'Linkerd',
  companion: true,
  learnFrom: { configMap: isLinkerdConfigMap, format: 'yaml', images: linkerdConfigImages },
  names: { proxy: 'linkerd-proxy', init: 'linkerd-init', validator: 'linkerd-network-validator' },
  annotations: [
    'linkerd.io/inject',
    ...['skip-outbound-ports', 'skip-inbound-ports', 'skip-subnets', 'proxy-uid'].map((k) => `${CONFIG}/${k}`),
  ],

  optOut,

  annotationSettings(a) {
    const s = annotationSettings(a);
    // proxy-uid is read by linkerd-cni from the pod: another UID exempted is an exemption of all its traffic.
    const uid = identityOverride(a, 2102);
    if (uid) s.narrowing.push(uid);
    // linkerd-cni exempts proxy-gid's GID as well (strconv.Atoi; cni-plugin main.go).
    exemptGid(s, `annotation ${CONFIG}/proxy-gid`, a[`${CONFIG}/proxy-gid`]);
    return s;
  },

  judgeProxy(c, _pod, id) {
    if (!fromRepositories(c.image, id.images.proxy))
      return `image ${c.image ?? '(none)'} is not one of the recognised proxy images (${id.images.proxy.join(', ')})`;
    // Unset: the proxy image's own user, 2102, which linkerd-cni exempts by default.
    const uid = c.securityContext?.runAsUser ?? 2102;
    if (uid !== id.proxyUid) return `it runs as UID ${uid}, but the redirect exempts the proxy UID ${id.proxyUid}`;
    return undefined;
  },

  judgeInit(c, id) {
    if (!fromRepositories(c.image, id.images.init))
      return {
        problem: `image ${c.image ?? '(none)'} is not one of the recognised init images (${id.images.init.join(', ')})`,
      };
    const cmd = c.command;
    if (cmd !== undefined && !(cmd.length === 1 && cmd[0] === '/usr/lib/linkerd/linkerd2-proxy-init')) {
      return { problem: `its command ${JSON.stringify(cmd)} does not run linkerd2-proxy-init` };
    }
    const caps = addedCapabilities(c);
    if (c.securityContext?.privileged !== true && !(caps.has('NET_ADMIN') && caps.has('NET_RAW'))) {
      return { problem: 'it lacks NET_ADMIN and NET_RAW, so it cannot install the redirect' };
    }
    const f = readFlags(c.args ?? [], INIT_FLAGS);
    const s = emptySettings();
    const who = 'linkerd-init';
    if (f.unknown.length || f.missingValue.length || f.positionals.length) {
      s.invalid.push(
        `${who}: arguments ${[...f.unknown, ...f.missingValue, ...f.positionals].join(' ')} ` +
          'are not proxy-init flags (it would exit with an error)',
      );
    }
    const must = (flag: string, want: number, why: string) => {
      const v = f.values.get(flag);
      if (v?.trim() !== String(want))
        s.narrowing.push(`${who} --${flag} is "${v ?? '(unset)'}": ${why} (must be ${want})`);
    };
    must('incoming-proxy-port', id.inboundPort, 'inbound traffic would not reach the proxy');
    must('outgoing-proxy-port', id.outboundPort, 'outbound traffic would not reach the proxy');
    must('proxy-uid', id.proxyUid, 'another UID would be exempt from the redirect');
    // proxy-init exempts this GID too (any above 0; pkg/iptables): its containers are then judged against it.
    exemptGid(s, `${who} --proxy-gid`, f.values.get('proxy-gid'));
    if (f.lists.get('ports-to-redirect')?.length)
      s.narrowing.push(`${who} --ports-to-redirect narrows inbound redirection to the ports listed`);
    if (goBool(f.values.get('simulate'))) s.narrowing.push(`${who} --simulate is set: no rules would be installed`);
    if ((f.values.get('netns') ?? '') !== '')
      s.narrowing.push(`${who} --netns is set: the rules would go to another namespace`);
    const bin = f.values.get('firewall-bin-path');
    if (bin !== undefined && !FIREWALL_BINARIES.has(binaryName(bin)))
      s.narrowing.push(`${who} --firewall-bin-path "${bin}" is not an iptables binary`);
    const save = f.values.get('firewall-save-bin-path');
    if (save !== undefined && !FIREWALL_SAVE.has(binaryName(save)))
      s.narrowing.push(`${who} --firewall-save-bin-path "${save}" is not an iptables-save binary`);
    addPorts(s, `${who} --outbound-ports-to-ignore`, f.lists.get('outbound-ports-to-ignore'), 'outboundPorts');
    addPorts(s, `${who} --inbound-ports-to-ignore`, f.lists.get('inbound-ports-to-ignore'), 'inboundPorts');
    addCidrs(s, `${who} --subnets-to-ignore`, f.lists.get('subnets-to-ignore'));
    return { settings: s };
  },

  judgeValidator(c, _pod, id) {
    if (!fromRepositories(c.image, id.images.validator))
      return (
        `image ${c.image ?? '(none)'} is not one of the recognised validation images ` +
        `(${id.images.validator.join(', ')})`
      );
    const cmd = c.command;
    if (!(cmd?.length === 1 && cmd[0] === '/usr/lib/linkerd/linkerd2-network-validator'))
      return `its command ${JSON.stringify(cmd ?? [])} does not run linkerd2-network-validator`;
    const f = readFlags(c.args ?? [], VALIDATOR_FLAGS);
    if (f.unknown.length || f.positionals.length)
      return `arguments ${[...f.unknown, ...f.positionals].join(' ')} are not network-validator flags`;
    const listen = f.values.get('listen-addr') ?? '';
    if (!listen.endsWith(`:${id.outboundPort}`))
      return `it listens on "${listen}", not on the proxy's outbound port ${id.outboundPort}`;
    const connect = f.values.get('connect-addr') ?? '';
    // A loopback target reaches the listener without any redirect: such a check proves nothing.
    if (connect === '' || /^(127\.|\[?::1\]?:|localhost)/.test(connect))
      return `it connects to "${connect}", which needs no redirect to reach it`;
    return undefined;
  },

  // linkerd-cni redirects every pod with linkerd-proxy and without linkerd-init (cni-plugin/main.go); it reads no
  // annotation to decide that (linkerd.io/inject=disabled stops the injector, not the plugin).
  cniSkips: () => undefined,

  statusOps: () => [],
};
