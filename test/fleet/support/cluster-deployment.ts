/**
 * Redis Cluster on three hosts, two nodes each (ports 7000 and 7001): three primaries and three
 * replicas, made with `redis-cli --cluster create … --cluster-replicas 1 --cluster-yes`, which
 * puts each replica on another host than its primary. A node is declared failed after
 * {@link NODE_TIMEOUT_MS}, so a failover takes seconds. Readiness is read from the nodes' answers.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { eventually } from '../../support/eventually.js';
import { startRedis, type RedisServer } from '../../support/redis.js';
import type { FleetHost } from './network.js';
import type { RedisDeployment } from './redis-deployment.js';
import { askNode, gatehouseSecurityEnv, listenerArgs, passwordArgs, redisCliArgs, type RedisSecurity } from './redis-security.js';

const PORTS = [7000, 7001] as const;
const NODE_TIMEOUT_MS = 2_000;

/** One node: where it runs. */
interface ClusterNode {
  host: FleetHost;
  port: number;
  server: RedisServer;
}

/** Starts the six nodes on `hosts` (three), joins them into a cluster, and resolves once every node says it is whole. */
export async function startClusterDeployment(hosts: readonly FleetHost[], security: RedisSecurity, dir: string): Promise<RedisDeployment> {
  const nodes: ClusterNode[] = [];
  const close = async () => void (await Promise.all(nodes.map((node) => node.server.kill())));
  try {
    for (const port of PORTS) {
      for (const host of hosts) {
        const args = [
          ...listenerArgs(security, port),
          ...passwordArgs(security),
          '--cluster-enabled', 'yes',
          '--cluster-config-file', join(dir, `nodes-${host.name}-${port}.conf`),
          '--cluster-node-timeout', String(NODE_TIMEOUT_MS),
        ];
        nodes.push({ host, port, server: await startRedis(args, { host: host.address, port, prefix: host.prefix }) });
      }
    }
    await createCluster(nodes, security);
    const deployment = clusterDeployment(hosts, nodes, security, close);
    await deployment.settled();
    return deployment;
  } catch (error) {
    await close();
    throw error;
  }
}

/** `redis-cli --cluster create` over every node (the first three become primaries). */
async function createCluster(nodes: readonly ClusterNode[], security: RedisSecurity): Promise<void> {
  const addresses = nodes.map((node) => `${node.host.address}:${node.port}`);
  const cli = spawn('redis-cli', [...redisCliArgs(security), '--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  cli.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  cli.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const [code] = await once(cli, 'exit');
  if (code !== 0 || !output.includes('All 16384 slots covered')) throw new Error(`redis-cli --cluster create failed (${code}):\n${output}`);
}

/** `CLUSTER NODES` lines as seen by `node`: address, flags, and whether it serves slots. */
async function clusterNodes(security: RedisSecurity, node: { host: FleetHost; port: number }): Promise<Array<{ address: string; flags: string[]; slots: boolean; link: string }>> {
  const text = String(await askNode(security, node.host.address, node.port, ['CLUSTER', 'NODES']));
  return text.trim().split('\n').map((line) => {
    const fields = line.split(' ');
    return { address: fields[1]!.split('@')[0]!, flags: fields[2]!.split(','), link: fields[7]!, slots: fields.length > 8 };
  });
}

/** The deployment's view for scenarios, asking the nodes from the test process. */
function clusterDeployment(hosts: readonly FleetHost[], nodes: readonly ClusterNode[], security: RedisSecurity, close: () => Promise<void>): RedisDeployment {
  const whole = async (node: ClusterNode): Promise<boolean> => {
    const info = String(await askNode(security, node.host.address, node.port, ['CLUSTER', 'INFO']));
    const view = await clusterNodes(security, node);
    const replication = String(await askNode(security, node.host.address, node.port, ['INFO', 'replication']));
    const linkUp = replication.includes('role:master') || replication.includes('master_link_status:up');
    return info.includes('cluster_state:ok') && view.length === nodes.length && view.every((line) => line.link === 'connected' && !line.flags.some((flag) => flag.includes('fail'))) && linkUp;
  };
  return {
    kind: 'cluster',
    hosts,
    env: {
      REDIS_CLUSTER_NODES: nodes.filter((node) => node.port === PORTS[0]).map((node) => `${node.host.address}:${node.port}`).join(','),
      ...gatehouseSecurityEnv(security),
    },
    async primaryHost() {
      // The primary holding most keys: Gatehouse's hash tags put its keys together, on one primary.
      const view = await clusterNodes(security, nodes[0]!);
      const primaries = nodes.filter((node) => view.some((line) => line.address === `${node.host.address}:${node.port}` && line.flags.includes('master') && line.slots));
      const sizes = await Promise.all(primaries.map(async (node) => Number(await askNode(security, node.host.address, node.port, ['DBSIZE']))));
      return primaries[sizes.indexOf(Math.max(...sizes))]!.host;
    },
    async failedOver(cut) {
      const witness = nodes.find((node) => node.host !== cut)!;
      const info = String(await askNode(security, witness.host.address, witness.port, ['CLUSTER', 'INFO']));
      const view = await clusterNodes(security, witness);
      const servingOnCut = view.some((line) => line.address.startsWith(`${cut.address}:`) && line.flags.includes('master') && !line.flags.some((flag) => flag.includes('fail')) && line.slots);
      return info.includes('cluster_state:ok') && !servingOnCut;
    },
    async settled(timeoutMs = 60_000) {
      await eventually('every cluster node to see all six nodes connected, slots covered, replicas in sync', async () => (await Promise.all(nodes.map(whole))).every(Boolean), timeoutMs, 250);
    },
    close,
  };
}
