import { hash } from 'node:crypto';

/**
 * Remembers token ids that were used once, across every process and host (a back-channel logout
 * token's `jti`: OpenID Connect Back-Channel Logout 1.0 §2.6 step 10), so a replayed token is
 * refused for as long as it could otherwise be accepted. Ids are stored as SHA-256 hashes.
 */
export interface ReplayGuard {
  /**
   * Records `id` until `until` (epoch ms). @returns true the first time, false when it was already
   * recorded and not yet forgotten.
   * @throws when the store cannot be reached (the caller refuses the token: it cannot tell).
   */
  firstUse(id: string, until: number): Promise<boolean>;
}

/** The stored key of a token id: SHA-256, base64url (ids may be long or hold any character). */
export function usedIdKey(id: string): string {
  return hash('sha256', id, 'base64url');
}
