/**
 * Gatehouse across the data centre: the admin process on its own host (ADMIN_HOST 0.0.0.0, port
 * 8081), two proxy processes on two more (public port 8080, INTERNAL_PORT 9090), all over the
 * given Redis deployment; the OpenID Provider and an echo upstream in the test process, on the
 * bridge's address. PUBLIC_URL is the first proxy's origin (where sign-ins start and return).
 */
import { join } from 'node:path';
import { browse, CookieJar, loginThroughProvider } from '../../support/browserless-login.js';
import { apiClient } from '../../support/api-client.js';
import { eventually } from '../../support/eventually.js';
import { startGatehouseProcess, statusOf, type GatehouseProcess } from '../../support/gatehouse-process.js';
import { startIdentityProvider, type IdentityProvider } from '../../support/identity-provider.js';
import { startEchoUpstream, type EchoUpstream } from '../../support/upstream.js';
import type { DataCentre, FleetHost } from './network.js';
import type { RedisDeployment } from './redis-deployment.js';

const ADMIN_PORT = 8081;
const PUBLIC_PORT = 8080;
const INTERNAL_PORT = 9090;
/** A process start on a loaded 2-core machine, Redis found through Sentinels or a Cluster. */
const START_TIMEOUT_MS = 60_000;

/** One proxy process on its host. */
export interface FleetProxy {
  host: FleetHost;
  /** `http://<host>:8080`. */
  url: string;
  /** `http://<host>:9090`: /healthz, /readyz, /metrics. */
  internalUrl: string;
  process: GatehouseProcess;
}

/** A user signed in through the provider: the Cookie header for the proxies, its CSRF token, and the jar (for a logout). */
export interface FleetSession {
  cookie: string;
  csrfToken: string;
  jar: CookieJar;
}

export interface FleetGateway {
  idp: IdentityProvider;
  upstream: EchoUpstream;
  admin: GatehouseProcess;
  adminHost: FleetHost;
  /** `http://<admin host>:8081`. */
  adminUrl: string;
  proxies: [FleetProxy, FleetProxy];
  /** Signs `email` in at the provider through the first proxy (as a browser would, without one). */
  signIn(email: string, password: string): Promise<FleetSession>;
  /** Signs `session` out through `proxy` (`/auth/logout`, then the provider's end-session page). */
  signOut(session: FleetSession, proxy: FleetProxy): Promise<void>;
  /** Registers a service through the admin API as `admin`; resolves with its id. */
  createService(admin: FleetSession, fields: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

/** Whether `url` answers 200 now (false for no answer). */
export async function answers200(url: string, headers: Record<string, string> = {}): Promise<boolean> {
  return (await statusOf(url, headers).catch(() => 0)) === 200;
}

/**
 * Starts the admin process on `dc`'s `admin` host and proxies on `proxy1` and `proxy2`, over
 * `redis`, with the SQLite file in `dir`; resolves once each says it is ready.
 */
export async function startFleetGateway(dc: DataCentre, redis: RedisDeployment, dir: string): Promise<FleetGateway> {
  const stops: Array<() => Promise<unknown>> = [];
  try {
    const [adminHost, first, second] = [dc.host('admin'), dc.host('proxy1'), dc.host('proxy2')];
    const publicUrl = `http://${first.address}:${PUBLIC_PORT}`;
    const upstream = await startEchoUpstream({ host: dc.gateway });
    stops.push(() => upstream.close());
    const idp = await startIdentityProvider({
      host: dc.gateway,
      // Plain http between different sites: the login cookie comes back on a redirect (Lax), not on a cross-site form POST.
      responseModes: 'query-only',
      clients: [{ clientId: 'gatehouse-fleet', clientSecret: 'fleet-secret', redirectUris: [`${publicUrl}/auth/callback`], postLogoutRedirectUris: [`${publicUrl}/`] }],
    });
    stops.push(() => idp.close());
    const adminUrl = `http://${adminHost.address}:${ADMIN_PORT}`;
    const common = {
      ...redis.env,
      PUBLIC_URL: publicUrl,
      ADMIN_PORT: String(ADMIN_PORT),
      ADMIN_INTERNAL_URL: adminUrl,
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: 'gatehouse-fleet',
      OIDC_CLIENT_SECRET: 'fleet-secret',
      ADMIN_EMAILS: 'admin@example.com',
      RATE_LIMIT_GENERAL: '0',
      RATE_LIMIT_AUTH: '0',
    };
    const admin = startGatehouseProcess('admin/process/main.js', { ...common, ADMIN_HOST: '0.0.0.0', DATABASE_PATH: join(dir, 'gateway.db') }, { prefix: adminHost.prefix });
    stops.push(() => admin.stop());
    await eventually(`the admin process to be ready\n${admin.output()}`, () => answers200(`${adminUrl}/readyz`), START_TIMEOUT_MS, 100);
    const proxies: FleetProxy[] = [];
    for (const host of [first, second]) {
      const child = startGatehouseProcess('proxy/process/main.js', { ...common, PORT: String(PUBLIC_PORT), INTERNAL_PORT: String(INTERNAL_PORT), PROXY_WORKERS: '1' }, { prefix: host.prefix });
      stops.push(() => child.stop());
      const proxy = { host, url: `http://${host.address}:${PUBLIC_PORT}`, internalUrl: `http://${host.address}:${INTERNAL_PORT}`, process: child };
      await eventually(`the proxy on ${host.name} to be ready`, () => answers200(`${proxy.internalUrl}/readyz`), START_TIMEOUT_MS, 100).catch((error: Error) => {
        throw new Error(`${error.message}\n${child.output()}`);
      });
      proxies.push(proxy);
    }
    return fleetGateway({ idp, upstream, admin, adminHost, adminUrl, proxies: proxies as [FleetProxy, FleetProxy] }, stops);
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    throw error;
  }
}

/** The started parts with the operations scenarios use. */
function fleetGateway(parts: Pick<FleetGateway, 'idp' | 'upstream' | 'admin' | 'adminHost' | 'adminUrl' | 'proxies'>, stops: Array<() => Promise<unknown>>): FleetGateway {
  const [first] = parts.proxies;
  return {
    ...parts,
    async signIn(email, password) {
      const jar = new CookieJar();
      const login = await loginThroughProvider({ loginUrl: `${first.url}/auth/login`, email, password, jar });
      if (login.status !== 302) throw new Error(`sign-in of ${email} ended with ${login.status} at ${login.url}: ${login.body.replace(/<style>[^]*?<\/style>/, "").replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").slice(0, 600)}`);
      const cookie = jar.header(`${first.url}/`);
      const csrf = await apiClient(first.url)('GET', '/auth/csrf-token', { as: { cookie, csrfToken: '' } });
      if (csrf.status !== 200) throw new Error(`csrf token: ${csrf.status} ${csrf.text}`);
      return { cookie, csrfToken: csrf.json.csrfToken as string, jar };
    },
    async signOut(session, proxy) {
      // The jar keeps cookies per host: the gateway's go to whichever proxy signs out, the provider's stay its own.
      const jar = new CookieJar();
      for (const stored of session.jar.all()) {
        const url = stored.domain === first.host.address ? `${proxy.url}/` : `http://${stored.domain}/`;
        jar.store(`${stored.name}=${stored.value}; Path=${stored.path}`, url);
      }
      // The provider sends the browser back to PUBLIC_URL (the first proxy): the walk ends there.
      const done = await browse(`${proxy.url}/auth/logout`, jar, undefined, new URL(first.url).origin);
      if (done.status >= 400) throw new Error(`sign-out through ${proxy.host.name} ended with ${done.status}`);
    },
    async createService(admin, fields) {
      const created = await apiClient(parts.adminUrl)('POST', '/api/services', { as: admin, json: fields });
      if (created.status !== 201) throw new Error(`creating a service: ${created.status} ${created.text}`);
      return created.json.id as string;
    },
    async close() {
      for (const stop of stops.reverse()) await stop().catch(() => undefined);
    },
  };
}
