/**
 * Machine clients (design.md §4.7, README "Machine clients") in both topologies: `npm start`'s
 * embedded gateway, and the split one (an admin process and two proxy processes over Redis), each
 * trusting a real identity provider whose machine client gets client-credentials tokens.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { badBearerTokens, tokenFor, type MachineClient } from './support/bearer-token-cases.js';
import { createService } from './support/api-client.js';
import { eventually } from './support/eventually.js';
import { statusOf } from './support/gatehouse-process.js';
import { startGatewayWithProvider } from './support/gateway-with-provider.js';
import type { IdentityProvider, IdentityProviderOptions } from './support/identity-provider.js';
import { signIn } from './support/sessions.js';
import { startSplitGateway } from './support/split-gateway.js';
import { headerValues, startEchoUpstream, type Echo, type EchoUpstream } from './support/upstream.js';

const API = 'https://api.gatehouse.test';
const OTHER_API = 'https://other-api.gatehouse.test';
const ROBOT = { clientId: 'robot', clientSecret: 'robot-secret' };
const ENV = { OIDC_API_AUDIENCES: API };
const PROVIDER: Partial<IdentityProviderOptions> = { machineClients: [ROBOT], apiResources: [API, OTHER_API] };

/** A running gateway in one topology, with the admin's means to register services and read logs. */
interface Topology {
  /** Every public listener: one, or each proxy process's. */
  origins: string[];
  idp: IdentityProvider;
  /** Registers a service as an admin; resolves with its id once every listener routes it. */
  createService(fields: Record<string, unknown>): Promise<string>;
  /** The service's access log through the API, newest first. */
  logs(serviceId: string): Promise<Array<{ path: string; user_id: string | null; status_code: number }>>;
  close(): Promise<void>;
}

async function embedded(): Promise<Topology> {
  const env = await startGatewayWithProvider(ENV, PROVIDER);
  const admin = await signIn(env.gw);
  const base = env.gw.origin;
  return {
    origins: [base],
    idp: env.idp,
    createService: (fields) => createService(base, admin, fields),
    logs: (id) => logsOf(base, id, admin.cookie),
    close: () => env.close(),
  };
}

async function split(): Promise<Topology> {
  const gateway = await startSplitGateway(ENV, PROVIDER);
  const admin = await gateway.signIn();
  const origins = gateway.proxies.map((proxy) => proxy.url);
  return {
    origins,
    idp: gateway.idp,
    async createService(fields) {
      const id = await gateway.createService(admin, fields);
      const routed = async () => (await Promise.all(origins.map((origin) => statusOf(`${origin}${fields.path}/`)))).every((status) => status !== 404);
      await eventually('the route on every proxy', routed);
      return id;
    },
    logs: (id) => logsOf(gateway.adminUrl, id, admin.cookie),
    close: () => gateway.close(),
  };
}

async function logsOf(base: string, serviceId: string, cookie: string) {
  const page = await request(`${base}/api/services/${serviceId}/logs?limit=1000`, { headers: { cookie } });
  return ((await page.body.json()) as { logs: Array<{ path: string; user_id: string | null; status_code: number }> }).logs;
}

async function get(url: string, token: string): Promise<{ status: number; challenge: unknown; body: string }> {
  const response = await request(url, { headers: { authorization: `Bearer ${token}` } });
  return { status: response.statusCode, challenge: response.headers['www-authenticate'], body: await response.body.text() };
}

for (const [mode, start] of [['embedded', embedded], ['split', split]] as const) {
  describe(`machine clients, ${mode} mode`, () => {
    let gateway: Topology;
    let upstream: EchoUpstream;
    let serviceId: string;
    let machine: MachineClient;

    before(async () => {
      upstream = await startEchoUpstream();
      gateway = await start();
      machine = { idp: gateway.idp, client: ROBOT, resource: API };
      serviceId = await gateway.createService({ name: 'Orders API', path: '/orders', targetUrl: upstream.origin, requireAuth: true });
    });
    after(async () => {
      await gateway?.close();
      await upstream?.close();
    });

    it('lets a client-credentials token through every listener as its client id, withheld from the upstream and logged', async () => {
      const token = await tokenFor(machine);
      for (const [i, origin] of gateway.origins.entries()) {
        const response = await get(`${origin}/orders/items?via=${i}`, token);
        assert.equal(response.status, 200, origin);
        const received = JSON.parse(response.body) as Echo;
        assert.deepEqual(headerValues(received, 'x-forwarded-user'), [ROBOT.clientId]);
        assert.deepEqual(headerValues(received, 'authorization'), []);
      }
      const logged = async () => (await gateway.logs(serviceId)).filter((log) => log.path.startsWith('/orders/items?via='));
      await eventually('the requests in the access log', async () => (await logged()).length === gateway.origins.length);
      for (const log of await logged()) assert.deepEqual([log.user_id, log.status_code], [ROBOT.clientId, 200]);
    });

    it('answers 401 invalid_token to expired, wrongly addressed, forged and unsigned tokens', async () => {
      for (const [what, token] of Object.entries(await badBearerTokens(machine, OTHER_API))) {
        for (const origin of gateway.origins) {
          const response = await get(`${origin}/orders/x`, token);
          assert.equal(response.status, 401, `${what} at ${origin}`);
          assert.equal(response.challenge, 'Bearer error="invalid_token"', what);
          assert.deepEqual(JSON.parse(response.body), { error: 'Not authenticated' });
        }
      }
    });

    it('accepts a token of a rotated key once its unknown kid is looked up, on every listener', async () => {
      await gateway.idp.rotateSigningKeys();
      const token = await tokenFor(machine);
      for (const origin of gateway.origins) {
        await eventually(`a rotated key's token at ${origin}`, async () => (await get(`${origin}/orders/x`, token)).status === 200);
      }
    });
  });
}
