// S10 (issue 25): the AWS VPC CNI's aws-node. Its init container writes the primary file 10-aws.conflist; the mesh's
// installer then appends its plugin to that file. When aws-node restarts (an upgrade, a node's daemon restarted),
// its init writes 10-aws.conflist ANEW — a new file renamed over the old one, not an edit in place — without the mesh
// plugin, until the mesh's installer notices and appends itself again. Here: rn-1's dir holds only 10-aws.conflist
// (bridge + portmap + the mesh plugin, verified); at t0 a fresh 10-aws.conflist without the plugin is renamed in while
// the Deployment scales up; after 10 s the installer renames in the file with its plugin again. Judged as S2.
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  bridgePlugin,
  CNI_VERSION,
  CONFLIST_NAME,
  meshPlugin,
  portmapPlugin,
  type PluginConf,
} from '../harness/cni.ts';
import type { RealNode } from '../harness/node.ts';
import { type ChainChange, chainRace } from './s2-s3-chain-changes.ts';
import type { Scenario } from './common.ts';

const AWS = '10-aws.conflist';

/** A new file renamed over 10-aws.conflist, as aws-node's init and the mesh's installer both write it. */
function renameIn(n: RealNode, plugins: PluginConf[]): void {
  const tmp = join(n.cni.confDir, `.${AWS}.${Date.now()}`);
  writeFileSync(tmp, `${JSON.stringify({ cniVersion: CNI_VERSION, name: 'aws-cni', plugins }, null, 2)}\n`);
  renameSync(tmp, join(n.cni.confDir, AWS));
}

/** The change, shared with the ambient line's A2 (a2-ambient-chain.ts). */
export const awsNodeChange: ChainChange = {
  describe: `${AWS} renamed in anew on rn-1 without the mesh plugin`,
  setup: ({ cluster }) => {
    const n = cluster.node('rn-1');
    renameIn(n, [bridgePlugin(n.cni), portmapPlugin(), meshPlugin(n.cni)]);
    rmSync(join(n.cni.confDir, CONFLIST_NAME), { force: true });
  },
  brk: ({ cluster }) => {
    const n = cluster.node('rn-1');
    renameIn(n, [bridgePlugin(n.cni), portmapPlugin()]);
  },
  restore: ({ cluster }) => {
    const n = cluster.node('rn-1');
    renameIn(n, [bridgePlugin(n.cni), portmapPlugin(), meshPlugin(n.cni)]);
  },
};

export const s10: Scenario = {
  id: 'S10',
  title: "aws-node's init renames in 10-aws.conflist without the mesh plugin",
  namespaces: ['s10'],
  run: (ctx) => chainRace(ctx, 's10', awsNodeChange),
};
