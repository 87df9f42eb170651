import type { SessionStore } from '../../shared/backends/session-store.js';
import type { TokenCipher } from '../../shared/identity/token-encryption.js';
import type { Session, SessionUser } from '../../shared/types.js';
import type { CompletedLogin } from '../oidc/relying-party.js';

/**
 * A step-up sign-in's session (design.md §4.18): the browser's session, updated in place (same id,
 * same handle, so its host sessions and its place in the sessions list stay) with the new sign-in's
 * user (`authTime`, `acr`, `amr`, claims), ID token and refresh token. Only for the same user in the
 * same provider session on the same origin: a sign-in as someone else, or in another provider
 * session (whose `sid` a back-channel logout would name, and the stores index), is a new session.
 * @param current the session the browser had when the step-up started (login-transactions.ts
 *   `sessionHandle`), or null.
 * @returns true when `current` was updated; false when the caller must make a new session instead.
 */
export async function stepUpInPlace(
  store: SessionStore,
  cipher: TokenCipher,
  current: Session | null,
  scope: Session['scope'],
  user: SessionUser,
  completed: CompletedLogin,
): Promise<boolean> {
  if (current === null || current.user.sub !== user.sub || current.scope !== scope) return false;
  const sid = typeof completed.claims.sid === 'string' && completed.claims.sid !== '' ? completed.claims.sid : undefined;
  if (sid !== current.sid) return false;
  const { handle } = current;
  const refreshToken = completed.refreshToken === undefined ? undefined : cipher.encrypt(completed.refreshToken, handle);
  const now = Date.now();
  return store.update(handle, (stored) => {
    const { providerDownSince: _, ...rest } = stored;
    return { ...rest, user, idToken: completed.idToken, refreshToken: refreshToken ?? stored.refreshToken, checkedAt: now };
  });
}
