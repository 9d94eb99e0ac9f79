/**
 * The proxy's UID and GID as istiod computes them on OpenShift (`PLATFORM=openshift`): Istio 1.27's
 * pkg/kube/inject/inject.go GetProxyIDs, reading the pod's namespace (openshift.go, copied there from OpenShift's
 * apiserver-library-go and library-go). OpenShift gives each namespace its own UID range; istiod runs the proxy as
 * the range's last UID, writes it into istio-proxy's and istio-validation's runAsUser and istio-init's `-u`, and the
 * redirect exempts it — so that UID, not 1337, is the one no other container may take there.
 *
 * - UID: the last of `openshift.io/sa.scc.uid-range`; the annotation absent, empty or unreadable: 1337.
 * - GID: the last of the first range of `openshift.io/sa.scc.supplemental-groups` (its comma-separated blocks must all
 *   read), or of `openshift.io/sa.scc.uid-range` when that annotation is absent (present but empty: 1337).
 * - The injection template writes `{{ .ProxyUID | default "1337" }}`: a computed 0 is rendered as 1337.
 */

export const UID_RANGE_ANNOTATION = 'openshift.io/sa.scc.uid-range';
export const SUPPLEMENTAL_GROUPS_ANNOTATION = 'openshift.io/sa.scc.supplemental-groups';

/** istiod's constants.DefaultProxyUIDInt, and the template's default for both IDs. */
export const ISTIO_DEFAULT_PROXY_ID = 1337;

export interface ProxyIds {
  readonly uid: number;
  readonly gid: number;
}

const U32 = 2 ** 32;

/** Go's fmt space set (fmt/scan.go `space`), newline aside: Sscanf treats a newline as an error, not as space. */
const GO_SPACE = /[\t\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

/**
 * `fmt.Sscanf(in, "%d<sep>%d", &a, &b)` into two uint32: each verb skips spaces (a newline is an error), reads decimal
 * digits only (no sign), which must fit 32 bits; the separator must follow the first number at once; whatever
 * follows the second number is ignored. Undefined where Sscanf returns an error.
 */
function scanTwo(input: string, sep: '/' | '-'): [number, number] | undefined {
  let i = 0;
  const number = (): number | undefined => {
    while (i < input.length && GO_SPACE.test(input[i])) i++;
    if (input[i] === '\n') return undefined;
    const start = i;
    while (i < input.length && input[i] >= '0' && input[i] <= '9') i++;
    if (i === start) return undefined;
    // strconv.ParseUint then the 32-bit check: any value of 2^32 or more is an error.
    const digits = input.slice(start, i).replace(/^0+(?=\d)/, '');
    if (digits.length > 10) return undefined;
    const n = Number(digits);
    return n < U32 ? n : undefined;
  };
  const a = number();
  if (a === undefined || input[i] !== sep) return undefined;
  i++;
  const b = number();
  return b === undefined ? undefined : [a, b];
}

/**
 * OpenShift's ParseBlock (library-go pkg/security/uid): "start/size" (the block's end is start+size-1, in uint32
 * arithmetic as Go computes it: a size of 0 wraps) or "start-end"; which form is chosen by whether a "/" occurs
 * anywhere in the value. The last UID of the block, or undefined where ParseBlock fails.
 */
export function blockEnd(value: string): number | undefined {
  if (value.includes('/')) {
    const r = scanTwo(value, '/');
    return r && (r[0] + r[1] - 1 + U32) % U32;
  }
  return scanTwo(value, '-')?.[1];
}

/** What the template renders for a computed ID (`default "1337"`: Go's zero value counts as unset). */
const rendered = (id: number): number => (id === 0 ? ISTIO_DEFAULT_PROXY_ID : id);

/** GetProxyIDs for a namespace with these annotations, as the injection template renders the result. */
export function istioOpenShiftProxyIds(annotations: Readonly<Record<string, string>> | undefined): ProxyIds {
  const a = annotations ?? {};
  let uid = ISTIO_DEFAULT_PROXY_ID;
  let gid = ISTIO_DEFAULT_PROXY_ID;
  const range = a[UID_RANGE_ANNOTATION];
  if (range !== undefined && range !== '') uid = blockEnd(range) ?? uid;
  const groups = a[SUPPLEMENTAL_GROUPS_ANNOTATION] ?? range;
  if (groups !== undefined && groups !== '') {
    const ends = groups.split(',').map(blockEnd);
    if (ends.every((e) => e !== undefined)) gid = ends[0] as number;
  }
  return { uid: rendered(uid), gid: rendered(gid) };
}
