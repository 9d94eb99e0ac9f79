/**
 * A SecretStore in memory, with the API's optimistic concurrency (a write names the resourceVersion it read
 * and loses to any write in between). The self-signed source keeps its state here, so a lone process rotates
 * its CA by the same steps as replicas sharing a Secret; tests share one between several sources.
 */
import type { SecretData } from './trust-state.ts';
import type { SecretStore } from './secret-source.ts';

export class MemorySecretStore implements SecretStore {
  #stored?: { data: SecretData; resourceVersion: string };
  #version = 0;

  async read(): Promise<{ data: SecretData; resourceVersion: string } | undefined> {
    return this.#stored && { data: { ...this.#stored.data }, resourceVersion: this.#stored.resourceVersion };
  }

  async create(data: SecretData): Promise<string | undefined> {
    if (this.#stored) return undefined;
    return this.#write(data);
  }

  async replace(data: SecretData, resourceVersion: string): Promise<string | undefined> {
    if (this.#stored?.resourceVersion !== resourceVersion) return undefined;
    return this.#write(data);
  }

  /** What is stored now (tests look at it). */
  peek(): { data: SecretData; resourceVersion: string } | undefined {
    return this.#stored;
  }

  #write(data: SecretData): string {
    this.#stored = { data: { ...data }, resourceVersion: String(++this.#version) };
    return this.#stored.resourceVersion;
  }
}
