import { describeError } from '../../shared/error-code.js';
import type { Logger } from '../../shared/logger.js';
import type { CertificateRow } from './acme-rows.js';
import { certificateId, type RenewalInfoClient } from './renewal-info.js';
import { renewalTime, retryDelay, suggestedRenewalTime } from './renewal-policy.js';

/**
 * How often a certificate's renewal information is asked for when the CA sends no Retry-After, or
 * has no `renewalInfo` at all, in ms (RFC 9773 §4.3's fallback for a long-term error).
 */
export const RENEWAL_INFO_INTERVAL_MS = 6 * 3600_000;

/** What this process knows about one host's certificate's renewal information. */
interface Asked {
  /** The certificate asked about: another one (a renewal) is asked about at once. */
  certPem: string;
  /** When to ask next, epoch ms. */
  nextAt: number;
  /** Failed asks in a row. */
  failures: number;
}

/**
 * ACME Renewal Information for the certificate manager (design.md §4.15, RFC 9773): when each held
 * certificate's suggested window is asked for (at once after its issuance, then as Retry-After
 * says, 6 hours without one, §4.3; not once it expired), the renewal time the answer gives
 * (renewal-policy.ts {@link suggestedRenewalTime}), and the `replaces` of a renewal order (§5).
 * A failed ask is logged at warn once per host until one succeeds (at debug after that) and tried
 * again with the orders' backoff; the renewal time stands meanwhile. What was asked when is kept
 * in memory: a restarted admin process asks about every certificate once more.
 */
export class RenewalAdvice {
  readonly #client: RenewalInfoClient;
  readonly #logger: Logger;
  readonly #asked = new Map<string, Asked>();
  readonly #asking = new Set<string>();

  constructor(client: RenewalInfoClient, logger: Logger) {
    this.#client = client;
    this.#logger = logger;
  }

  /** When to ask about `row`'s certificate, epoch ms (`now` or before: due); Infinity while none is held, it expired, or an ask is under way. */
  dueAt(row: CertificateRow, now: number): number {
    if (row.certPem === null || (row.notAfter ?? 0) <= now || this.#asking.has(row.host)) return Infinity;
    const asked = this.#asked.get(row.host);
    return asked?.certPem === row.certPem ? asked.nextAt : now;
  }

  /**
   * Asks the CA about `row`'s certificate. Resolves with its new renewal time
   * (epoch ms) when the answer moves it, else undefined: no `renewalInfo` in the directory, the
   * time unchanged, no certificate held, or a failure (logged). Never rejects.
   */
  async ask(row: CertificateRow, now: number): Promise<number | undefined> {
    const { host, certPem } = row;
    if (certPem === null) return undefined;
    const previous = this.#asked.get(host);
    const failures = previous?.certPem === certPem ? previous.failures : 0;
    this.#asking.add(host);
    try {
      const url = await this.#client.renewalInfoUrl(now);
      if (url === undefined) {
        this.#asked.set(host, { certPem, nextAt: now + RENEWAL_INFO_INTERVAL_MS, failures: 0 });
        return undefined;
      }
      const info = await this.#client.fetch(url, certificateId(certPem), now);
      this.#asked.set(host, { certPem, nextAt: now + (info.retryAfterMs ?? RENEWAL_INFO_INTERVAL_MS), failures: 0 });
      // A row holding a certificate has its times (acme-rows.ts `issued` writes them together).
      const moved = suggestedRenewalTime(info.window, row.renewAt!, renewalTime(row.notBefore!, row.notAfter!), now);
      if (moved === row.renewAt) return undefined;
      this.#logger.info({ host, renewal: new Date(moved).toISOString(), explanationUrl: info.explanationUrl }, 'certificate renewal time set by the CA\'s renewal information');
      return moved;
    } catch (error) {
      const delayMs = retryDelay(failures + 1);
      this.#asked.set(host, { certPem, nextAt: now + delayMs, failures: failures + 1 });
      const level = failures === 0 ? 'warn' : 'debug';
      this.#logger[level]({ host, retryInMs: delayMs, err: describeError(error) }, 'renewal information (RFC 9773) not fetched; the renewal time stands');
      return undefined;
    } finally {
      this.#asking.delete(host);
    }
  }

  /**
   * The `replaces` of a renewal order for `row` (RFC 9773 §5): its certificate's identifier when
   * the CA offers renewal information and this is the renewal's first try; a retry after a failure
   * goes without it, so a CA that refuses it (alreadyReplaced) costs one backoff step, not the
   * renewal. Undefined as well for a first certificate, an expired one, or an unreadable directory.
   */
  async replaces(row: CertificateRow, now: number): Promise<string | undefined> {
    if (row.certPem === null || row.failures > 0 || (row.notAfter ?? 0) <= now) return undefined;
    try {
      return (await this.#client.renewalInfoUrl(now)) === undefined ? undefined : certificateId(row.certPem);
    } catch {
      return undefined; // the order that follows reaches the same directory and reports why it cannot
    }
  }

  /** Stops the connections to the CA. */
  close(): void {
    this.#client.close();
  }
}
