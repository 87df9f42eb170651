/**
 * How the fleet's Redis is secured: nothing (plain TCP, no password), or TLS between every process
 * and Redis (mutual: clients show a certificate; replication, the cluster bus and Sentinel's own
 * connections over TLS too) with a password on the data nodes. The same choice gives the data
 * nodes' arguments, the Gatehouse processes' variables, and the test process's own client.
 */
import { readFileSync } from 'node:fs';
import { Redis, type RedisOptions } from 'ioredis';
import type { TestCertificates } from '../../support/redis-tls.js';

/** Plain (undefined) or TLS with these certificates and data-node password. */
export type RedisSecurity = undefined | { certificates: TestCertificates; password: string };

/** The password of the data nodes in the TLS variant. */
export const FLEET_REDIS_PASSWORD = 'fleet-redis-password';

/** redis-server arguments (data node or Sentinel) that make `port` its only listener, TLS when secured. */
export function listenerArgs(security: RedisSecurity, port: number): string[] {
  if (security === undefined) return ['--port', String(port), '--protected-mode', 'no'];
  const { certificates: files } = security;
  return [
    '--port', '0',
    '--tls-port', String(port),
    '--tls-cert-file', files.serverCert,
    '--tls-key-file', files.serverKey,
    '--tls-ca-cert-file', files.ca,
    '--tls-auth-clients', 'yes',
    '--tls-replication', 'yes',
    '--tls-cluster', 'yes',
    '--protected-mode', 'no',
  ];
}

/** A data node's password arguments (its own and the one it gives its primary), when secured. */
export function passwordArgs(security: RedisSecurity): string[] {
  return security === undefined ? [] : ['--requirepass', security.password, '--masterauth', security.password];
}

/** The variables every Gatehouse process gets for the data nodes' TLS and password (none when plain). */
export function gatehouseSecurityEnv(security: RedisSecurity): Record<string, string> {
  if (security === undefined) return {};
  return {
    REDIS_TLS: 'true',
    REDIS_TLS_CA_FILE: security.certificates.ca,
    REDIS_TLS_CERT_FILE: security.certificates.clientCert,
    REDIS_TLS_KEY_FILE: security.certificates.clientKey,
    REDIS_PASSWORD: security.password,
  };
}

/** redis-cli's arguments for TLS and the password (none when plain). */
export function redisCliArgs(security: RedisSecurity): string[] {
  if (security === undefined) return [];
  const files = security.certificates;
  return ['--tls', '--cacert', files.ca, '--cert', files.clientCert, '--key', files.clientKey, '-a', security.password, '--no-auth-warning'];
}

/**
 * Sends one command to the node at `address`:`port` from the test process and resolves with its
 * reply; gives up after 1.5 s (a node cut off never answers). `dataNode` false: a Sentinel (no password).
 */
export async function askNode(security: RedisSecurity, address: string, port: number, args: readonly string[], dataNode = true): Promise<unknown> {
  const options: RedisOptions = {
    host: address,
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: 1_500,
    commandTimeout: 1_500,
    retryStrategy: () => null,
  };
  if (security !== undefined) {
    const files = security.certificates;
    options.tls = { ca: readFileSync(files.ca), cert: readFileSync(files.clientCert), key: readFileSync(files.clientKey) };
    if (dataNode) options.password = security.password;
  }
  const client = new Redis(options);
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.call(args[0]!, ...args.slice(1));
  } finally {
    client.disconnect();
  }
}
