/**
 * The node agent's Istio ambient checks (issue 26): the chain verdict, then the istio-cni plugin's ambient_enabled
 * (Istio's own rendered conflist from shared/corpus), istio-cni's node agent readiness and a ztunnel connection on
 * the ZDS socket. The facts reader against a real readiness server on loopback and a real /proc/net/unix format;
 * the loop with a fake reader whose components go down and come back.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeAgent, type AgentConfig } from '../../src/agent/agent.ts';
import { connectionsOn, readAmbientFacts } from '../../src/agent/ambient-facts.ts';
import { judgeSnapshot } from '../../src/agent/judge.ts';
import type { AmbientFacts } from '../../src/cni/ambient.ts';
import { readSnapshot } from '../../src/cni/snapshot.ts';
import { corpus, nodeDirs, type NodeDirs } from '../cni/helpers.ts';
import { FakePublisher, memoryLog } from './fake-publisher.ts';
import { agentConfig } from './config.ts';

/** istio-cni's own conflist (Istio's testdata), ambient off as rendered there, and the same with ambient on. */
const AMBIENT_OFF = corpus('istio__10-calico.conflist-istioconfig');
const AMBIENT_ON = AMBIENT_OFF.replace('"ambient_enabled": false', '"ambient_enabled": true');
const SOCKET = '/var/run/ztunnel/ztunnel.sock';

/** /proc/net/unix as Linux lists a unixpacket listener and one accepted connection (read on this machine). */
const PROC_NET_UNIX = [
  'Num       RefCount Protocol Flags    Type St Inode Path',
  `00000000fe13e084: 00000002 00000000 00010000 0005 01 4846128 ${SOCKET}`,
  `0000000020621d8c: 00000003 00000000 00000000 0005 03 4846130 ${SOCKET}`,
  '000000003b1a9c2e: 00000003 00000000 00000000 0001 03 4846200 /run/containerd/containerd.sock',
].join('\n');

const GOOD: AmbientFacts = {
  agent: { ready: true, detail: 'GET http://127.0.0.1:8000/readyz: 200' },
  ztunnel: { connected: true, detail: `1 connection(s) on ${SOCKET}` },
};

let dirs: NodeDirs | undefined;
let agent: NodeAgent | undefined;
let server: Server | undefined;
afterEach(async () => {
  await agent?.stop();
  agent = undefined;
  dirs?.cleanup();
  server?.close();
});

function setup(conflist: string): AgentConfig {
  dirs = nodeDirs('meshgate-ambient-');
  dirs.conf('10-calico.conflist', conflist);
  for (const b of ['calico', 'portmap', 'istio-cni']) dirs.bin(b);
  return agentConfig(dirs, {
    debounceMs: 10,
    ambient: { readyzUrl: 'http://127.0.0.1:1/readyz', zdsSocket: SOCKET, procNetUnix: '/nonexistent', pollMs: 50 },
  });
}

async function judged(conflist: string, facts: AmbientFacts) {
  const config = setup(conflist);
  return judgeSnapshot(await readSnapshot(config.confDir, config.binDirs), config, undefined, () => new Date(0), facts);
}

describe('the ambient verdict', () => {
  it.each([
    ['ambient_enabled false in the conflist', AMBIENT_OFF, GOOD, 'ambient_disabled'],
    [
      'istio-cni node agent not ready',
      AMBIENT_ON,
      { ...GOOD, agent: { ready: false, detail: 'GET …: ECONNREFUSED' } },
      'ambient_agent_not_ready',
    ],
    [
      'no ztunnel connected',
      AMBIENT_ON,
      { ...GOOD, ztunnel: { connected: false, detail: `0 connection(s) on ${SOCKET}` } },
      'ztunnel_not_ready',
    ],
    ['all there', AMBIENT_ON, GOOD, 'verified'],
  ])('%s: %s', async (_, conflist, facts, reason) => {
    const v = await judged(conflist, facts);
    expect(v.reason).toBe(reason);
    expect(v.verified).toBe(reason === 'verified');
    expect(v.evidence.ambient).toEqual({
      ambientEnabled: conflist === AMBIENT_ON,
      agent: facts.agent.detail,
      ztunnel: facts.ztunnel.detail,
    });
  });

  it('a chain without istio-cni keeps its own reason; the ambient facts are still in the evidence', async () => {
    const v = await judged(corpus('istio__calico.conflist'), GOOD);
    expect(v.reason).toBe('mesh_plugin_missing');
    expect(v.evidence.ambient?.agent).toBe(GOOD.agent.detail);
  });
});

describe('reading the components', () => {
  it('counts only connected entries on the socket path', () => {
    expect(connectionsOn(PROC_NET_UNIX, SOCKET)).toBe(1);
    expect(connectionsOn(PROC_NET_UNIX.split('\n').slice(0, 2).join('\n'), SOCKET)).toBe(0);
  });

  it('readiness from a real HTTP server on loopback, unproven without its process; a closed port is not ready', async () => {
    let status = 200;
    server = createServer((_, res) => res.writeHead(status).end());
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    const dir = mkdtempSync(join(tmpdir(), 'mg-unix-'));
    const proc = join(dir, 'unix');
    writeFileSync(proc, PROC_NET_UNIX);
    // No process this /proc shows holds the listener: neither fact is proven (test/agent/ambient-binding.test.ts
    // binds them to the process on the real kernel).
    const c = {
      readyzUrl: `http://127.0.0.1:${port}/readyz`,
      zdsSocket: SOCKET,
      procNetUnix: proc,
      pollMs: 1000,
      procRoot: dir,
    };
    const unbound = await readAmbientFacts(c);
    expect(unbound.agent.ready).toBe(false);
    expect(unbound.agent.detail).toMatch(
      new RegExp(`^GET http://127\\.0\\.0\\.1:${port}/readyz: 200; cannot tell which process listens`),
    );
    expect(unbound.ztunnel.connected).toBe(false);
    status = 503;
    expect((await readAmbientFacts(c)).agent.ready).toBe(false);
    server.close();
    server.closeAllConnections();
    const closed = await readAmbientFacts({ ...c, procNetUnix: join(dir, 'missing') });
    expect(closed.agent.ready).toBe(false);
    expect(closed.agent.detail).toMatch(new RegExp(`^GET http://127\\.0\\.0\\.1:${port}/readyz: ECONNREFUSED`));
    expect(closed.ztunnel.connected).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('the agent loop with ambient checks', () => {
  it('polls the components: ztunnel going away unverifies the node, its return verifies it again', async () => {
    const config = setup(AMBIENT_ON);
    let facts = GOOD;
    const pub = new FakePublisher();
    agent = new NodeAgent(config, {
      publisher: pub,
      log: memoryLog(),
      readAmbient: async () => facts,
      watch: () => ({ ensure() {}, close() {} }),
    });
    await agent.start();
    expect(pub.last?.reason).toBe('verified');
    const down = pub.next((v) => v.reason === 'ztunnel_not_ready');
    facts = { ...GOOD, ztunnel: { connected: false, detail: `0 connection(s) on ${SOCKET}` } };
    expect((await down).verdict.verified).toBe(false);
    const up = pub.next((v) => v.reason === 'verified');
    facts = GOOD;
    expect((await up).verdict.evidence.ambient?.ztunnel).toBe(GOOD.ztunnel.detail);
  });
});
