/**
 * A redis-server that speaks only TLS and wants a password and a client certificate, for tests:
 * a CA, a server certificate for 127.0.0.1 and a client certificate made with `openssl` in a
 * temporary folder (P-256 keys, two days; {@link makeTestCertificates} makes them for any
 * addresses), then `redis-server --port 0 --tls-port <free> --tls-auth-clients yes --requirepass <password>`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { startRedis, type RedisServer } from './redis.js';

export interface TlsRedis {
  server: RedisServer;
  /** `rediss://127.0.0.1:<tls port>`. */
  url: string;
  password: string;
  /** PEM files: the CA, and the client's certificate and key. */
  files: { ca: string; clientCert: string; clientKey: string };
  close(): Promise<void>;
}

/** PEM files made by {@link makeTestCertificates}. */
export interface TestCertificates {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/**
 * Makes, with `openssl` in `dir`, a CA, a server certificate whose subjectAltName names every one
 * of `addresses` (IP addresses; default 127.0.0.1), and a client certificate (`CN=gatehouse`),
 * all signed by the CA (P-256 keys, two days).
 */
export function makeTestCertificates(dir: string, addresses: readonly string[] = ['127.0.0.1']): TestCertificates {
  const file = (name: string) => join(dir, name);
  const openssl = (...args: string[]) => {
    const run = spawnSync('openssl', args, { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`openssl ${args[0]} failed: ${run.stderr}`);
  };
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl('req', '-x509', ...newKey, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=gatehouse-test-ca');
  writeFileSync(file('server.ext'), `subjectAltName=${addresses.map((address) => `IP:${address}`).join(',')}\n`);
  for (const [name, subject] of [['server', `/CN=${addresses[0]}`], ['client', '/CN=gatehouse']] as const) {
    openssl('req', ...newKey, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', subject);
    const ext = name === 'server' ? ['-extfile', file('server.ext')] : [];
    openssl('x509', '-req', '-in', file(`${name}.csr`), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file(`${name}.pem`), '-days', '2', ...ext);
  }
  return { ca: file('ca.pem'), serverCert: file('server.pem'), serverKey: file('server.key'), clientCert: file('client.pem'), clientKey: file('client.key') };
}

export async function startTlsRedis(): Promise<TlsRedis> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-redis-tls-'));
  const file = (name: string) => join(dir, name);
  makeTestCertificates(dir);
  const password = 'redis-test-password';
  const tlsPort = await freePort();
  const server = await startRedis([
    '--port', '0',
    '--tls-port', String(tlsPort),
    '--tls-cert-file', file('server.pem'),
    '--tls-key-file', file('server.key'),
    '--tls-ca-cert-file', file('ca.pem'),
    '--tls-auth-clients', 'yes',
    '--requirepass', password,
  ]);
  return {
    server,
    url: `rediss://127.0.0.1:${tlsPort}`,
    password,
    files: { ca: file('ca.pem'), clientCert: file('client.pem'), clientKey: file('client.key') },
    async close() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
