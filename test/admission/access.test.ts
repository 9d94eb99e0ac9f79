/**
 * Issue 33 §1: `kubectl exec` and `kubectl attach` into a guarded pod's mesh containers (a CONNECT of pods/exec or
 * pods/attach, as the apiserver sends it) through the validating routes of every level: refused at enforce unless the
 * requester is one of access.debuggers (admitted, with a warning and the reason mesh_container_debug as the audit
 * annotation), admitted with the record below enforce; app containers pass; options that are not options are refused
 * naming the field. Each access to a mesh container yields one record for the pod's Event.
 */
import { describe, expect, it } from 'vitest';
import { accessEvent, type AccessRecord } from '../../src/admission/access.ts';
import { admissionRoutes } from '../../src/admission/handlers.ts';
import { type AdmissionRequest, encodeResponse } from '../../src/admission/review.ts';
import { cfg, verified } from '../policy/mutate/fixtures.ts';

const ISTIO = cfg('istio', { access: { debuggers: { users: ['alice'], groups: ['platform-oncall'] } } });

function connect(
  sub: string,
  options: unknown,
  who: { username?: string; groups?: string[] } = { username: 'bob', groups: ['system:authenticated'] },
): AdmissionRequest {
  return {
    uid: 'u',
    operation: 'CONNECT',
    name: 'web-0',
    namespace: 'shop',
    subResource: sub,
    kind: { group: '', version: 'v1', kind: sub === 'attach' ? 'PodAttachOptions' : 'PodExecOptions' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    userInfo: who,
    object: options,
  };
}
const exec = (container: string | undefined, command = ['sh'], who?: { username?: string; groups?: string[] }) =>
  connect('exec', { kind: 'PodExecOptions', apiVersion: 'v1', stdin: true, tty: true, container, command }, who);

function setup(c = ISTIO) {
  const records: AccessRecord[] = [];
  const routes = admissionRoutes({ config: c, nodes: verified, onAccess: (a) => records.push(a) });
  return { routes, records };
}

describe('exec and attach into a mesh container, at enforce', () => {
  it.each([
    ['istio-proxy', "the mesh's proxy"],
    ['istio-validation', 'a mesh container'],
    ['istio-init', 'a mesh container'],
    // Reserved under every profile: a pod of another mesh's names was refused in a guarded namespace anyway.
    ['linkerd-proxy', 'a mesh container'],
  ])('exec into %s: refused, naming who may', async (container, role) => {
    const { routes, records } = setup();
    const v = await routes['/validate'](exec(container));
    expect(v).toMatchObject({ kind: 'deny', reason: 'mesh_container_access' });
    expect(v.kind === 'deny' && v.message).toBe(
      `kubectl exec into container ${container} of pod shop/web-0 (${role}) is refused: what it runs would run as ` +
        "the mesh's container — as the proxy, past the redirect and with the workload's keys in reach. Only " +
        'group platform-oncall or user alice may (bob may not), and each time it is recorded; port-forwarding to ' +
        "the proxy's admin port (istioctl proxy-config, linkerd diagnostics) still works",
    );
    const body = encodeResponse('admission.k8s.io/v1', 'u', v);
    expect(body.response).toMatchObject({
      allowed: false,
      auditAnnotations: { 'meshgate.io/reason': 'mesh_container_access' },
    });
    expect(records).toEqual([
      {
        request: expect.objectContaining({ kind: 'exec', namespace: 'shop', pod: 'web-0', container, username: 'bob' }),
        outcome: 'refused',
        level: 'enforce',
        reason: 'mesh_container_access',
      },
    ]);
  });

  it('attach into the proxy: refused the same way', async () => {
    const v = await setup().routes['/validate'](connect('attach', { container: 'istio-proxy', stdin: false }));
    expect(v).toMatchObject({ kind: 'deny', reason: 'mesh_container_access' });
    expect(v.kind === 'deny' && v.message).toMatch(/^kubectl attach into container istio-proxy of pod shop\/web-0/);
  });

  it('no container named (the apiserver would pick the only one, a gateway’s proxy): refused, asking for -c', async () => {
    const v = await setup().routes['/validate'](exec(undefined));
    expect(v).toMatchObject({ kind: 'deny', reason: 'access_container_unnamed' });
    expect(v.kind === 'deny' && v.message).toMatch(/names no container.*name it \(kubectl exec -c <container>\)/);
    expect((await setup().routes['/validate'](exec(''))).kind).toBe('deny');
  });

  it.each([
    ['a listed user', { username: 'alice', groups: ['system:authenticated'] }, 'user alice'],
    [
      'a member of a listed group',
      { username: 'carol', groups: ['system:authenticated', 'platform-oncall'] },
      'group platform-oncall',
    ],
  ])('%s: admitted, warned that it is recorded, with its own audit reason', async (_n, who, as) => {
    const { routes, records } = setup();
    const v = await routes['/validate'](exec('istio-proxy', ['pilot-agent', 'request', 'GET', 'config_dump'], who));
    expect(v).toEqual({
      kind: 'allow',
      reason: 'mesh_container_debug',
      warnings: [
        `container istio-proxy of shop/web-0 is one of the mesh's: you may reach it as ${as} (access.debuggers), ` +
          'and this exec is recorded',
      ],
    });
    expect(encodeResponse('admission.k8s.io/v1', 'u', v).response.auditAnnotations).toEqual({
      'meshgate.io/reason': 'mesh_container_debug',
    });
    expect(records.map((r) => [r.outcome, r.reason])).toEqual([['debugger', 'mesh_container_debug']]);
    expect(accessEvent(records[0])).toEqual({
      type: 'Normal',
      reason: 'MeshContainerDebug',
      message: `${who.username}: kubectl exec into container istio-proxy: pilot-agent request GET config_dump (admitted: access.debuggers) [mesh_container_debug]`,
    });
  });

  it('the default debuggers: group system:masters', async () => {
    const { routes } = setup(cfg('istio'));
    expect(
      await routes['/validate'](exec('istio-proxy', ['sh'], { username: 'root', groups: ['system:masters'] })),
    ).toMatchObject({
      kind: 'allow',
      reason: 'mesh_container_debug',
    });
    const none = cfg('istio', { access: { debuggers: { users: [], groups: [] } } });
    const v = await setup(none).routes['/validate'](
      exec('istio-proxy', ['sh'], { username: 'root', groups: ['system:masters'] }),
    );
    expect(v.kind === 'deny' && v.message).toContain('Only nobody (access.debuggers is empty) may (root may not)');
  });

  it('an app container: admitted, nothing recorded (admission judged what it runs as)', async () => {
    const { routes, records } = setup();
    expect(await routes['/validate'](exec('app'))).toEqual({ kind: 'allow', reason: 'access_app_container' });
    expect(records).toEqual([]);
  });

  it('the custom profile’s configured names are mesh containers', async () => {
    const c = cfg('custom', { proxy: { name: 'envoy' } });
    expect(await setup(c).routes['/validate'](exec('envoy'))).toMatchObject({
      kind: 'deny',
      reason: 'mesh_container_access',
    });
  });
});

describe('below enforce and on other routes', () => {
  it('warn: admitted with the refusal as a warning and recorded; audit: admitted and recorded', async () => {
    const { routes, records } = setup();
    const warn = await routes['/validate/warn'](exec('istio-proxy'));
    expect(warn).toMatchObject({ kind: 'allow', reason: 'mesh_container_access', audited: { level: 'warn' } });
    expect(warn.kind === 'allow' && warn.warnings?.[0]).toMatch(/\[mesh_container_access\] \(warn mode: admitted\)$/);
    expect(encodeResponse('admission.k8s.io/v1', 'u', warn).response.auditAnnotations).toEqual({
      'meshgate.io/reason': 'mesh_container_access',
      'meshgate.io/would-deny': 'warn',
    });
    const audit = await routes['/validate/selected-pods/audit'](exec('istio-proxy'));
    expect(audit).toMatchObject({ kind: 'allow', reason: 'mesh_container_access', audited: { level: 'audit' } });
    expect(records.map((r) => [r.outcome, r.level])).toEqual([
      ['admitted', 'warn'],
      ['admitted', 'audit'],
    ]);
    expect(accessEvent(records[1])).toEqual({
      type: 'Warning',
      reason: 'MeshContainerAccess',
      message:
        'bob: kubectl exec into container istio-proxy: sh (admitted at level audit; refused at enforce) [mesh_container_access]',
    });
  });

  it('portforward and other CONNECTs are not judged here', async () => {
    const { routes, records } = setup();
    expect(await routes['/validate'](connect('portforward', { ports: [15000] }))).toEqual({
      kind: 'allow',
      reason: 'not_a_pod_create',
    });
    expect(records).toEqual([]);
  });
});

describe('options that are not options', () => {
  it.each([
    ['a string', 'sh', /request\.object is not an object/],
    ['a container that is a number', { container: 7 }, /request\.object\.container is not a string/],
    [
      'a command that is a string',
      { container: 'app', command: 'sh -c id' },
      /request\.object\.command is not a list of strings/,
    ],
  ])('%s: refused (invalid_object), naming the field', async (_n, options, message) => {
    const v = await setup().routes['/validate'](connect('exec', options));
    expect(v).toMatchObject({ kind: 'deny', reason: 'invalid_object' });
    expect(v.kind === 'deny' && v.message).toMatch(message);
  });

  it('a long command is shortened in the record (the audit log keeps it whole)', async () => {
    const { routes, records } = setup();
    await routes['/validate'](exec('istio-proxy', ['sh', '-c', 'x'.repeat(5000), ...Array(100).fill('a')]));
    const message = accessEvent(records[0]).message;
    expect(message.length).toBeLessThan(400);
    expect(message).toMatch(/: sh -c x+\.\.\. \(refused\)/);
  });
});
