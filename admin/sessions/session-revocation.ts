import type { SessionStore } from '../../shared/backends/session-store.js';
import type { Session } from '../../shared/types.js';
import type { Actor, AuditLog } from '../audit-log.js';
import type { GrantRelease } from './grant-release.js';

/**
 * Why sessions ended, as the audit log's `SESSION_REVOKED` details say it (`reason`), and who
 * decided (`by`): an administrator (API or console), the user themselves (`/auth/sessions`), or the
 * identity provider (a back-channel logout; a refused refresh token; unreachable past the grace),
 * or the gateway (a refresh token sealed under a key no longer configured).
 */
export const REVOCATION_CAUSES = {
  'admin-revoked': 'administrator',
  'signed-out-elsewhere': 'user',
  'backchannel-logout': 'identity provider',
  'grant-revoked': 'identity provider',
  'provider-unreachable': 'identity provider',
  'refresh-token-unreadable': 'gateway',
} as const;

export type RevocationCause = keyof typeof REVOCATION_CAUSES;

/** Causes after which the session's refresh token is still good at the provider, and is given back. */
const RELEASES_GRANT: ReadonlySet<RevocationCause> = new Set(['admin-revoked', 'signed-out-elsewhere', 'backchannel-logout']);

/**
 * Ends sessions and says so in the audit log: one `SESSION_REVOKED` entry per user whose sessions
 * ended, with whose (`subject`, `email`), how many (`count`), by whom (`by`, and the entry's actor)
 * and why (`reason`). Every process stops accepting them within a second (SessionStore.revoke),
 * and their refresh tokens still good at the provider are revoked there (grant-release.ts).
 */
export class SessionRevocation {
  readonly #store: SessionStore;
  readonly #audit: AuditLog;
  readonly #grants: GrantRelease;

  constructor(store: SessionStore, audit: AuditLog, grants: GrantRelease) {
    this.#store = store;
    this.#audit = audit;
    this.#grants = grants;
  }

  /**
   * Ends `sessions`; `actor` is who asked (its `userId` null for the identity provider).
   * @returns how many were still live. Nothing is audited when none was.
   * @throws what the store throws when it cannot be reached (nothing is audited then).
   */
  async end(sessions: readonly Session[], actor: Actor, cause: RevocationCause): Promise<number> {
    let total = 0;
    for (const [sub, ofUser] of groupBySubject(sessions)) {
      const count = await this.#store.revoke(ofUser.map((session) => session.handle));
      if (count === 0) continue;
      total += count;
      if (RELEASES_GRANT.has(cause)) this.#grants.release(ofUser);
      const details = { subject: sub, email: ofUser[0]!.user.email, count, by: REVOCATION_CAUSES[cause], reason: cause };
      this.#audit.record({ action: 'SESSION_REVOKED', ...actor, serviceId: null, details });
    }
    return total;
  }
}

function groupBySubject(sessions: readonly Session[]): Map<string, Session[]> {
  const groups = new Map<string, Session[]>();
  for (const session of sessions) groups.set(session.user.sub, [...(groups.get(session.user.sub) ?? []), session]);
  return groups;
}
