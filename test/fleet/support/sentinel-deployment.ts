/**
 * Redis Sentinel on three hosts: each runs one redis-server (port 6379; the first host's is the
 * primary, the others its replicas) and one Sentinel (port 26379, quorum 2). Sentinels declare a
 * primary down after {@link DOWN_AFTER_MS} and retry a failover after {@link FAILOVER_TIMEOUT_MS},
 * so a failover takes seconds. Readiness is read from the nodes' own answers, never a sleep.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '../../support/eventually.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import { startOnHost, type HostProcess } from './host-process.js';
import type { FleetHost } from './network.js';
import type { RedisDeployment } from './redis-deployment.js';
import { askNode, gatehouseSecurityEnv, listenerArgs, passwordArgs, type RedisSecurity } from './redis-security.js';

export const SENTINEL_GROUP = 'gatehouse-fleet';
const DATA_PORT = 6379;
const SENTINEL_PORT = 26379;
const DOWN_AFTER_MS = 1_500;
const FAILOVER_TIMEOUT_MS = 6_000;

/** Starts the group on `hosts` (three), in `dir` (Sentinel configuration files); resolves once every Sentinel knows every replica. */
export async function startSentinelDeployment(hosts: readonly FleetHost[], security: RedisSecurity, dir: string): Promise<RedisDeployment> {
  const [first] = hosts;
  const nodes: RedisServer[] = [];
  const sentinels: HostProcess[] = [];
  const close = async () => {
    await Promise.all(sentinels.map((sentinel) => sentinel.stop()));
    await Promise.all(nodes.map((node) => node.kill()));
  };
  try {
    for (const host of hosts) {
      const replicaOf = host === first ? [] : ['--replicaof', first!.address, String(DATA_PORT)];
      nodes.push(await startRedis([...listenerArgs(security, DATA_PORT), ...passwordArgs(security), ...replicaOf], { host: host.address, port: DATA_PORT, prefix: host.prefix }));
    }
    for (const host of hosts) sentinels.push(await startSentinel(host, first!.address, security, dir));
    const deployment = sentinelDeployment(hosts, security, close);
    await deployment.settled();
    return deployment;
  } catch (error) {
    await close();
    throw error;
  }
}

/** One Sentinel on `host`, monitoring the primary at `primary`; resolves once it does. */
async function startSentinel(host: FleetHost, primary: string, security: RedisSecurity, dir: string): Promise<HostProcess> {
  const conf = join(dir, `sentinel-${host.name}.conf`);
  // redis-server's `--name value` options are configuration lines; Sentinel wants its own in a writable file.
  const args = listenerArgs(security, SENTINEL_PORT);
  const listener = args.flatMap((arg, index) => (index % 2 === 0 ? [`${arg.slice(2)} ${args[index + 1]}`] : []));
  writeFileSync(conf, [
    ...listener,
    `bind ${host.address}`,
    `sentinel monitor ${SENTINEL_GROUP} ${primary} ${DATA_PORT} 2`,
    ...(security === undefined ? [] : [`sentinel auth-pass ${SENTINEL_GROUP} ${security.password}`]),
    `sentinel down-after-milliseconds ${SENTINEL_GROUP} ${DOWN_AFTER_MS}`,
    `sentinel failover-timeout ${SENTINEL_GROUP} ${FAILOVER_TIMEOUT_MS}`,
    `sentinel parallel-syncs ${SENTINEL_GROUP} 1`,
    '',
  ].join('\n'));
  const sentinel = startOnHost(host, 'redis-server', [conf, '--sentinel']);
  await sentinel.waitFor('+monitor master');
  return sentinel;
}

/** The deployment's view for scenarios, asking the Sentinels and nodes from the test process. */
function sentinelDeployment(hosts: readonly FleetHost[], security: RedisSecurity, close: () => Promise<void>): RedisDeployment {
  const askSentinel = (host: FleetHost, ...args: string[]) => askNode(security, host.address, SENTINEL_PORT, ['SENTINEL', ...args], false);
  /** The primary's address as the first Sentinel that answers (leaving out `excluded`'s) names it. */
  const primaryAddress = async (excluded?: FleetHost): Promise<string> => {
    for (const host of hosts.filter((candidate) => candidate !== excluded)) {
      const reply = await askSentinel(host, 'GET-MASTER-ADDR-BY-NAME', SENTINEL_GROUP).catch(() => undefined);
      if (Array.isArray(reply)) return String(reply[0]);
    }
    throw new Error('no Sentinel answers');
  };
  const replicasInSync = async (): Promise<boolean> => {
    const primary = await primaryAddress();
    const infos = await Promise.all(hosts.filter((host) => host.address !== primary).map((host) => askNode(security, host.address, DATA_PORT, ['INFO', 'replication'])));
    return infos.every((info) => String(info).includes(`master_host:${primary}`) && String(info).includes('master_link_status:up'));
  };
  const sentinelsAgree = async (): Promise<boolean> => {
    const views = await Promise.all(hosts.map(async (host) => ({
      primary: await askSentinel(host, 'GET-MASTER-ADDR-BY-NAME', SENTINEL_GROUP),
      replicas: (await askSentinel(host, 'REPLICAS', SENTINEL_GROUP)) as string[][],
    })));
    const primaries = new Set(views.map((view) => String((view.primary as string[])[0])));
    // Each replica's fields are a flat name/value list; `flags` must be plain `slave` (not s_down, disconnected).
    const healthy = views.every((view) => view.replicas.length === hosts.length - 1 && view.replicas.every((fields) => fields[fields.indexOf('flags') + 1] === 'slave'));
    return primaries.size === 1 && healthy;
  };
  return {
    kind: 'sentinel',
    hosts,
    env: {
      REDIS_SENTINELS: hosts.map((host) => `${host.address}:${SENTINEL_PORT}`).join(','),
      REDIS_SENTINEL_NAME: SENTINEL_GROUP,
      ...gatehouseSecurityEnv(security),
    },
    async primaryHost() {
      const address = await primaryAddress();
      return hosts.find((host) => host.address === address)!;
    },
    async failedOver(cut) {
      return (await primaryAddress(cut)) !== cut.address;
    },
    async settled(timeoutMs = 60_000) {
      await eventually('every replica in sync and every Sentinel agreeing on the primary and its healthy replicas', async () => (await replicasInSync()) && (await sentinelsAgree()), timeoutMs, 250);
    },
    close,
  };
}
