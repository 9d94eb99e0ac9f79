/**
 * One pod + remote topology per test file, registered with vitest's hooks: created (after the prerequisite and
 * containment checks) before the file's tests, reset to an unmeshed pod before each test, deleted afterwards. Also
 * runs the validator and reports what left the pod during the run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { VALIDATION_FAILED_EXIT_CODE } from '../../src/validator/reasons.ts';
import {
  flushNat,
  installNat,
  installPodEgressCounter,
  installRemoteFilter,
  pickIptables,
  remoteTcpPackets,
  resetCounters,
  seenTcp,
  type Iptables,
} from './iptables.ts';
import {
  assertPrerequisites,
  createTopology,
  deleteLeftovers,
  destroyTopology,
  podTxPackets,
  setDefaultRoute,
  TEST_NET_ADDRESS,
  type Topology,
} from './netns.ts';
import { NODE, runValidator, terminationOf, type Identity, type ValidatorRun } from './run-validator.ts';
import { TERMINATION_FIELDS } from '../validator/termination-fields.ts';

/** A run and what crossed the pod's boundary meanwhile. */
export interface Observed {
  readonly run: ValidatorRun;
  /** Packets transmitted on the pod's non-lo interfaces (IPv4 topology: nothing else sends, so this is exact). */
  readonly podTx: number;
  /** TCP packets that left the pod (mangle POSTROUTING, both families). */
  readonly podTcp: number;
  /** TCP packets that arrived in the remote netns (both families). */
  readonly remoteTcp: number;
}

export interface PodFixture {
  readonly topo: () => Topology;
  readonly ipt: () => Iptables;
  install(rules: readonly string[], family?: 4 | 6): void;
  validate(args: string[], as: Identity): Promise<Observed>;
  /** Connections the forging server in the remote netns accepted since the last reset (when started). */
  readonly serverConnections: () => number;
}

export const FORGING_PORT = 8080;

export function usePod(opts: { ipv6?: boolean; forgingServer?: boolean } = {}): PodFixture {
  let topo: Topology | undefined;
  let ipt: Iptables | undefined;
  let server: ChildProcess | undefined;
  let connections = 0;
  const families: Array<4 | 6> = opts.ipv6 ? [4, 6] : [4];

  beforeAll(async () => {
    assertPrerequisites();
    const stale = deleteLeftovers();
    if (stale.length > 0) console.info(`deleted leftover namespaces: ${stale.join(', ')}`);
    topo = createTopology({ ipv6: opts.ipv6 });
    ipt = pickIptables(topo.pod);
    console.info(`netns tests use ${ipt.bin}: ${ipt.version}`);
    for (const family of families) {
      installRemoteFilter(ipt, topo.remote, family === 4 ? TEST_NET_ADDRESS : '2001:db8::1', family);
      installPodEgressCounter(ipt, topo.pod, family);
    }
    if (opts.forgingServer)
      server = await startForgingServer(topo.remote, topo.remoteIp, FORGING_PORT, () => connections++);
  });

  afterAll(() => {
    server?.kill('SIGKILL');
    destroyTopology(topo);
  });

  beforeEach(() => {
    for (const family of families) {
      flushNat(ipt!, topo!.pod, family);
      resetCounters(ipt!, topo!.remote, 'filter', family);
      resetCounters(ipt!, topo!.pod, 'mangle', family);
    }
    setDefaultRoute(topo!, true);
    connections = 0;
  });

  return {
    topo: () => topo!,
    ipt: () => ipt!,
    install: (rules, family = 4) => installNat(ipt!, topo!.pod, rules, family),
    serverConnections: () => connections,
    async validate(args, as) {
      const before = podTxPackets(topo!);
      const run = await runValidator(topo!.pod, args, as);
      const sum = (f: (family: 4 | 6) => number) => families.reduce((n, family) => n + f(family), 0);
      return {
        run,
        podTx: podTxPackets(topo!) - before,
        podTcp: sum((family) => seenTcp(ipt!, topo!.pod, { table: 'mangle', chain: 'POSTROUTING', family })),
        remoteTcp: sum((family) => remoteTcpPackets(ipt!, topo!.remote, family)),
      };
    },
  };
}

/** Asserts the documented failure shape (exit 42, one stderr line, the message's fields) and returns the message. */
export function expectFailure(
  run: ValidatorRun,
  reason: string,
  fields: Record<string, unknown> = {},
): Record<string, unknown> {
  expect(run.code, run.stderr).toBe(VALIDATION_FAILED_EXIT_CODE);
  const msg = terminationOf(run);
  expect(Object.keys(msg)).toEqual(TERMINATION_FIELDS);
  expect(msg).toMatchObject({ reason, node: 'node-under-test', ...fields });
  expect(run.stderr).toMatch(new RegExp(`^meshgate validate-redirect: FAILED ${reason} \\(exit 42\\)`));
  expect(run.stdout).toBe('');
  return msg;
}

/** Starts the forging server in the remote netns and counts the connections it accepts. */
function startForgingServer(ns: string, host: string, port: number, onConnection: () => void): Promise<ChildProcess> {
  const script = fileURLToPath(new URL('./fixtures/forging-server.ts', import.meta.url));
  const child = spawn('ip', ['netns', 'exec', ns, NODE, script, host, String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`forging server exited with ${code}: ${stderr}`)));
    child.stdout!.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n')) {
        if (line === 'listening') resolve(child);
        if (line === 'connection') onConnection();
      }
    });
  });
}
