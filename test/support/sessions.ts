import { sampleSession } from './samples.js';
import { gatewayCookieNames } from '../../shared/http/cookies.js';
import type { SessionUser } from '../../shared/types.js';
import type { TestGateway } from './gateway.js';

/** A signed-in client: a ready `Cookie` header value and the session's CSRF token. */
export interface SignedIn {
  cookie: string;
  csrfToken: string;
  user: SessionUser;
}

/**
 * Creates a session directly in the gateway's session store, for tests of the API rather than of
 * login (auth tests sign in through the real identity provider). `isAdmin` defaults to true.
 * `origin` `admin` makes a session of ADMIN_URL's origin, in its own cookie (`gw_admin_session`).
 */
export async function signIn(gw: TestGateway, user: Partial<SessionUser> = {}, origin: 'public' | 'admin' = 'public'): Promise<SignedIn> {
  const fullUser: SessionUser = { sub: 'admin-sub', name: 'Ada Admin', email: 'admin@example.com', isAdmin: true, ...user };
  const session = sampleSession({
    user: fullUser,
    idToken: null,
    expiresAt: Date.now() + gw.gateway.config.sessionTtlMs,
    ...(origin === 'admin' ? { scope: 'admin' as const } : {}),
  });
  const { csrfToken } = session;
  const id = await gw.gateway.sessions.create(session);
  const { publicUrl, adminUrl } = gw.gateway.config;
  const names = origin === 'admin' ? gatewayCookieNames(adminUrl!, 'admin') : gatewayCookieNames(publicUrl);
  return { cookie: `${names.session}=${id}`, csrfToken, user: fullUser };
}
