// S13 (issue 25): Cilium's agent in exclusive mode (cni.exclusive, the default) on rn-1, in its own order
// (daemon/cmd/cni/config.go): it writes 05-cilium.conflist, then renames every other CNI config in the dir to
// <name>.cilium_bak — the file that chained the mesh plugin included — so the runtime loads Cilium's file, without
// the mesh plugin, until the mesh's installer chains itself into 05-cilium.conflist (the first file). No cilium-cni
// binary is built here: the file's interface plugin is the node's bridge (a STAND-IN for cilium-cni); the file
// operations, their order and names are Cilium's. Judged as S2.
import { renameSync, writeFileSync } from 'node:fs';
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

const CILIUM = '05-cilium.conflist';

function writeCilium(n: RealNode, plugins: PluginConf[]): void {
  const tmp = join(n.cni.confDir, `.${CILIUM}.tmp`);
  writeFileSync(tmp, `${JSON.stringify({ cniVersion: CNI_VERSION, name: 'cilium', plugins }, null, 2)}\n`);
  renameSync(tmp, join(n.cni.confDir, CILIUM));
}

/** The change, shared with the ambient line's A2C (a2-ambient-chain.ts). */
export const ciliumChange: ChainChange = {
  describe: `${CILIUM} written on rn-1 and ${CONFLIST_NAME} renamed to ${CONFLIST_NAME}.cilium_bak`,
  brk: ({ cluster }) => {
    const n = cluster.node('rn-1');
    writeCilium(n, [bridgePlugin(n.cni), portmapPlugin()]);
    renameSync(join(n.cni.confDir, CONFLIST_NAME), join(n.cni.confDir, `${CONFLIST_NAME}.cilium_bak`));
  },
  restore: ({ cluster }) => {
    const n = cluster.node('rn-1');
    writeCilium(n, [bridgePlugin(n.cni), portmapPlugin(), meshPlugin(n.cni)]);
  },
};

export const s13: Scenario = {
  id: 'S13',
  title: "Cilium's agent takes the conf dir (exclusive: 05-cilium.conflist, others to .cilium_bak)",
  namespaces: ['s13'],
  run: (ctx) => chainRace(ctx, 's13', ciliumChange),
};
