/**
 * The TLS policy (src/server/tls-policy.ts) on the real listener: on TLS 1.2 only ECDHE key exchange with an
 * AEAD cipher, all three TLS 1.3 suites, nothing below 1.2. A client offers one suite at a time, and a refusal
 * must be the server's (a handshake_failure alert), not the client's inability to offer the suite. Probed with
 * node's TLS client over every suite node's OpenSSL knows, and with `openssl s_client` (a second TLS stack;
 * the Debian package openssl, which scripts/bootstrap.mjs installs). The serving key is ECDSA P-256 (meshgate's
 * own certificates); the RSA suites are probed after a hot swap to an RSA certificate made by openssl (what an
 * operator's files or an RSA issuer give), which also shows the policy survives setSecureContext.
 */
import { describe, it, expect, afterEach } from 'vitest';
import tls from 'node:tls';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { issueSelfSigned } from '../../src/tls/self-signed.ts';
import { TLS12_CIPHERS, TLS13_SUITES } from '../../src/server/tls-policy.ts';
import type { RunningServer } from '../../src/server/start.ts';
import { HOST, serve, servedSerial, waitFor } from './helpers.ts';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function started(extra: Parameters<typeof serve>[0] = {}): Promise<RunningServer> {
  const s = await serve(extra);
  cleanups.push(() => s.shutdown());
  return s;
}

type Outcome = { ok: true; cipher: string; version: string } | { ok: false; by: 'server' | 'client'; code: string };

/** One handshake offering only `ciphers` at exactly `version`; SECLEVEL=0 so the client can offer legacy suites. */
function probe(port: number, version: tls.SecureVersion, ciphers: string): Promise<Outcome> {
  return new Promise((resolve) => {
    let socket: tls.TLSSocket;
    try {
      // (A TLS 1.3-only list takes no @SECLEVEL: node would pass it to OpenSSL as an empty TLS 1.2 list.)
      const list = version === 'TLSv1.3' ? ciphers : `${ciphers}:@SECLEVEL=0`;
      socket = tls.connect({
        host: HOST,
        port,
        minVersion: version,
        maxVersion: version,
        ciphers: list,
        rejectUnauthorized: false,
      });
    } catch (err) {
      return resolve({
        ok: false,
        by: 'client',
        code: (err as Error & { code?: string }).code ?? (err as Error).message,
      });
    }
    socket.once('secureConnect', () => {
      resolve({ ok: true, cipher: socket.getCipher().name, version: socket.getProtocol() ?? '?' });
      socket.destroy();
    });
    socket.once('error', (err: Error & { code?: string }) => {
      const code = err.code ?? err.message;
      // An alert received from the server; anything else (no ciphers to offer) is this client's doing.
      resolve({
        ok: false,
        by: /ALERT|WRONG_VERSION|UNSUPPORTED_PROTOCOL|ECONNRESET/.test(code) ? 'server' : 'client',
        code,
      });
    });
  });
}

/** Every TLS 1.2-and-below suite node's OpenSSL names (OpenSSL spells them upper-case). */
const LEGACY_SUITES = tls
  .getCiphers()
  .filter((c) => !c.startsWith('tls_'))
  .map((c) => c.toUpperCase());
const TLS13_ALL = tls
  .getCiphers()
  .filter((c) => c.startsWith('tls_'))
  .map((c) => c.toUpperCase());

/** Probes every TLS 1.2 suite; returns what was accepted and prints the table. */
async function tls12Accepted(port: number, label: string): Promise<string[]> {
  const accepted: string[] = [];
  const refused: string[] = [];
  const unofferable: string[] = [];
  for (const suite of LEGACY_SUITES) {
    const o = await probe(port, 'TLSv1.2', suite);
    if (o.ok) {
      expect(o.cipher).toBe(suite);
      accepted.push(suite);
    } else if (o.by === 'server') refused.push(suite);
    else unofferable.push(`${suite} (${o.code})`);
  }
  console.log(`[cipher-policy] ${label}: TLS 1.2 accepted ${accepted.length}: ${accepted.join(' ')}`);
  console.log(`[cipher-policy] ${label}: TLS 1.2 refused by the server ${refused.length}: ${refused.join(' ')}`);
  console.log(
    `[cipher-policy] ${label}: not offerable by node's client (PSK/SRP need credentials) ${unofferable.length}`,
  );
  // The suites the issue names must have been offered and refused, not skipped.
  for (const weak of [
    'AES128-SHA',
    'AES256-SHA',
    'AES256-SHA256',
    'AES128-SHA256',
    'AES128-GCM-SHA256',
    'DHE-RSA-AES128-GCM-SHA256',
    'DHE-RSA-AES256-SHA',
    'ECDHE-RSA-AES128-SHA',
    'ECDHE-RSA-AES256-SHA384',
    'ECDHE-ECDSA-AES128-SHA',
  ]) {
    expect(refused, weak).toContain(weak);
  }
  return accepted.sort();
}

const RSA_SUITES = TLS12_CIPHERS.filter((c) => c.startsWith('ECDHE-RSA-'))
  .slice()
  .sort();
const ECDSA_SUITES = TLS12_CIPHERS.filter((c) => c.startsWith('ECDHE-ECDSA-'))
  .slice()
  .sort();

describe('TLS 1.2: ECDHE with AEAD only', () => {
  it("an ECDSA-keyed server (meshgate's own certificates) negotiates exactly ECDHE-ECDSA with AES-GCM or ChaCha20-Poly1305", async () => {
    const s = await started();
    expect(ECDSA_SUITES).toEqual([
      'ECDHE-ECDSA-AES128-GCM-SHA256',
      'ECDHE-ECDSA-AES256-GCM-SHA384',
      'ECDHE-ECDSA-CHACHA20-POLY1305',
    ]);
    expect(await tls12Accepted(s.port, 'ECDSA key')).toEqual(ECDSA_SUITES);
  });

  it('after a hot swap to an RSA certificate: exactly ECDHE-RSA with AEAD (the policy survives setSecureContext)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'meshgate-rsa-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const [certFile, keyFile] = [join(dir, 'tls.crt'), join(dir, 'tls.key')];
    const ec = issueSelfSigned(['127.0.0.1'], 24 * 3600_000, Date.now());
    writeFileSync(certFile, ec.cert);
    writeFileSync(keyFile, ec.key);
    const s = await started({ certFile, keyFile });
    const before = await servedSerial(s.port);

    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'rsa.key'),
        '-out',
        join(dir, 'rsa.crt'),
      ],
      { stdio: 'pipe' },
    );
    const rsaSerial = new X509Certificate(readFileSync(join(dir, 'rsa.crt'))).serialNumber.toUpperCase();
    renameSync(join(dir, 'rsa.key'), keyFile);
    renameSync(join(dir, 'rsa.crt'), certFile);
    const ms = await waitFor(
      'the RSA certificate to be served',
      async () => (await servedSerial(s.port)) === rsaSerial,
      10_000,
    );
    console.log(`[cipher-policy] swapped ${before} -> ${rsaSerial} (RSA) in ${ms} ms`);

    expect(await tls12Accepted(s.port, 'RSA key after swap')).toEqual(RSA_SUITES);
    const h13 = await probe(s.port, 'TLSv1.3', 'TLS_AES_256_GCM_SHA384');
    expect(h13).toMatchObject({ ok: true, version: 'TLSv1.3' });
  });
});

describe('TLS versions', () => {
  it('TLS 1.3 negotiates each of its three suites; 1.3 CCM suites (which Go does not implement) are not offered', async () => {
    const s = await started();
    const results: string[] = [];
    for (const suite of TLS13_ALL) {
      const o = await probe(s.port, 'TLSv1.3', suite);
      results.push(`${suite}=${o.ok ? 'accepted' : `refused(${o.code})`}`);
      if (TLS13_SUITES.includes(suite)) expect(o, suite).toMatchObject({ ok: true, cipher: suite, version: 'TLSv1.3' });
      else expect(o, suite).toMatchObject({ ok: false });
    }
    // At least one CCM suite is offered by this client, and it is the server that refuses it.
    expect(TLS13_ALL).toContain('TLS_AES_128_CCM_SHA256');
    expect(await probe(s.port, 'TLSv1.3', 'TLS_AES_128_CCM_SHA256')).toMatchObject({ ok: false, by: 'server' });
    console.log(`[cipher-policy] TLS 1.3: ${results.join(' ')}`);
  });

  it.each(['TLSv1', 'TLSv1.1'] as const)('%s is refused by the server', async (version) => {
    const s = await started();
    const o = await probe(s.port, version, 'ALL');
    expect(o).toMatchObject({ ok: false, by: 'server' });
    console.log(`[cipher-policy] ${version}: refused (${(o as { code: string }).code})`);
  });
});

/**
 * `openssl s_client` at one version with one suite: the negotiated cipher, or 'refused' when the server sent
 * an alert; anything else (the client could not offer the suite) is returned as the client's error text.
 */
async function sClient(port: number, args: string[]): Promise<string> {
  // Asynchronous: the server under test runs in this process and must keep answering.
  const r = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
    const child = execFile(
      'openssl',
      ['s_client', '-connect', `${HOST}:${port}`, '-servername', 'localhost', ...args],
      { timeout: 10_000 },
      (_err, stdout, stderr) => resolve({ stdout, stderr }),
    );
    child.stdin!.end();
  });
  const m = /Cipher is (\S+)/.exec(r.stdout);
  if (m && m[1] !== '(NONE)') return m[1];
  if (/SSL alert number/.test(r.stderr)) return 'refused';
  return `client error: ${r.stderr.trim().split('\n')[0]}`;
}

describe('openssl s_client agrees', () => {
  it('refuses the weak TLS 1.2 suites and TLS 1.1, accepts ECDHE-ECDSA AEAD and every TLS 1.3 suite', async () => {
    const s = await started();
    const version = spawnSync('openssl', ['version'], { encoding: 'utf8' });
    expect(version.status, 'openssl must be installed (Debian package openssl)').toBe(0);
    const table: string[] = [];
    const weak = [
      'AES128-SHA',
      'AES256-SHA',
      'AES256-SHA256',
      'AES128-SHA256',
      'AES128-GCM-SHA256',
      'AES256-GCM-SHA384',
      'DHE-RSA-AES128-GCM-SHA256',
      'DHE-RSA-AES256-SHA256',
      'DHE-RSA-CHACHA20-POLY1305',
      'ECDHE-ECDSA-AES128-SHA',
      'ECDHE-ECDSA-AES256-SHA',
      'ECDHE-ECDSA-AES128-SHA256',
      'ECDHE-ECDSA-AES256-SHA384',
    ];
    for (const suite of weak) {
      const got = await sClient(s.port, ['-tls1_2', '-cipher', `${suite}:@SECLEVEL=0`]);
      table.push(`${suite}=${got}`);
      expect(got, suite).toBe('refused');
    }
    for (const suite of ECDSA_SUITES) {
      const got = await sClient(s.port, ['-tls1_2', '-cipher', suite]);
      table.push(`${suite}=${got}`);
      expect(got, suite).toBe(suite);
    }
    for (const suite of TLS13_SUITES) {
      const got = await sClient(s.port, ['-tls1_3', '-ciphersuites', suite]);
      table.push(`${suite}=${got}`);
      expect(got, suite).toBe(suite);
    }
    const v11 = await sClient(s.port, ['-tls1_1', '-cipher', 'ALL:@SECLEVEL=0']);
    table.push(`TLSv1.1=${v11}`);
    expect(v11).toBe('refused');
    console.log(`[cipher-policy] ${version.stdout.trim()} s_client: ${table.join(' ')}`);
  });
});
