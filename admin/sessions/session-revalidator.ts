import type { Span } from '@opentelemetry/api';
import type { SessionStore } from '../../shared/backends/session-store.js';
import { OutageLog } from '../../shared/outage-log.js';
import type { Config } from '../../shared/config/config.js';
import { userFromClaims } from '../../shared/identity/identity-claims.js';
import type { Logger } from '../../shared/logger.js';
import type { TokenCipher } from '../../shared/identity/token-encryption.js';
import type { Session } from '../../shared/types.js';
import { SpanKind } from '../../shared/tracing/span-export.js';
import { GrantRevoked, ProviderUnavailable, type RelyingParty } from '../oidc/relying-party.js';
import { withinSpan, type AdminTracing } from '../tracing/admin-tracing.js';
import { markFailed } from '../../shared/tracing/server-span.js';
import type { RevocationCause, SessionRevocation } from './session-revocation.js';

/**
 * How long a refresh lock is held at most, in ms: longer than a token request may take (10 s,
 * relying-party.ts), so a second refresh never starts while the first may still be answered.
 */
const LOCK_TTL_MS = 30_000;
/**
 * While the provider is down, it is tried again this often (ms); sessions due meanwhile are only
 * marked, so an outage costs the provider one request per 5 s, not one per session.
 */
const OUTAGE_PROBE_MS = 5_000;
/** The identity provider as an audit actor: no user, no address. */
const PROVIDER = { userId: null, ipAddress: null };

export interface SessionRevalidatorDeps {
  store: SessionStore;
  relyingParty: RelyingParty;
  /** Unseals refresh tokens and seals the ones the provider rotates (admin/credentials/session-key-store.ts's keys). */
  cipher: TokenCipher;
  revocation: SessionRevocation;
  config: Pick<Config, 'sessionChecks' | 'oidc' | 'admins'>;
  /** Each refresh at the provider is a root span when sampled (design.md §3.10). */
  tracing: AdminTracing;
  logger: Logger;
}

/**
 * Re-checks sessions at the identity provider (the admin plane's side of shared/identity/session-gate.ts):
 * for each handle a data plane asks about, a refresh at the token endpoint (RFC 6749 §6) with the
 * session's refresh token, at most one per session at a time across every process (the store's
 * lock) and only while the session is still due, so 20 requests at the moment it falls due cost
 * one token request. Requests meanwhile go on with the session as it is, and a race never ends it.
 * - The provider answers: the session takes the user's current name, verified email, groups and
 *   admin flag (identity-claims.ts), the new refresh token when the provider rotated it, and a new
 *   `checkedAt`.
 * - `invalid_grant` (account disabled, grant revoked): the session ends.
 * - Down (unreachable, 5xx, timeouts, other errors): the session is marked with when that was first
 *   seen, and ends once SESSION_REVALIDATE_GRACE has passed since (the gate refuses it from then
 *   on, whoever notices first). The outage is logged once, and its end once.
 * A refresh at the provider is a trace of its own when the sampler keeps it: a root span
 * `session refresh` (its `gatehouse.session.refresh` says how it ended) over the provider's requests.
 */
export class SessionRevalidator {
  readonly #deps: SessionRevalidatorDeps;
  readonly #outage: OutageLog;
  /** Handles being re-checked by this process (the lock covers the others). */
  readonly #inFlight = new Set<string>();
  /** Epoch ms before which a provider found down is not asked again. */
  #probeAt = 0;

  constructor(deps: SessionRevalidatorDeps) {
    this.#deps = deps;
    this.#outage = new OutageLog(
      deps.logger,
      'identity provider unreachable: sessions cannot be re-checked and keep working for SESSION_REVALIDATE_GRACE',
      'identity provider reachable again: sessions are re-checked',
    );
  }

  /** Starts answering revalidation requests; returns what stops it. */
  start(): () => void {
    return this.#deps.store.onRevalidationRequest((handle) => {
      this.revalidate(handle).catch((error: unknown) => this.#deps.logger.warn({ err: error }, 'session re-check failed; a later request asks again'));
    });
  }

  /**
   * Re-checks the session of `handle` if it is due and nobody else is at it.
   * @throws what the store throws when it cannot be reached.
   */
  async revalidate(handle: string): Promise<void> {
    if (this.#inFlight.has(handle) || (await this.#due(handle)) === null) return;
    this.#inFlight.add(handle);
    try {
      if (!(await this.#deps.store.lockRefresh(handle, LOCK_TTL_MS))) return;
      try {
        // Read again under the lock: another process may have refreshed it just before.
        const session = await this.#due(handle);
        if (session !== null) await this.#refresh(session);
      } finally {
        await this.#deps.store.unlockRefresh(handle);
      }
    } finally {
      this.#inFlight.delete(handle);
    }
  }

  /** The session when it has a refresh token and was last checked SESSION_REVALIDATE ago or more. */
  async #due(handle: string): Promise<Session | null> {
    const session = await this.#deps.store.byHandle(handle);
    if (session?.refreshToken === undefined) return null;
    return Date.now() - session.checkedAt >= this.#deps.config.sessionChecks.revalidateMs ? session : null;
  }

  async #refresh(session: Session): Promise<void> {
    const { cipher } = this.#deps;
    // Past the grace the session is over, even if the provider is back: the gate refuses it already.
    if (this.#graceOver(session)) return this.#end(session, 'provider-unreachable');
    let refreshToken: string;
    try {
      refreshToken = cipher.decrypt(session.refreshToken!, session.handle);
    } catch (error) {
      // Sealed under a key no longer configured: it cannot be re-checked, so it is not trusted longer.
      this.#deps.logger.warn({ err: error }, 'a refresh token cannot be unsealed (SESSION_ENCRYPTION_KEY changed); its session ends');
      await this.#end(session, 'refresh-token-unreadable');
      return;
    }
    if (Date.now() < this.#probeAt) return this.#markDown(session);
    const span = this.#deps.tracing.startRoot('session refresh', SpanKind.INTERNAL, {});
    await withinSpan(span, async () => {
      const outcome = await this.#refreshAtProvider(session, refreshToken, span);
      span?.setAttribute('gatehouse.session.refresh', outcome);
      if (span !== undefined && outcome === 'provider-unavailable') markFailed(span, outcome);
    });
  }

  /** Refreshes `session`'s grant with `refreshToken` (the provider's requests under `span`); what came of it. */
  async #refreshAtProvider(session: Session, refreshToken: string, span: Span | undefined): Promise<'refreshed' | 'grant-revoked' | 'provider-unavailable'> {
    const { cipher, relyingParty } = this.#deps;
    try {
      const refreshed = await relyingParty.refresh(refreshToken, session.user.sub, span);
      this.#outage.succeeded();
      const user = userFromClaims(refreshed.claims, this.#deps.config);
      const sealed = refreshed.refreshToken === undefined ? undefined : cipher.encrypt(refreshed.refreshToken, session.handle);
      await this.#deps.store.update(session.handle, (current) => {
        const { providerDownSince: _, ...rest } = current;
        // design.md §4.18: how the user signed in comes from a new ID token alone (OIDC Core 1.0 §12.2:
        // still the original sign-in's); what it leaves out is kept
        const signIn = { ...signInKept(current.user), ...refreshed.signIn };
        return { ...rest, user: { ...user, ...signIn }, idToken: refreshed.idToken ?? current.idToken, refreshToken: sealed ?? current.refreshToken, checkedAt: Date.now() };
      });
      return 'refreshed';
    } catch (error) {
      if (error instanceof GrantRevoked) {
        await this.#end(session, 'grant-revoked');
        return 'grant-revoked';
      }
      if (!(error instanceof ProviderUnavailable)) throw error;
      this.#outage.failed(error);
      this.#probeAt = Date.now() + OUTAGE_PROBE_MS;
      await this.#markDown(session);
      return 'provider-unavailable';
    }
  }

  /** Records the outage on the session, or ends it once the grace has passed. */
  async #markDown(session: Session): Promise<void> {
    if (this.#graceOver(session)) return this.#end(session, 'provider-unreachable');
    if (session.providerDownSince !== undefined) return;
    await this.#deps.store.update(session.handle, (current) => ({ ...current, providerDownSince: current.providerDownSince ?? Date.now() }));
  }

  #graceOver(session: Session): boolean {
    const since = session.providerDownSince;
    return since !== undefined && Date.now() - since > this.#deps.config.sessionChecks.graceMs;
  }

  async #end(session: Session, cause: RevocationCause): Promise<void> {
    await this.#deps.revocation.end([session], PROVIDER, cause);
  }
}

/** The sign-in facts (`authTime`, `acr`, `amr`) of `user`, for what a refresh's ID token leaves out. */
function signInKept(user: Session['user']): Pick<Session['user'], 'authTime' | 'acr' | 'amr'> {
  const { authTime, acr, amr } = user;
  return { ...(authTime === undefined ? {} : { authTime }), ...(acr === undefined ? {} : { acr }), ...(amr === undefined ? {} : { amr }) };
}
