/**
 * Redis as production runs it on one machine, for tests: a primary, replicas of it, and Redis
 * Sentinels monitoring the group (`redis-server <conf> --sentinel`), all on free loopback ports,
 * in memory. Sentinels declare the primary down after 1 s (`down-after-milliseconds`), so a
 * failover takes a few seconds. Readiness is read from the processes' own answers, never a sleep.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { eventually } from './eventually.js';
import { freePort } from './free-port.js';
import { startRedis, type RedisServer } from './redis.js';

export const SENTINEL_GROUP = 'gatehouse-test';

export interface SentinelGroup {
  primary: RedisServer;
  replicas: RedisServer[];
  /** `127.0.0.1:port,…`, as REDIS_SENTINELS takes them. */
  sentinels: string;
  /** The port the Sentinels name as the group's primary now. */
  primaryPort(): Promise<number>;
  close(): Promise<void>;
}

/** Starts the group and resolves once every Sentinel knows every replica (so a failover can pick one). */
export async function startSentinelGroup(replicaCount = 1, sentinelCount = 2): Promise<SentinelGroup> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-sentinel-'));
  const primary = await startRedis();
  const replicas = await Promise.all(Array.from({ length: replicaCount }, () => startRedis(['--replicaof', '127.0.0.1', String(primary.port)])));
  const sentinels: Array<{ port: number; child: ChildProcess }> = [];
  for (let n = 0; n < sentinelCount; n++) sentinels.push(await startSentinel(dir, primary.port, Math.min(sentinelCount, 2)));
  const ask = async <T>(port: number, ...args: string[]): Promise<T> => {
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
    client.on('error', () => {});
    try {
      await client.connect();
      return (await client.call('SENTINEL', ...args)) as T;
    } finally {
      client.disconnect();
    }
  };
  // A replica that has not finished its first sync would be promoted empty: wait for its link.
  await eventually('every replica in sync with the primary', async () => {
    const links = await Promise.all(replicas.map((replica) => info(replica.port, 'replication')));
    return links.every((text) => text.includes('master_link_status:up'));
  }, 30_000, 100);
  // A Sentinel learns the replicas from the primary's INFO, every 10 s.
  await eventually('every Sentinel to know every replica', async () => {
    const known = await Promise.all(sentinels.map((sentinel) => ask<unknown[]>(sentinel.port, 'REPLICAS', SENTINEL_GROUP)));
    return known.every((list) => list.length === replicaCount);
  }, 30_000, 200);
  return {
    primary,
    replicas,
    sentinels: sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(','),
    async primaryPort() {
      const [, port] = await ask<[string, string]>(sentinels[0]!.port, 'GET-MASTER-ADDR-BY-NAME', SENTINEL_GROUP);
      return Number(port);
    },
    async close() {
      await Promise.all(sentinels.map(async ({ child }) => {
        if (child.exitCode === null && child.signalCode === null) {
          const exited = once(child, 'exit');
          child.kill('SIGTERM');
          await exited;
        }
      }));
      await Promise.all([primary, ...replicas].map((server) => server.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `INFO <section>` of the Redis at `port`. */
async function info(port: number, section: string): Promise<string> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  try {
    await client.connect();
    return await client.info(section);
  } finally {
    client.disconnect();
  }
}

/** One Sentinel on a free port with its own (writable) configuration file; resolves once it monitors the group. */
async function startSentinel(dir: string, primaryPort: number, quorum: number): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const conf = join(dir, `sentinel-${port}.conf`);
  writeFileSync(
    conf,
    [
      `port ${port}`,
      'bind 127.0.0.1',
      `sentinel monitor ${SENTINEL_GROUP} 127.0.0.1 ${primaryPort} ${quorum}`,
      `sentinel down-after-milliseconds ${SENTINEL_GROUP} 1000`,
      `sentinel failover-timeout ${SENTINEL_GROUP} 5000`,
      `sentinel parallel-syncs ${SENTINEL_GROUP} 1`,
      '',
    ].join('\n'),
  );
  const child = spawn('redis-server', [conf, '--sentinel'], { stdio: ['ignore', 'pipe', 'pipe'] });
  process.on('exit', () => child.kill('SIGKILL'));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('+monitor master')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`sentinel on ${port} exited (${code}):\n${output}`)));
  });
  child.stdout!.resume();
  return { port, child };
}
