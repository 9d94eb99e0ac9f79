/** Golden-file helper: compares with the stored file, or rewrites it when UPDATE_GOLDEN=1. */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { expect } from 'vitest';

export const updating = process.env.UPDATE_GOLDEN === '1';

export function expectGolden(file: URL, actual: string): void {
  if (updating) {
    mkdirSync(dirname(file.pathname), { recursive: true });
    writeFileSync(file, actual);
    return;
  }
  if (!existsSync(file))
    throw new Error(`golden file ${file.pathname} is missing: run with UPDATE_GOLDEN=1 to create it`);
  expect(actual).toBe(readFileSync(file, 'utf8'));
}
