import { CookieJar, loginThroughProvider, type BrowseResult } from './browserless-login.js';
import { DEMO_USERS, startIdentityProvider, type IdentityProvider, type IdentityProviderOptions } from './identity-provider.js';
import { freePort } from './free-port.js';
import { startTestGateway, type TestGateway } from './gateway.js';

export const CLIENT_ID = 'gatehouse-test';
export const CLIENT_SECRET = 'gatehouse-test-secret';

/** A gateway and the real OpenID Provider it trusts, registered with each other. */
export interface GatewayWithProvider {
  gw: TestGateway;
  idp: IdentityProvider;
  /** Signs in through the provider's forms; `returnTo` is passed to `/auth/login`. */
  login(email: string, options?: { returnTo?: string; jar?: CookieJar; password?: string }): Promise<BrowseResult>;
  close(): Promise<void>;
}

/** What a test asks of the provider beyond its options: the client's back-channel logout URI. */
export type ProviderSetup = Partial<IdentityProviderOptions> & {
  /** Registers `<gateway>/auth/backchannel-logout` as the client's `backchannel_logout_uri` (with `sid`). */
  backchannelLogout?: boolean;
};

/**
 * Starts oidc-provider on a free port with a client whose redirect URI is the gateway's
 * `/auth/callback`, then the gateway with `ADMIN_EMAILS=admin@example.com` (overridable in `env`).
 * With `env.ADMIN_URL`, that origin's callback and post-logout URIs are registered too.
 * `env.PORT` and `env.PUBLIC_URL` are kept when given (an https:// gateway); otherwise
 * `gatewayHost` names the gateway in PUBLIC_URL (default 127.0.0.1, the provider's own host;
 * `localhost` makes the provider's form_post cross-site, as with a real identity provider); `onLog`
 * reads the gateway's log lines (at `env.LOG_LEVEL`, silent unless set).
 */
export async function startGatewayWithProvider(
  env: Record<string, string> = {},
  providerSetup: ProviderSetup = {},
  gatewayHost = '127.0.0.1',
  onLog?: (line: string) => void,
): Promise<GatewayWithProvider> {
  const { backchannelLogout, ...providerOptions } = providerSetup;
  // A gateway on its own PORT and PUBLIC_URL (an https:// one, say) is registered as such.
  const port = env.PORT ?? String(await freePort());
  const origin = env.PUBLIC_URL ?? `http://${gatewayHost}:${port}`;
  const origins = env.ADMIN_URL ? [origin, env.ADMIN_URL] : [origin];
  const idp = await startIdentityProvider({
    clients: [
      {
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        redirectUris: origins.map((o) => `${o}/auth/callback`),
        postLogoutRedirectUris: origins.map((o) => `${o}/`),
        ...(backchannelLogout ? { backchannelLogoutUri: `${origin}/auth/backchannel-logout` } : {}),
      },
    ],
    ...providerOptions,
  });
  // A gateway that fails to start (a port taken meanwhile) must not leave the provider running,
  // which would keep the test file, and the whole run, from ending.
  const gw = await startTestGateway({
    PORT: port,
    PUBLIC_URL: origin,
    OIDC_ISSUER: idp.issuer,
    OIDC_CLIENT_ID: CLIENT_ID,
    OIDC_CLIENT_SECRET: CLIENT_SECRET,
    ADMIN_EMAILS: 'admin@example.com',
    ...env,
  }, { ...(onLog ? { onLog } : {}) }).catch(async (error: unknown) => {
    await idp.close();
    throw error;
  });
  return {
    gw,
    idp,
    login(email, options = {}) {
      const user = (providerOptions.users ?? DEMO_USERS).find((candidate) => candidate.email === email);
      const query = options.returnTo === undefined ? '' : `?returnTo=${encodeURIComponent(options.returnTo)}`;
      return loginThroughProvider({
        loginUrl: `${gw.origin}/auth/login${query}`,
        email,
        password: options.password ?? user?.password ?? 'unknown',
        jar: options.jar ?? new CookieJar(),
      });
    },
    async close() {
      await gw.close();
      await idp.close();
    },
  };
}
