import { sampleSession } from './samples.js';
import { createService } from './api-client.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../shared/config/config.js';
import { gatewayCookieNames } from '../../shared/http/cookies.js';
import { createLogger } from '../../shared/logger.js';
import { openBackends } from '../../shared/backends/open-backends.js';
import type { SessionUser } from '../../shared/types.js';
import { startIdentityProvider, type IdentityProvider, type IdentityProviderOptions } from './identity-provider.js';
import { freePort } from './free-port.js';
import { portWasTaken, startGatehouseProcess, statusOf, untilReady, type GatehouseProcess } from './gatehouse-process.js';
import { startRedis, type RedisServer } from './redis.js';
import type { SignedIn } from './sessions.js';

/** One `npm run start:proxy` process. */
export interface ProxyProcess {
  /** Its public listener, e.g. http://127.0.0.1:PORT. */
  url: string;
  /** Its INTERNAL_PORT (health, readiness, metrics). */
  internalUrl: string;
  process: GatehouseProcess;
}

/** The production topology on one machine: Redis, one admin process, two proxy processes. */
export interface SplitGateway {
  redis: RedisServer;
  idp: IdentityProvider;
  admin: GatehouseProcess;
  adminUrl: string;
  /** The admin process's SQLite file. */
  databasePath: string;
  proxies: [ProxyProcess, ProxyProcess];
  /**
   * A session created straight in Redis (for API calls): its Cookie header, CSRF token and user;
   * with `host`, the Cookie header of a host session on that service host (design.md §4.16).
   */
  signIn(user?: Partial<SessionUser>, options?: { host?: string }): Promise<SignedIn>;
  /**
   * Registers a service through the admin process's API as `admin` (a {@link signIn} result);
   * resolves with its id. Throws unless the API answers 201.
   */
  createService(admin: { cookie: string; csrfToken: string }, fields: Record<string, unknown>): Promise<string>;
  /** The settings every Gatehouse process of this topology was given (Redis, OIDC, ports). */
  env: Record<string, string>;
  /** Starts another proxy process with the same settings (e.g. after stopping one), `env` on top. */
  startProxy(env?: Record<string, string>): Promise<ProxyProcess>;
  close(): Promise<void>;
}

/**
 * Starts redis-server, an OpenID Provider, `start:admin` and two `start:proxy` processes, and waits
 * until each says it is ready (`/readyz`). PUBLIC_URL is the first proxy's origin. `env` is added (with `REDIS_SENTINELS` or `REDIS_CLUSTER_NODES`, the processes use those instead of the helper's Redis)
 * to every Gatehouse process's environment; `provider` to the identity provider's options (its
 * machine clients, say), with `backchannelLogout` registering the first proxy's
 * `/auth/backchannel-logout` as the client's back-channel logout URI.
 */
export async function startSplitGateway(
  env: Record<string, string> = {},
  provider: Omit<Partial<IdentityProviderOptions>, 'clients' | 'port'> & { backchannelLogout?: boolean } = {},
): Promise<SplitGateway> {
  const { backchannelLogout, ...providerOptions } = provider;
  // What is started so far, stopped (newest first) if a later step fails, so a failed start leaves
  // no process behind to keep the test file, and the whole run, from ending.
  const started: Array<() => Promise<unknown>> = [];
  try {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-split-'));
    started.push(async () => rmSync(dir, { recursive: true, force: true }));
    const redis = await startRedis();
    started.push(() => redis.stop());
    const [adminPort, firstPort] = [await freePort(), await freePort()];
    const publicUrl = `http://127.0.0.1:${firstPort}`;
    const idp = await startIdentityProvider({
      clients: [
        {
          clientId: 'gatehouse-split',
          clientSecret: 'split-secret',
          redirectUris: [`${publicUrl}/auth/callback`],
          postLogoutRedirectUris: [`${publicUrl}/`],
          ...(backchannelLogout ? { backchannelLogoutUri: `${publicUrl}/auth/backchannel-logout` } : {}),
        },
      ],
      ...providerOptions,
    });
    started.push(() => idp.close());
    const common = {
      // A Sentinel group or a Cluster given in `env` replaces the helper's own Redis (two modes at once are refused).
      ...(env.REDIS_SENTINELS === undefined && env.REDIS_CLUSTER_NODES === undefined ? { REDIS_URL: redis.url } : {}),
      PUBLIC_URL: publicUrl,
      ADMIN_PORT: String(adminPort),
      ADMIN_INTERNAL_URL: `http://127.0.0.1:${adminPort}`,
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: 'gatehouse-split',
      OIDC_CLIENT_SECRET: 'split-secret',
      ADMIN_EMAILS: 'admin@example.com',
      RATE_LIMIT_GENERAL: '0',
      RATE_LIMIT_AUTH: '0',
      RATE_LIMIT_TOKEN: '0',
      ...env,
    };
    const databasePath = join(dir, 'gateway.db');
    const admin = startGatehouseProcess('admin/process/main.js', { ...common, DATABASE_PATH: databasePath });
    started.push(() => admin.stop());
    const adminUrl = `http://127.0.0.1:${adminPort}`;
    // Generous: on a loaded 2-core machine a process start (module loading, migrations) can take seconds.
    await untilReady(admin, 'the admin process to be ready', async () => (await statusOf(`${adminUrl}/readyz`)) === 200);

    // A port found free can be taken before the process listens on it (an outgoing connection's
    // ephemeral port, another test file's server): such a start is tried again on fresh ports,
    // except for the first proxy, whose port is PUBLIC_URL's.
    const startProxy = async (port?: number, env: Record<string, string> = {}, attempts = 3): Promise<ProxyProcess> => {
      const [publicPort, internalPort] = [port ?? (await freePort()), await freePort()];
      const child = startGatehouseProcess('proxy/process/main.js', { ...common, PORT: String(publicPort), INTERNAL_PORT: String(internalPort), PROXY_WORKERS: '1', ...env });
      const proxy = { url: `http://127.0.0.1:${publicPort}`, internalUrl: `http://127.0.0.1:${internalPort}`, process: child };
      try {
        await untilReady(child, 'a proxy process to be ready', async () => (await statusOf(`${proxy.internalUrl}/readyz`)) === 200);
      } catch (error) {
        await child.stop();
        if (attempts > 1 && portWasTaken(error)) return startProxy(port, env, attempts - 1);
        throw error;
      }
      return proxy;
    };
    const first = await startProxy(firstPort);
    started.push(() => first.process.stop());
    const proxies: [ProxyProcess, ProxyProcess] = [first, await startProxy()];
    started.push(() => proxies[1].process.stop());

    const config = loadConfig({ ...common, LOG_LEVEL: 'silent' });
    const backends = await openBackends(config, createLogger('silent', 'test'));
    return {
      redis,
      idp,
      admin,
      adminUrl,
      databasePath,
      proxies,
      env: common,
      createService: (admin, fields) => createService(adminUrl, admin, fields),
      startProxy: (env) => startProxy(undefined, env),
      async signIn(user = {}, options = {}) {
        const fullUser: SessionUser = { sub: 'admin-sub', name: 'Ada Admin', email: 'admin@example.com', isAdmin: true, ...user };
        const session = sampleSession({ user: fullUser, idToken: null, expiresAt: Date.now() + config.sessionTtlMs });
        const id = await backends.sessions.create(session);
        const value = options.host === undefined ? id : await backends.sessions.link(session.handle, options.host, session.csrfToken);
        return { cookie: `${gatewayCookieNames(config.publicUrl).session}=${value}`, csrfToken: session.csrfToken, user: fullUser };
      },
      async close() {
        await Promise.all([...proxies.map((proxy) => proxy.process.stop()), admin.stop()]);
        await backends.close();
        await idp.close();
        await redis.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    for (const stop of started.reverse()) await stop().catch(() => undefined);
    throw error;
  }
}
