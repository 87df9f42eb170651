/**
 * A gateway for the tests of one sign-in across hosts (design.md §4.16), in either topology, with a
 * real identity provider and an echo upstream behind three protected services side by side:
 * `app` on `app.localhost` (path `/`, target `<upstream>/app`), `wild` on `*.apps.localhost`
 * (path `/`, target `<upstream>/wild`) and the path service `/plain` (target `<upstream>/plain`).
 * The provider's client has back-channel logout (to PUBLIC_URL's `/auth/backchannel-logout`).
 * This process's HTTP client reaches `*.localhost` on loopback, spread over every listener
 * (localhost-network.ts), so a browser's sign-in crosses the proxy processes of split mode.
 */
import { apiClient, createService, type ApiCall } from './api-client.js';
import { eventually } from './eventually.js';
import { freePort } from './free-port.js';
import { startGatewayWithProvider } from './gateway-with-provider.js';
import type { DemoUser, IdentityProvider } from './identity-provider.js';
import { installLocalhostNetwork, type LocalhostNetwork } from './localhost-network.js';
import { rawRequest } from './raw-connection.js';
import { signIn, type SignedIn } from './sessions.js';
import { startSplitGateway } from './split-gateway.js';
import { startEchoUpstream, type EchoUpstream } from './upstream.js';

export type Topology = 'embedded' | 'split';

/** A running gateway of {@link startHostSignInGateway}. */
export interface HostSignInGateway {
  topology: Topology;
  /** PUBLIC_URL's origin, the sign-in origin: `http://localhost:PORT` (embedded) or `http://127.0.0.1:PORT` (split). */
  publicUrl: string;
  /** PUBLIC_URL's port, on which service hosts are reached too. */
  port: number;
  /** Every public listener's port: one, or each proxy process's. */
  listenerPorts: number[];
  /** `http://<host>:<port>`: a service host's origin. */
  hostOrigin(host: string): string;
  idp: IdentityProvider;
  upstream: EchoUpstream;
  /** An administrator's session (made in the session store) for {@link call}. */
  admin: SignedIn;
  /** The admin API's client (the public origin embedded, ADMIN_URL with `adminOrigin`, the admin process's port split). */
  call: ApiCall;
  /** ADMIN_URL's origin (`http://admin.localhost:ADMIN_PORT`) with `adminOrigin`. */
  adminUrl: string | undefined;
  /** The SQLite file of the admin plane (host_handoff_codes lives there). */
  databasePath: string;
  network: LocalhostNetwork;
  close(): Promise<void>;
}

/** What differs between the topologies once started. */
interface Started {
  publicUrl: string;
  listenerPorts: number[];
  idp: IdentityProvider;
  admin: SignedIn;
  apiUrl: string;
  adminUrl?: string;
  databasePath: string;
  close(): Promise<void>;
}

/** How to start it beyond the topology. */
export interface HostSignInOptions {
  /** Embedded only: the console and API on ADMIN_URL `http://admin.localhost:<free ADMIN_PORT>`. */
  adminOrigin?: boolean;
  /** The provider's `acr` values (identity-provider.ts `acrValues`), for step-up; default none. */
  acrValues?: string[];
}

/**
 * The embedded gateway at `http://localhost:PORT` (the provider at 127.0.0.1 is another site, as a
 * real one is), with ADMIN_URL at `http://admin.localhost:ADMIN_PORT` when `adminOrigin`.
 */
async function embedded(users: DemoUser[], adminOrigin: boolean, acrValues: string[] | undefined): Promise<Started> {
  const adminPort = adminOrigin ? await freePort() : undefined;
  const adminUrl = adminPort === undefined ? undefined : `http://admin.localhost:${adminPort}`;
  const adminEnv: Record<string, string> = adminUrl === undefined ? {} : { ADMIN_PORT: String(adminPort), ADMIN_URL: adminUrl };
  const env = await startGatewayWithProvider(adminEnv, { users, backchannelLogout: true, ...(acrValues && { acrValues }) }, 'localhost');
  return {
    publicUrl: env.gw.gateway.config.publicUrl.origin,
    listenerPorts: [env.gw.gateway.port],
    idp: env.idp,
    admin: await signIn(env.gw, {}, adminUrl === undefined ? 'public' : 'admin'),
    apiUrl: adminUrl ?? env.gw.origin,
    ...(adminUrl === undefined ? {} : { adminUrl }),
    databasePath: env.gw.databasePath,
    close: () => env.close(),
  };
}

/** Redis, an admin process and two proxy processes; PUBLIC_URL is the first proxy's origin. */
async function split(users: DemoUser[], acrValues: string[] | undefined): Promise<Started> {
  const gateway = await startSplitGateway({}, { users, backchannelLogout: true, ...(acrValues && { acrValues }) });
  return {
    publicUrl: gateway.env.PUBLIC_URL!,
    listenerPorts: gateway.proxies.map((proxy) => Number(new URL(proxy.url).port)),
    idp: gateway.idp,
    admin: await gateway.signIn(),
    apiUrl: gateway.adminUrl,
    databasePath: gateway.databasePath,
    close: () => gateway.close(),
  };
}

/** The status of `GET <target>` with `Host: <host>` asking for JSON on the listener at `port`. */
async function statusOn(port: number, target: string, host: string): Promise<number> {
  const head = [`GET ${target} HTTP/1.1`, `Host: ${host}`, 'Accept: application/json', 'Connection: close', '', ''];
  return (await rawRequest(port, head.join('\r\n'))).status;
}

/**
 * Starts the gateway in `topology` (with `options`) and a provider knowing `users`, registers the three services
 * through the admin API and waits until every listener routes them (401 without a session).
 * @throws when a part fails to start (what started is stopped first).
 */
export async function startHostSignInGateway(topology: Topology, users: DemoUser[], options: HostSignInOptions = {}): Promise<HostSignInGateway> {
  const upstream = await startEchoUpstream();
  let started: Started;
  try {
    started = await (topology === 'split' ? split(users, options.acrValues) : embedded(users, options.adminOrigin === true, options.acrValues));
  } catch (error) {
    await upstream.close();
    throw error;
  }
  const port = Number(new URL(started.publicUrl).port);
  const network = installLocalhostNetwork(port, started.listenerPorts);
  const gateway: HostSignInGateway = {
    topology,
    publicUrl: started.publicUrl,
    port,
    listenerPorts: started.listenerPorts,
    hostOrigin: (host) => `http://${host}:${port}`,
    idp: started.idp,
    upstream,
    admin: started.admin,
    call: apiClient(started.apiUrl),
    adminUrl: started.adminUrl,
    databasePath: started.databasePath,
    network,
    async close() {
      await network.restore();
      await started.close();
      await upstream.close();
    },
  };
  try {
    const add = (fields: Record<string, unknown>) => createService(started.apiUrl, started.admin, { requireAuth: true, ...fields });
    await add({ name: 'App', path: '/', hosts: ['app.localhost'], targetUrl: `${upstream.origin}/app` });
    await add({ name: 'Wild', path: '/', hosts: ['*.apps.localhost'], targetUrl: `${upstream.origin}/wild` });
    await add({ name: 'Plain', path: '/plain', targetUrl: `${upstream.origin}/plain` });
    for (const listener of started.listenerPorts) {
      for (const [target, host] of [['/x', 'app.localhost'], ['/x', 'x.apps.localhost'], ['/plain/x', '127.0.0.1']] as const) {
        await eventually(`${host}${target} routed on port ${listener}`, async () => (await statusOn(listener, target, host)) === 401, 20_000);
      }
    }
  } catch (error) {
    await gateway.close();
    throw error;
  }
  return gateway;
}
