import type { Database, Statement } from 'better-sqlite3';
import { calculateJwkThumbprint, exportJWK, generateKeyPair } from 'jose';
import type { AssertionKeySet, PublicAssertionKey, SigningAssertionKey } from '../../shared/identity/assertion-key-set.js';
import type { EventBus } from '../../shared/backends/event-bus.js';
import type { Config } from '../../shared/config/config.js';
import { errorCode } from '../../shared/error-code.js';
import type { Logger } from '../../shared/logger.js';
import type { Actor, AuditLog } from '../audit-log.js';

/** Why a key was replaced: an admin asked, or it reached ASSERTION_KEY_LIFETIME. */
export type RotationReason = 'manual' | 'lifetime';

/** An `assertion_keys` row (admin/migrations.ts). */
interface KeyRow {
  kid: string;
  private_jwk: string;
  created_at: number;
  retired_at: number | null;
}

/** The longest a timer waits before the keys are looked at again, in ms (also below setTimeout's 2^31 ms limit). */
const MAX_CHECK_DELAY_MS = 3_600_000;

/** The clock-skew and propagation allowance a retired key gets beyond ASSERTION_TTL, at most (design.md §4.7). */
const RETIRED_KEY_ALLOWANCE_MS = 60_000;

/**
 * How long a key stays published once retired (design.md §4.7): ASSERTION_TTL, so that every
 * assertion it signed expires first, plus an allowance for data planes that had not yet heard of
 * the new key and for upstream clocks running late: a minute, or ASSERTION_TTL itself when that
 * is shorter.
 */
export function retiredKeyGraceMs(assertionTtlMs: number): number {
  return assertionTtlMs + Math.min(RETIRED_KEY_ALLOWANCE_MS, assertionTtlMs);
}

/** Makes a new ES256 signing key: EC P-256, `kid` its JWK thumbprint (RFC 7638, SHA-256). */
export async function newSigningKey(): Promise<SigningAssertionKey> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const { x, y, d } = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint({ kty: 'EC', crv: 'P-256', x, y });
  return { kty: 'EC', crv: 'P-256', x: x!, y: y!, d: d!, kid, alg: 'ES256', use: 'sig' };
}

/** The public half of a signing key, as `/.well-known/jwks.json` shows it. */
export function publicHalf(key: SigningAssertionKey): PublicAssertionKey {
  return { kty: key.kty, crv: key.crv, x: key.x, y: key.y, kid: key.kid, alg: key.alg, use: key.use };
}

/**
 * The identity assertion's keys (design.md §4.7) in SQLite (`assertion_keys`), and their
 * publication to the data planes over the event bus.
 * - {@link start}: makes the first key when there is none, rotates a key older than
 *   ASSERTION_KEY_LIFETIME, deletes retired keys past their grace ({@link retiredKeyGraceMs}),
 *   publishes the key set (or leaves it to the bus to publish once Redis is reachable), and from
 *   then on does the same whenever the next of those moments comes (a timer, at least hourly,
 *   never keeping the process alive).
 * - {@link rotate}: a new key signs at once; the old one is retired, still published.
 * Rotations are audited as `ASSERTION_KEY_ROTATED` with details `{ kid, previousKid, reason }`.
 * Private keys are never logged, audited or returned.
 */
export class AssertionKeys {
  readonly #db: Database;
  readonly #audit: AuditLog;
  readonly #bus: Pick<EventBus, 'publishAssertionKeys'>;
  readonly #lifetimeMs: number;
  readonly #graceMs: number;
  readonly #logger: Logger;
  readonly #signing: Statement<[], KeyRow>;
  readonly #live: Statement<[number], KeyRow>;
  readonly #retire: Statement<[number, string]>;
  readonly #insert: Statement<[string, string, number]>;
  readonly #deleteExpired: Statement<[number]>;
  readonly #nextExpiry: Statement<[], { retired_at: number | null }>;
  #publishing: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    db: Database,
    audit: AuditLog,
    bus: Pick<EventBus, 'publishAssertionKeys'>,
    config: Pick<Config, 'assertionTtlMs' | 'assertionKeyLifetimeMs'>,
    logger: Logger,
  ) {
    this.#db = db;
    this.#audit = audit;
    this.#bus = bus;
    this.#lifetimeMs = config.assertionKeyLifetimeMs;
    this.#graceMs = retiredKeyGraceMs(config.assertionTtlMs);
    this.#logger = logger;
    this.#signing = db.prepare('SELECT * FROM assertion_keys WHERE retired_at IS NULL');
    this.#live = db.prepare(
      'SELECT * FROM assertion_keys WHERE retired_at IS NULL OR retired_at > ? ORDER BY retired_at IS NULL DESC, created_at DESC, kid',
    );
    this.#retire = db.prepare('UPDATE assertion_keys SET retired_at = ? WHERE kid = ?');
    this.#insert = db.prepare('INSERT INTO assertion_keys (kid, private_jwk, created_at) VALUES (?, ?, ?)');
    this.#deleteExpired = db.prepare('DELETE FROM assertion_keys WHERE retired_at IS NOT NULL AND retired_at <= ?');
    this.#nextExpiry = db.prepare('SELECT min(retired_at) AS retired_at FROM assertion_keys WHERE retired_at IS NOT NULL');
  }

  /**
   * Brings the keys up to date (see the class comment) and publishes them; call once, at start.
   * When Redis is unreachable (a bus error with code `REDIS_UNAVAILABLE`, after the bus's write
   * wait of about 2 s) it logs that and resolves anyway: the keys are stored, and the Redis bus
   * publishes the latest key set it was given as soon as Redis is back (snapshot-publisher.ts).
   * A process started before Redis then waits for it instead of exiting.
   * @throws whatever else the bus throws, or SQLite does.
   */
  async start(): Promise<void> {
    try {
      await this.#maintain(true);
    } catch (error) {
      if (!isRedisUnavailable(error)) throw error;
      this.#logger.warn('assertion keys not published yet: Redis is unreachable; they will be once it answers');
      this.#schedule();
    }
  }

  /**
   * Replaces the signing key with a new one now, on an admin's request; audited with `actor`.
   * @returns the new key's id and the retired one's.
   * @throws whatever the bus throws (the rotation itself is stored, and published again once it can be).
   */
  async rotate(actor: Actor): Promise<{ kid: string; previousKid: string | null }> {
    const key = await newSigningKey();
    const previousKid = this.#replace(key, actor, 'manual')!;
    await this.#publish();
    this.#schedule();
    return { kid: key.kid, previousKid };
  }

  /** The key set as the data planes get it: the signing key, and every key still published, it first, then newest first. */
  keySet(): AssertionKeySet {
    const rows = this.#live.all(Date.now() - this.#graceMs);
    const signing = rows.find((row) => row.retired_at === null);
    if (!signing) throw new Error('no assertion signing key: AssertionKeys.start() has not run');
    return { signing: parseKey(signing), published: rows.map((row) => publicHalf(parseKey(row))) };
  }

  /** Stops the timer; a check under way finishes without scheduling another. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }

  /** The checks of {@link start}; publishes when something changed (or `always`), then schedules the next. */
  async #maintain(always: boolean): Promise<void> {
    const now = Date.now();
    let changed = this.#deleteExpired.run(now - this.#graceMs).changes > 0;
    const signing = this.#signing.get();
    if (!signing || now - signing.created_at >= this.#lifetimeMs) {
      const key = await newSigningKey();
      if (this.#closed) return;
      const system: Actor = { userId: null, ipAddress: null };
      if (this.#replace(key, system, 'lifetime', signing?.kid ?? null) !== undefined) changed = true;
    }
    if (changed || always) await this.#publish();
    this.#schedule();
  }

  /**
   * In one transaction: retires the signing key (only when it is still `expectedKid`, if given)
   * and stores `key` as the one that signs. The very first key is logged, not audited.
   * @returns the retired key's id (null for the first key), or undefined when the signing key was
   *   not `expectedKid` any more: another rotation came first, and `key` is dropped.
   */
  #replace(key: SigningAssertionKey, actor: Actor, reason: RotationReason, expectedKid?: string | null): string | null | undefined {
    return this.#db.transaction(() => {
      const previousKid = this.#signing.get()?.kid ?? null;
      if (expectedKid !== undefined && previousKid !== expectedKid) return undefined;
      const now = Date.now();
      if (previousKid !== null) this.#retire.run(now, previousKid);
      this.#insert.run(key.kid, JSON.stringify(key), now);
      if (previousKid === null) {
        this.#logger.info({ kid: key.kid }, 'assertion signing key created');
      } else {
        this.#audit.record({ ...actor, action: 'ASSERTION_KEY_ROTATED', serviceId: null, details: { kid: key.kid, previousKid, reason } });
        this.#logger.info({ kid: key.kid, previousKid, reason }, 'assertion signing key rotated');
      }
      return previousKid;
    }).immediate(); // reads, then writes: IMMEDIATE, see ServiceRegistry's #write
  }

  /**
   * Publishes the key set. Publications run one after another and each reads the keys when its
   * turn comes, so the last one out always carries the latest state.
   */
  #publish(): Promise<void> {
    const next = this.#publishing.then(() => this.#bus.publishAssertionKeys(this.keySet()));
    this.#publishing = next.catch(() => undefined);
    return next;
  }

  /** Sets the timer for the next moment something changes: the signing key's rotation, or a retired key's expiry. */
  #schedule(): void {
    clearTimeout(this.#timer);
    if (this.#closed) return;
    const signing = this.#signing.get();
    const retiredAt = this.#nextExpiry.get()?.retired_at ?? null;
    const moments = [
      ...(signing ? [signing.created_at + this.#lifetimeMs] : []),
      ...(retiredAt !== null ? [retiredAt + this.#graceMs] : []),
    ];
    const delay = Math.min(MAX_CHECK_DELAY_MS, Math.max(0, Math.min(...moments) - Date.now()));
    this.#timer = setTimeout(() => {
      this.#maintain(false).catch((err: unknown) => {
        this.#logger.error({ err }, 'assertion keys: check failed; will retry');
        this.#schedule();
      });
    }, delay).unref();
  }
}

/**
 * Whether the bus failed because Redis is away: its RedisUnavailableError carries this stable code
 * (matched here rather than imported, so the admin plane does not depend on the Redis backend).
 */
function isRedisUnavailable(error: unknown): boolean {
  return errorCode(error) === 'REDIS_UNAVAILABLE';
}

function parseKey(row: KeyRow): SigningAssertionKey {
  return JSON.parse(row.private_jwk) as SigningAssertionKey;
}
