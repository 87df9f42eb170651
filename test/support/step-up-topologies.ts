/**
 * A gateway (embedded, or split: Redis, an admin process, two proxies) with the real identity
 * provider set up for step-up sign-in (design.md §4.18): `acr` values `pwd` (every sign-in's by
 * default) and `mfa`, machine clients whose tokens carry an `acr` of each, an echo upstream, and an
 * admin session for the API. Shared by the step-up tests of both topologies.
 */
import { request } from 'undici';
import { openBackends } from '../../shared/backends/open-backends.js';
import { loadConfig } from '../../shared/config/config.js';
import { createLogger } from '../../shared/logger.js';
import type { Session } from '../../shared/types.js';
import { createService } from './api-client.js';
import { startGatewayWithProvider } from './gateway-with-provider.js';
import type { IdentityProvider, IdentityProviderMachineClient } from './identity-provider.js';
import { clientCredentialsToken } from './machine-client.js';
import { signIn, type SignedIn } from './sessions.js';
import { startSplitGateway } from './split-gateway.js';
import { startEchoUpstream, type EchoUpstream } from './upstream.js';

/** The API the machine clients' tokens are for (OIDC_API_AUDIENCES). */
export const STEP_UP_API = 'https://api.step-up.test';
/** Machine clients whose tokens carry `acr` `mfa` (with a recent `auth_time`) and `pwd`. */
export const STRONG_CLIENT: IdentityProviderMachineClient = { clientId: 'strong-robot', clientSecret: 'strong-secret', claims: { acr: 'mfa', auth_time: Math.floor(Date.now() / 1000) } };
export const WEAK_CLIENT: IdentityProviderMachineClient = { clientId: 'weak-robot', clientSecret: 'weak-secret', claims: { acr: 'pwd' } };

export interface StepUpTopology {
  /** PUBLIC_URL's origin (the first proxy in split mode). */
  origin: string;
  idp: IdentityProvider;
  upstream: EchoUpstream;
  /** Registers a service as the admin; resolves with its id. */
  createService(fields: Record<string, unknown>): Promise<string>;
  /** The handles of `sub`'s live sessions (`GET /api/sessions?user=`). */
  sessionHandles(sub: string): Promise<string[]>;
  /** Changes the stored session of `handle` (to make its sign-in older than a service allows). */
  changeSession(handle: string, change: (session: Session) => Session): Promise<void>;
  /** An access token of `client` for {@link STEP_UP_API}. */
  tokenOf(client: IdentityProviderMachineClient): Promise<string>;
  close(): Promise<void>;
}

const PROVIDER = { acrValues: ['pwd', 'mfa'], machineClients: [STRONG_CLIENT, WEAK_CLIENT], apiResources: [STEP_UP_API] };
const ENV = { OIDC_API_AUDIENCES: STEP_UP_API, RATE_LIMIT_AUTH: '0', RATE_LIMIT_GENERAL: '0' };

/** Starts the topology. */
export async function startStepUpTopology(topology: 'embedded' | 'split'): Promise<StepUpTopology> {
  const upstream = await startEchoUpstream();
  const parts = topology === 'embedded' ? await embedded() : await split();
  const { apiUrl, admin, idp } = parts;
  return {
    origin: parts.origin,
    idp,
    upstream,
    createService: (fields) => createService(apiUrl, admin, { targetUrl: upstream.origin, ...fields }),
    async sessionHandles(sub) {
      const response = await request(`${apiUrl}/api/sessions?user=${encodeURIComponent(sub)}`, { headers: { cookie: admin.cookie } });
      return ((await response.body.json()) as { sessions: { id: string }[] }).sessions.map((s) => s.id);
    },
    changeSession: parts.changeSession,
    tokenOf: (client) => clientCredentialsToken({ issuer: idp.issuer, clientId: client.clientId, clientSecret: client.clientSecret, resource: STEP_UP_API }),
    async close() {
      await parts.close();
      await upstream.close();
    },
  };
}

interface Parts {
  origin: string;
  apiUrl: string;
  admin: SignedIn;
  idp: IdentityProvider;
  changeSession: StepUpTopology['changeSession'];
  close(): Promise<void>;
}

async function embedded(): Promise<Parts> {
  const { gw, idp, close } = await startGatewayWithProvider(ENV, PROVIDER);
  const changeSession = async (handle: string, change: (session: Session) => Session) => {
    if (!(await gw.gateway.sessions.update(handle, change))) throw new Error('no such session');
  };
  return { origin: gw.origin, apiUrl: gw.origin, admin: await signIn(gw), idp, changeSession, close };
}

async function split(): Promise<Parts> {
  const gateway = await startSplitGateway(ENV, PROVIDER);
  // the test's own connection to the sessions' Redis, as the admin process would change a session
  const backends = await openBackends(loadConfig({ ...gateway.env, LOG_LEVEL: 'silent' }), createLogger('silent', 'test'));
  const changeSession = async (handle: string, change: (session: Session) => Session) => {
    if (!(await backends.sessions.update(handle, change))) throw new Error('no such session');
  };
  const close = async () => {
    await backends.close();
    await gateway.close();
  };
  return { origin: gateway.proxies[0].url, apiUrl: gateway.adminUrl, admin: await gateway.signIn(), idp: gateway.idp, changeSession, close };
}
