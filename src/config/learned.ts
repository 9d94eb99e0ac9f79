/**
 * The compiled configuration with what the installed mesh says, read from its own ConfigMaps: the images it injects
 * (src/mesh/learn.ts), trusted beside the configured recognisedImages, its control plane and trust roots
 * (src/mesh/control-plane.ts), beside the profile's defaults and the configured ones, and, with ambient on, the enablement
 * selectors and DNS capture istio-cni enrols pods by (src/policy/ambient/learn.ts), which replace the configured ones.
 * Recompiled on each change of those ConfigMaps (a few times a year), never per review. With nothing learned it is
 * the configuration as given.
 */
import { unionImages, type LearnedImages } from '../mesh/learn.ts';
import type { ControlPlaneFacts } from '../mesh/control-plane.ts';
import { compileConfig, type Compiled } from './compile.ts';
import type { AmbientSelector } from './types.ts';

/** Istio ambient's settings as istio-cni-config holds them. */
export interface LearnedAmbient {
  enablementSelectors: AmbientSelector[];
  dnsCapture: boolean;
}

export interface LearnedFromMesh {
  images: LearnedImages;
  /** Absent: no usable istio-cni-config is known (or ambient is off): the configured selectors apply. */
  ambient?: LearnedAmbient;
  /** What the mesh's ConfigMaps say about its control plane and trust roots (src/mesh/control-plane.ts). */
  controlPlane?: ControlPlaneFacts;
}

export function withLearned(base: Compiled, learned: LearnedFromMesh): Compiled {
  const configured = base.config.recognisedImages;
  const { images, ambient, controlPlane } = learned;
  const someImages = images.proxy.length > 0 || images.init.length > 0 || images.validator.length > 0;
  const recognisedImages =
    configured && someImages
      ? unionImages([
          { proxy: [...configured.proxy], init: [...configured.init], validator: [...configured.validator] },
          images,
        ])
      : undefined;
  const ambientNow = ambient && base.config.ambient.enabled ? { ...base.config.ambient, ...ambient } : undefined;
  if (!recognisedImages && !ambientNow && !controlPlane) return base;
  return compileConfig(
    {
      ...base.config,
      ...(recognisedImages ? { recognisedImages } : {}),
      ...(ambientNow ? { ambient: ambientNow } : {}),
    },
    controlPlane,
  );
}
