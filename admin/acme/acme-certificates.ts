import { createHash, randomBytes, randomUUID } from 'node:crypto';
import acme from 'acme-client';
import type { Database } from 'better-sqlite3';
import type { EventBus } from '../../shared/backends/event-bus.js';
import type { AcmeSettings } from '../../shared/config/tls-settings.js';
import { describeError } from '../../shared/error-code.js';
import type { TokenCipher } from '../../shared/identity/token-encryption.js';
import type { Logger } from '../../shared/logger.js';
import type { CertificateBundle } from '../../shared/tls/acme-messages.js';
import type { CertificateFeed, ManagedCertificates } from '../../shared/tls/certificate-feed.js';
import { AcmeAccount } from './acme-account.js';
import { acmeHosts } from './acme-hosts.js';
import { AcmeRows, type CertificateRow } from './acme-rows.js';
import { certificateStatus, nextOrderTime, type CertificateStatus } from './certificate-status.js';
import { ChallengeBoard } from './challenge-board.js';
import { orderCertificate, type ChallengeType } from './certificate-order.js';
import { RenewalAdvice } from './renewal-advice.js';
import { RenewalInfoClient } from './renewal-info.js';
import { renewalTime, retryDelay } from './renewal-policy.js';

/** Orders under way at once, for different hosts (a host has at most one). */
const MAX_CONCURRENT_ORDERS = 4;
/** How long a host's order lease lasts, in ms: longer than any order takes; a crashed holder's lapses. */
const LEASE_MS = 10 * 60_000;
/** When another process holds a host's lease, how long before looking again, in ms. */
const LEASED_ELSEWHERE_MS = 30_000;
/** The longest the scheduler sleeps, in ms (a timer far ahead is re-armed from the database). */
const MAX_SLEEP_MS = 3600_000;
/** A failure's message is kept this long at most, in characters. */
const MAX_ERROR_LENGTH = 500;

export interface AcmeCertificatesOptions {
  settings: AcmeSettings;
  /** PUBLIC_URL, ADMIN_URL: their hosts get certificates too. */
  publicUrl: URL;
  adminUrl: URL | undefined;
  /** HTTP_PORT: set, HTTP-01 is preferred (the CA reaches port 80); else TLS-ALPN-01 (port 443). */
  httpPort: number | undefined;
  db: Database;
  /** Seals private keys at rest: the refresh tokens' cipher. */
  cipher: TokenCipher;
  /** Registry snapshots in (hosts), challenges and certificate notices out. */
  bus: EventBus;
  logger: Logger;
}

/** Orders since the start, by outcome (for `/metrics`). */
export interface AcmeTotals {
  issued: number;
  failed: number;
}

/**
 * Certificates by ACME in the admin process (design.md §4.15): keeps one for each host of
 * {@link acmeHosts} (from every registry snapshot), ordered at once for a host without one,
 * renewed at two thirds of its lifetime or earlier when the CA's renewal information (RFC 9773)
 * says so ({@link RenewalAdvice}), retried with backoff after a failure (logged, counted),
 * one order per host at a time (a lease in the database). What it holds reaches this process's
 * listeners in-process ({@link onCertificates}) and the proxy processes as a notice on the event
 * bus, with a fetch token for {@link bundle}, which the admin port serves them.
 */
export class AcmeCertificates implements CertificateFeed {
  /** The bearer token that fetches {@link bundle} (shared/tls/acme-messages.ts), drawn at each start. */
  readonly fetchToken = randomBytes(32).toString('base64url');
  readonly totals: AcmeTotals = { issued: 0, failed: 0 };
  readonly #options: AcmeCertificatesOptions;
  readonly #rows: AcmeRows;
  readonly #account: AcmeAccount;
  readonly #board: ChallengeBoard;
  readonly #advice: RenewalAdvice;
  readonly #preferred: readonly ChallengeType[];
  readonly #holder = randomUUID();
  readonly #listeners = new Set<(certificates: ManagedCertificates) => void>();
  readonly #running = new Set<string>();
  readonly #leasedElsewhere = new Map<string, number>();
  #wanted = new Set<string>();
  #current: ManagedCertificates | undefined;
  #timer: NodeJS.Timeout | undefined;
  #unsubscribe: (() => void) | undefined;
  #closed = false;

  constructor(options: AcmeCertificatesOptions) {
    this.#options = options;
    this.#rows = new AcmeRows(options.db, options.cipher);
    this.#account = new AcmeAccount(options.settings, this.#rows);
    this.#board = new ChallengeBoard(options.bus);
    this.#advice = new RenewalAdvice(new RenewalInfoClient(options.settings), options.logger);
    this.#preferred = options.httpPort === undefined ? ['tls-alpn-01', 'http-01'] : ['http-01', 'tls-alpn-01'];
  }

  /** Takes PUBLIC_URL's and ADMIN_URL's hosts now, then every registry snapshot's, and orders what is due. */
  start(): void {
    const { publicUrl, adminUrl, bus } = this.#options;
    this.#hostsChanged(acmeHosts(publicUrl, adminUrl, []));
    this.#unsubscribe = bus.onRegistry((services) => this.#hostsChanged(acmeHosts(publicUrl, adminUrl, services)));
  }

  onCertificates(listener: (certificates: ManagedCertificates) => void): () => void {
    this.#listeners.add(listener);
    if (this.#current !== undefined) listener(this.#current);
    return () => this.#listeners.delete(listener);
  }

  /** Every host's status (`GET /api/certificates`), by host. */
  list(now = Date.now()): CertificateStatus[] {
    return this.#wantedRows().map((row) => certificateStatus(row, now));
  }

  /** The pairs of the hosts that have a certificate (private keys opened), for the proxy processes. */
  bundle(): CertificateBundle {
    const certificates = [...(this.#current ?? [])].flatMap(([host, pair]) => (pair === null ? [] : [{ host, cert: pair.cert.toString(), key: pair.key.toString() }]));
    return { certificates };
  }

  /** Stops ordering and following the registry; an order under way finishes unrecorded. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#unsubscribe?.();
    this.#listeners.clear();
    this.#advice.close();
  }

  #hostsChanged(hosts: Set<string>): void {
    this.#wanted = hosts;
    this.#rows.ensure(hosts);
    this.#rows.forgetExpired(hosts, Date.now());
    this.#announce();
    this.#schedule(0);
  }

  #wantedRows(): CertificateRow[] {
    return this.#rows.list().filter((row) => this.#wanted.has(row.host));
  }

  /** Tells this process's listeners and, on the bus, every proxy process what is held now. */
  #announce(): void {
    const current = new Map(this.#wantedRows().map((row) => [row.host, row.certPem === null ? null : { cert: Buffer.from(row.certPem), key: Buffer.from(this.#rows.privateKey(row.host)!) }]));
    this.#current = current;
    for (const listener of this.#listeners) listener(current);
    const certificates = [...current].map(([host, pair]) => ({ host, fingerprint: pair === null ? null : createHash('sha256').update(pair.cert).digest('hex') }));
    this.#options.bus.publishCertificateNotice({ certificates, fetchToken: this.fetchToken }).catch((error: unknown) =>
      this.#options.logger.warn({ err: describeError(error) }, 'certificate notice not published yet; it will be once the event bus takes it'),
    );
  }

  #schedule(delayMs: number): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#tick(), Math.min(Math.max(delayMs, 0), MAX_SLEEP_MS)).unref();
  }

  /**
   * Starts the orders that are due (up to {@link MAX_CONCURRENT_ORDERS}) and the renewal
   * information asks that are, and sleeps until the next of either is.
   */
  #tick(): void {
    const now = Date.now();
    let next = Infinity;
    for (const row of this.#wantedRows()) {
      if (this.#running.has(row.host)) continue;
      const due = Math.max(nextOrderTime(row), this.#leasedElsewhere.get(row.host) ?? 0);
      if (due <= now && this.#running.size < MAX_CONCURRENT_ORDERS) {
        void this.#order(row);
        continue;
      }
      const advice = this.#advice.dueAt(row, now);
      if (advice <= now) void this.#askAdvice(row, now);
      else next = Math.min(next, advice);
      next = Math.min(next, Math.max(due, now + 1_000));
    }
    if (next !== Infinity) this.#schedule(next - now);
  }

  /** Asks the CA's renewal information about `row`'s certificate and stores the renewal time it moves to. */
  async #askAdvice(row: CertificateRow, now: number): Promise<void> {
    const renewAt = await this.#advice.ask(row, now);
    if (this.#closed) return;
    if (renewAt !== undefined) this.#rows.moveRenewal(row.host, row.certPem!, renewAt);
    this.#schedule(0);
  }

  async #order(row: CertificateRow): Promise<void> {
    const { host } = row;
    const now = Date.now();
    if (!this.#rows.lease(host, this.#holder, now, now + LEASE_MS)) {
      this.#leasedElsewhere.set(host, now + LEASED_ELSEWHERE_MS);
      return;
    }
    this.#leasedElsewhere.delete(host);
    this.#running.add(host);
    try {
      const replaces = await this.#advice.replaces(row, now);
      const ordered = await orderCertificate(await this.#account.client(), host, this.#board, this.#preferred, replaces);
      if (this.#closed) return;
      const info = acme.crypto.readCertificateInfo(ordered.certPem);
      const [notBefore, notAfter] = [info.notBefore.getTime(), info.notAfter.getTime()];
      this.#rows.issued(host, this.#holder, { ...ordered, issuer: info.issuer.commonName, notBefore, notAfter, renewAt: renewalTime(notBefore, notAfter) });
      this.totals.issued++;
      this.#options.logger.info({ host, issuer: info.issuer.commonName, notAfter: info.notAfter.toISOString(), renewal: row.certPem !== null, replaces }, 'certificate by ACME issued');
      this.#announce();
    } catch (error) {
      if (!this.#closed) this.#failed(row, error);
    } finally {
      this.#running.delete(host);
      this.#schedule(0);
    }
  }

  #failed(row: CertificateRow, error: unknown): void {
    const failures = row.failures + 1;
    const delayMs = retryDelay(failures);
    const message = describeError(error).message.slice(0, MAX_ERROR_LENGTH);
    this.#rows.failed(row.host, this.#holder, message, Date.now() + delayMs);
    this.totals.failed++;
    this.#options.logger.warn({ host: row.host, failures, retryInMs: delayMs, err: describeError(error) }, 'certificate by ACME not obtained; retrying with backoff');
  }
}
