import type { Session, SessionView } from '../../shared/types.js';

/**
 * A session as the sessions API and pages show it: its public handle as `id`, who, when (ISO 8601,
 * as elsewhere in the API) and from where it signed in. Never its id (the cookie), CSRF token, ID
 * token or refresh token.
 */
export function sessionView(session: Session): SessionView {
  const { sub, name, email } = session.user;
  return {
    id: session.handle,
    user: { sub, name, email },
    createdAt: new Date(session.createdAt).toISOString(),
    lastSeenAt: new Date(session.lastSeenAt).toISOString(),
    expiresAt: new Date(session.expiresAt).toISOString(),
    ipAddress: session.ipAddress,
    userAgent: session.userAgent,
  };
}
