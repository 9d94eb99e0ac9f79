/**
 * The compiled configuration with what the installed mesh says it injects (src/mesh/learn.ts) trusted beside the
 * configured recognisedImages: recompiled on each change of the mesh's ConfigMaps (a few times a year), never per
 * review. With nothing learned it is the configuration as given.
 */
import { unionImages, type LearnedImages } from '../mesh/learn.ts';
import { compileConfig, type Compiled } from './compile.ts';

export function withLearnedImages(base: Compiled, learned: LearnedImages): Compiled {
  const configured = base.config.recognisedImages;
  if (!configured || (!learned.proxy.length && !learned.init.length && !learned.validator.length)) return base;
  const recognisedImages = unionImages([
    { proxy: [...configured.proxy], init: [...configured.init], validator: [...configured.validator] },
    learned,
  ]);
  return compileConfig({ ...base.config, recognisedImages });
}
