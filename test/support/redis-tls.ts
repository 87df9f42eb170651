/**
 * A redis-server that speaks only TLS and wants a password and a client certificate, for tests:
 * a CA, a server certificate for 127.0.0.1 and a client certificate made with `openssl` in a
 * temporary folder (P-256 keys, two days; test-certificates.ts makes them for any addresses), then `redis-server --port 0 --tls-port <free> --tls-auth-clients yes --requirepass <password>`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { makeTestCertificates } from './test-certificates.js';
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

export { makeTestCertificates, type TestCertificates } from './test-certificates.js';

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
