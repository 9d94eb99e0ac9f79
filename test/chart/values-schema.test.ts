// charts/meshgate/values.schema.json's properties.config is generated from meshgate's one declaration of its
// configuration (src/config/schema.ts), and its top-level allOf (the keys each mesh takes) from the loader's NOT_USED
// table, by scripts/values-schema.ts: the committed file must be what the script writes now, so a key added to the
// declaration or the table cannot be missing from the chart (or the other way round).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { chartConfigSchema, chartMeshRules, renderValuesSchema, VALUES_SCHEMA } from '../../scripts/values-schema.ts';
import { NOT_USED } from '../../src/config/profile-keys.ts';
import type { Obj } from './helm.ts';
import { MeshgateConfigSchema } from '../../src/config/schema.ts';

const committed = readFileSync(VALUES_SCHEMA, 'utf8');

describe('values.schema.json properties.config', () => {
  it('is up to date (regenerate with: node scripts/values-schema.ts)', () => {
    expect(
      committed === renderValuesSchema(committed),
      'values.schema.json is out of date: run node scripts/values-schema.ts (then node scripts/values-doc.ts) and commit both',
    ).toBe(true);
    expect(JSON.parse(committed).properties.config).toEqual(chartConfigSchema());
    expect(JSON.parse(committed).allOf).toEqual(chartMeshRules());
  });

  it("takes every key of meshgate's config but the two the chart sets, and requires none of them", () => {
    const config = JSON.parse(committed).properties.config;
    expect(Object.keys(config.properties)).toEqual(
      Object.keys(MeshgateConfigSchema.properties).filter((k) => k !== 'mesh' && k !== 'meshNamespace'),
    );
    expect(config.required).toBeUndefined();
    expect(config.properties.proxy.required).toBeUndefined();
    expect(config.properties.proxy.properties.uid).toMatchObject({ type: 'integer', minimum: 1 });
    // Kubernetes objects keep their own required keys: an env entry without a name is no env entry.
    expect(config.properties.proxy.properties.env.items.required).toEqual(['name']);
  });

  // The loader walks the declaration itself (no generated copy, issue 35): it must be plain JSON, or helm would
  // read less than the loader checks (a function, a RegExp or an undefined key is lost when the chart schema is written).
  it('the declaration the loader walks is plain JSON: what helm reads is what the loader checks', () => {
    expect(JSON.parse(JSON.stringify(MeshgateConfigSchema))).toStrictEqual(MeshgateConfigSchema);
  });

  it('changes nothing outside properties.config, and puts a changed declaration back', () => {
    const tampered = committed.replace('"maxVerdictAgeSeconds": {', '"maxVerdictAgeSeconds": {"maximum": 1, ');
    expect(tampered).not.toBe(committed);
    expect(renderValuesSchema(tampered)).toBe(committed);
  });

  it("closes config per mesh where the loader's NOT_USED table says a profile does not take a key", () => {
    const rule = (mesh: string) =>
      (JSON.parse(committed).allOf as Obj[]).find(
        (r) => r.if.properties.mesh.const === mesh && r.then.properties.config.additionalProperties === false,
      )?.then.properties.config;
    expect(NOT_USED['proxy.gid'].linkerd).toBeDefined();
    expect(Object.keys(rule('linkerd').properties.proxy.properties)).toEqual([
      'name',
      'uid',
      'outboundPort',
      'inboundPort',
    ]);
    expect(rule('istio').properties.proxy.properties.gid).toBe(true);
    expect(rule('custom').properties.recognisedImages).toBeUndefined();
    expect(rule('custom').properties.volumes).toBe(true);
    expect(rule('istio').properties.volumes).toBeUndefined();
    const tampered = committed.replace('"inboundPort": true}', '"inboundPort": true, "image": true}');
    expect(tampered).not.toBe(committed);
    expect(renderValuesSchema(tampered)).toBe(committed);
  });
});
