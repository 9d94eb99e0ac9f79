/** REST paths of the resources the daemons use, names escaped (a name comes from objects, flags or files). */

const seg = (s: string) => encodeURIComponent(s);

/** core/v1: `/api/v1/[namespaces/NS/]RESOURCE[/NAME[/SUB]]`. */
export function core(resource: string, o: { namespace?: string; name?: string; sub?: string } = {}): string {
  return at('/api/v1', resource, o);
}

/** A named group: `/apis/GROUP/VERSION/[namespaces/NS/]RESOURCE[/NAME[/SUB]]`. */
export function group(
  groupVersion: string,
  resource: string,
  o: { namespace?: string; name?: string; sub?: string } = {},
): string {
  return at(`/apis/${groupVersion}`, resource, o);
}

function at(base: string, resource: string, o: { namespace?: string; name?: string; sub?: string }): string {
  let p = base;
  if (o.namespace !== undefined) p += `/namespaces/${seg(o.namespace)}`;
  p += `/${resource}`;
  if (o.name !== undefined) p += `/${seg(o.name)}`;
  if (o.sub !== undefined) p += `/${o.sub}`;
  return p;
}
