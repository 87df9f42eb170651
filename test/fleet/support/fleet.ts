/**
 * The whole fleet of README "Running a fleet" for one variant (Redis Sentinel or Cluster, plain or TLS): the
 * data centre (three Redis hosts, the admin host, two proxy hosts, a client host), Redis on the
 * first three, Gatehouse on the next three, an administrator signed in through the provider, and
 * a protected service `/app` on the echo upstream, routed on both proxies.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEMO_USERS } from '../../support/identity-provider.js';
import { eventually } from '../../support/eventually.js';
import { makeTestCertificates } from '../../support/redis-tls.js';
import { startClusterDeployment } from './cluster-deployment.js';
import { answers200, startFleetGateway, type FleetGateway, type FleetSession } from './gatehouse-fleet.js';
import { buildDataCentre, type DataCentre, type FleetHost } from './network.js';
import type { RedisDeployment } from './redis-deployment.js';
import { FLEET_REDIS_PASSWORD, type RedisSecurity } from './redis-security.js';
import { startSentinelDeployment } from './sentinel-deployment.js';

/** Which Redis, and whether every process talks to it over TLS. */
export interface FleetVariant {
  redis: 'sentinel' | 'cluster';
  tls: boolean;
}

/** `sentinel`, `cluster+tls`…: the variant in names and printed figures. */
export function fleetLabel(variant: FleetVariant): string {
  return `${variant.redis}${variant.tls ? '+tls' : ''}`;
}

export const HOSTS = ['redis1', 'redis2', 'redis3', 'admin', 'proxy1', 'proxy2', 'client'] as const;

export interface Fleet {
  variant: FleetVariant;
  dc: DataCentre;
  redis: RedisDeployment;
  gateway: FleetGateway;
  /** The administrator (admin@example.com), signed in through the provider. */
  admin: FleetSession;
  /** The protected service `/app`'s id. */
  appId: string;
  /** The hosts by role. */
  redisHosts: readonly FleetHost[];
  client: FleetHost;
  /** A user signed in through the provider (user@example.com), with a session of its own. */
  signInUser(): Promise<FleetSession>;
  close(): Promise<void>;
}

/** Demo credentials of `email`. */
function password(email: string): string {
  return DEMO_USERS.find((user) => user.email === email)!.password;
}

/** Builds and starts the fleet for `variant`; stops what it started when a step fails. */
export async function startFleet(variant: FleetVariant): Promise<Fleet> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-fleet-'));
  const dc = buildDataCentre(HOSTS);
  const stops: Array<() => Promise<unknown>> = [async () => dc.close(), async () => rmSync(dir, { recursive: true, force: true })];
  try {
    const redisHosts = HOSTS.slice(0, 3).map((name) => dc.host(name));
    const security: RedisSecurity = variant.tls ? { certificates: makeTestCertificates(dir, dc.hosts.map((host) => host.address)), password: FLEET_REDIS_PASSWORD } : undefined;
    const start = variant.redis === 'sentinel' ? startSentinelDeployment : startClusterDeployment;
    const redis = await start(redisHosts, security, dir);
    stops.unshift(() => redis.close());
    const gateway = await startFleetGateway(dc, redis, dir);
    stops.unshift(() => gateway.close());
    const admin = await gateway.signIn('admin@example.com', password('admin@example.com'));
    const appId = await gateway.createService(admin, { name: 'App', path: '/app', targetUrl: gateway.upstream.origin, requireAuth: true });
    const user = await gateway.signIn('user@example.com', password('user@example.com'));
    await eventually('/app routed on both proxies', async () => (await Promise.all(gateway.proxies.map((proxy) => answers200(`${proxy.url}/app/ready`, { cookie: user.cookie })))).every(Boolean), 10_000);
    return {
      variant,
      dc,
      redis,
      gateway,
      admin,
      appId,
      redisHosts,
      client: dc.host('client'),
      signInUser: () => gateway.signIn('user@example.com', password('user@example.com')),
      async close() {
        for (const stop of stops) await stop().catch(() => undefined);
      },
    };
  } catch (error) {
    for (const stop of stops) await stop().catch(() => undefined);
    throw error;
  }
}
