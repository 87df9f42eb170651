/**
 * A real Redis Cluster for tests, on free loopback ports, in memory: `redis-server
 * --cluster-enabled yes` per node, joined by `redis-cli --cluster create` (primaries first, each
 * given `replicasPerPrimary` replicas). Nodes declare a silent peer failed after
 * `cluster-node-timeout` (1 s here), so a replica takes over a dead primary within a few seconds.
 * Readiness is read from the nodes' own answers (CLUSTER INFO, replication links up), never a sleep.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach } from 'node:test';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import type { RedisTarget } from '../../shared/config/redis-target.js';
import { eventually } from './eventually.js';
import { startRedis, type RedisServer } from './redis.js';
import { closeTracked } from './tracked.js';

export interface RedisClusterServers {
  /** Every node, primaries first (as created; a failover changes who is primary). */
  nodes: RedisServer[];
  /** `127.0.0.1:port,…` of every node, as REDIS_CLUSTER_NODES takes them. */
  seeds: string;
  /** The target the gateway's code takes (no credentials, no TLS). */
  target: RedisTarget;
  /** The node that serves `key`'s slot now (its primary). */
  primaryOf(key: string): Promise<RedisServer>;
  /** FLUSHALL on every primary. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

const NODE_TIMEOUT_MS = 1_000;

/** Starts the nodes, creates the cluster and resolves once every node says `cluster_state:ok`. */
export async function startRedisCluster(primaries = 3, replicasPerPrimary = 0): Promise<RedisClusterServers> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-cluster-'));
  const nodes: RedisServer[] = [];
  for (let n = 0; n < primaries * (1 + replicasPerPrimary); n++) {
    // A replica's first sync starts at once (not after the diskless sync's 5 s default delay).
    const settings = ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${n}.conf`), '--cluster-node-timeout', String(NODE_TIMEOUT_MS), '--repl-diskless-sync-delay', '0'];
    nodes.push(await startRedis(settings));
  }
  const addresses = nodes.map((node) => `127.0.0.1:${node.port}`);
  await promisify(execFile)('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', String(replicasPerPrimary), '--cluster-yes']);
  await eventually('every cluster node to see the cluster whole', async () => {
    const states = await Promise.all(nodes.map((node) => ask(node.port, (client) => client.cluster('INFO'))));
    return states.every((text) => String(text).includes('cluster_state:ok'));
  }, 30_000, 100);
  // A replica that has not finished its first sync cannot take over (its data counts as too old).
  await eventually('every replica in sync with its primary', async () => {
    const links = await Promise.all(nodes.map((node) => ask(node.port, (client) => client.info('replication'))));
    return links.every((text) => text.includes('role:master') || text.includes('master_link_status:up'));
  }, 30_000, 100);
  const seeds = addresses.join(',');
  return {
    nodes,
    seeds,
    target: { kind: 'cluster', nodes: nodes.map((node) => ({ host: '127.0.0.1', port: node.port })), username: undefined, password: undefined, tls: undefined },
    async primaryOf(key) {
      const slot = await ask(nodes[0]!.port, (client) => client.cluster('KEYSLOT', key));
      const ranges = await ask(nodes[0]!.port, (client) => client.cluster('SLOTS'));
      const [, , primary] = ranges.find(([from, to]) => slot >= from && slot <= to)!;
      return nodes.find((node) => node.port === primary![1])!;
    },
    async flush() {
      await Promise.all(nodes.map((node) => ask(node.port, async (client) => {
        if ((await client.role())[0] === 'master') await client.flushall();
      }).catch(() => undefined)));
    },
    async close() {
      await Promise.all(nodes.map((node) => node.stop()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `work` on a short-lived plain connection to the node at `port`. */
async function ask<T>(port: number, work: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 });
  client.on('error', () => {});
  try {
    await client.connect();
    return await work(client);
  } finally {
    client.disconnect();
  }
}

/**
 * Registers what a test file running against a Cluster needs: three primaries for the file, every
 * primary flushed before each test, tracked resources closed after each.
 */
export function redisClusterForFile(): { readonly cluster: RedisClusterServers } {
  const state = {} as { cluster: RedisClusterServers };
  before(async () => {
    state.cluster = await startRedisCluster();
  });
  after(async () => {
    await closeTracked();
    await state.cluster.close();
  });
  beforeEach(() => state.cluster.flush());
  afterEach(closeTracked);
  return state;
}
