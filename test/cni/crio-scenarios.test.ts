/**
 * S12 (issue 25): CRI-O's selection over the real-node tier's own conf dirs. The tier runs containerd only; what
 * CRI-O would load from the same directories is judged here by CRI-O's real loop (ocicni over libcni 1.1, 1.2 and
 * 1.3: scripts/build-ocicni-oracle.sh) against meshgate's emulation (readSnapshot + verifyChain, runtime crio),
 * for both meshes' plugins, with the real plugin binaries in the bin dir (Debian's bridge and portmap, the built
 * istio-cni and linkerd-cni: ocicni's ValidateNetworkList asks each for its versions). The states are those the
 * scenarios go through: S1's two nodes, S2's rewrite without the plugin (also S10's aws-node rename-in, which leaves
 * the same file), S3's 00-multus.conf sorting first and its restore into 00-multus.conflist. The files are the
 * tier's own (test/realnode/harness/cni.ts writes them the same way).
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSnapshot } from '../../src/cni/snapshot.ts';
import { LIBCNI_LINES, type LibcniLine } from '../../src/cni/types.ts';
import { verifyChain } from '../../src/cni/verify.ts';
import { findIstioBinaries } from '../e2e/harness/istio.ts';
import { findMeshBuild } from '../meshbin/binaries.ts';
import {
  bridgePlugin,
  CNI_VERSION,
  CONFLIST_NAME,
  meshPlugin,
  portmapPlugin,
  type CniNodeLayout,
  type TierMesh,
} from '../realnode/harness/cni.ts';
import { runOcicniOracle, type OcicniRun, type OracleCase } from './oracle-binary.ts';

const PLUGIN_TYPE: Record<TierMesh, string> = { istio: 'istio-cni', linkerd: 'linkerd-cni' };

interface State {
  name: string;
  files: (l: CniNodeLayout) => Record<string, object>;
  /** The file CRI-O loads and whether its chain has the mesh plugin. */
  expect: { file: string; meshed: boolean };
}

const list = (plugins: object[]) => ({ cniVersion: CNI_VERSION, name: 'meshgate-e2e', plugins });
const STATES: State[] = [
  {
    name: 'rn-1 (S1): bridge + portmap + mesh plugin',
    files: (l) => ({ [CONFLIST_NAME]: list([bridgePlugin(l), portmapPlugin(), meshPlugin(l)]) }),
    expect: { file: CONFLIST_NAME, meshed: true },
  },
  {
    name: 'rn-2 (S1), and S2 / S10: the file rewritten without the plugin',
    files: (l) => ({ [CONFLIST_NAME]: list([bridgePlugin(l), portmapPlugin()]) }),
    expect: { file: CONFLIST_NAME, meshed: false },
  },
  {
    name: 'S3: 00-multus.conf sorts first',
    files: (l) => ({
      '00-multus.conf': { cniVersion: CNI_VERSION, name: 'multus-stand-in', ...bridgePlugin(l) },
      [CONFLIST_NAME]: list([bridgePlugin(l), portmapPlugin(), meshPlugin(l)]),
    }),
    expect: { file: '00-multus.conf', meshed: false },
  },
  {
    name: "S3 restored: the plugin's installer chains itself into 00-multus.conflist",
    files: (l) => ({
      '00-multus.conflist': list([bridgePlugin(l), portmapPlugin(), meshPlugin(l)]),
      [CONFLIST_NAME]: list([bridgePlugin(l), portmapPlugin(), meshPlugin(l)]),
    }),
    expect: { file: '00-multus.conflist', meshed: true },
  },
];

let root: string;
const cases: Array<OracleCase & { mesh: TierMesh; state: State }> = [];
const runs = new Map<LibcniLine, OcicniRun>();

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'meshgate-crio-scenarios-'));
  const bin = join(root, 'bin');
  mkdirSync(bin);
  const binaries = {
    bridge: '/usr/lib/cni/bridge',
    'host-local': '/usr/lib/cni/host-local',
    portmap: '/usr/lib/cni/portmap',
    'istio-cni': findIstioBinaries().bin('istio-cni'),
    'linkerd-cni': findMeshBuild('linkerd').bin('linkerd-cni'),
  };
  for (const [name, src] of Object.entries(binaries)) copyFileSync(src, join(bin, name));
  for (const mesh of ['istio', 'linkerd'] as const)
    for (const [i, state] of STATES.entries()) {
      const dir = join(root, `${mesh}-${i}`);
      const l: CniNodeLayout = {
        confDir: join(dir, 'net.d'),
        binDir: bin,
        ipamDir: join(dir, 'ipam'),
        istioDir: join(dir, 'istio'),
        bridge: 'mg-rn-1',
        subnet: '10.244.1.0/24',
        mesh,
      };
      mkdirSync(l.confDir, { recursive: true });
      for (const [file, doc] of Object.entries(state.files(l)))
        writeFileSync(join(l.confDir, file), `${JSON.stringify(doc, null, 2)}\n`);
      cases.push({ id: `${mesh}-${i}`, confDir: l.confDir, binDirs: [bin], maxConfNum: 0, mesh, state });
    }
  for (const line of LIBCNI_LINES) runs.set(line, runOcicniOracle(line, cases));
}, 300_000);

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('S12: CRI-O (ocicni) on the tier scenarios’ conf dirs, against meshgate’s crio emulation', () => {
  for (const line of LIBCNI_LINES)
    it(`libcni ${line}: the same file, and verified exactly when CRI-O's default network runs the mesh plugin`, async () => {
      const rows: string[] = [];
      for (const [i, c] of cases.entries()) {
        const theirs = runs.get(line)!.results[i];
        expect(theirs.id).toBe(c.id);
        expect(theirs.error, c.id).toBeUndefined();
        const pluginType = PLUGIN_TYPE[c.mesh];
        const verdict = verifyChain(await readSnapshot(c.confDir, c.binDirs), {
          runtime: 'crio',
          libcni: line,
          pluginType,
          maxConfNum: 0,
        });
        const meshed = theirs.default?.plugins.includes(pluginType) ?? false;
        rows.push(
          `${c.id} ${c.state.name}: ocicni ${theirs.default?.file} meshed=${meshed}, meshgate ${verdict.reason}`,
        );
        expect({ file: theirs.default?.file, meshed }, c.id).toEqual(c.state.expect);
        expect(verdict.evidence.file, c.id).toBe(theirs.default?.file);
        expect(verdict.reason === 'verified', `${c.id}: ${verdict.reason}`).toBe(meshed);
      }
      console.info(`libcni ${line}:\n  ${rows.join('\n  ')}`);
    });
});
