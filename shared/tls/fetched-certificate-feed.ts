import { request } from 'undici';
import type { EventBus } from '../backends/event-bus.js';
import type { Logger } from '../logger.js';
import { OutageLog } from '../outage-log.js';
import { CERTIFICATE_FETCH_PATH, isCertificateBundle, type CertificateBundle, type CertificateNotice } from './acme-messages.js';
import type { CertificateFeed, ManagedCertificates } from './certificate-feed.js';
import type { CertificatePair } from './tls-policy.js';

/** The first wait before fetching again after a failure, in ms; doubled per failure up to {@link MAX_RETRY_MS}. */
const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 30_000;
/** How long one fetch may take, in ms. */
const FETCH_TIMEOUT_MS = 10_000;

/**
 * A split-mode proxy process's {@link CertificateFeed} (design.md §4.15): the admin process's
 * certificate notice arrives over the event bus (Redis: read at start, on every change and by the
 * periodic version check, so a proxy started later gets it too), and the pairs it announces are
 * fetched from the admin process, `GET <ADMIN_INTERNAL_URL>/internal/certificates` with the
 * notice's fetch token, so no private key is ever written to Redis. A fetch that fails (the admin
 * process restarting) is retried with backoff, logged once per outage; meanwhile the last set
 * stays in force, and hosts without one get stand-ins (managed-certificate-source.ts).
 */
export class FetchedCertificateFeed implements CertificateFeed {
  readonly #adminInternalUrl: URL;
  readonly #outage: OutageLog;
  readonly #listeners = new Set<(certificates: ManagedCertificates) => void>();
  readonly #unsubscribe: () => void;
  #latest: ManagedCertificates | undefined;
  #notice: CertificateNotice | undefined;
  #fetching = false;
  #retryMs = FIRST_RETRY_MS;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(bus: Pick<EventBus, 'onCertificateNotice'>, adminInternalUrl: URL, logger: Logger) {
    this.#adminInternalUrl = adminInternalUrl;
    this.#outage = new OutageLog(logger, 'cannot fetch the certificates from the admin process; keeping the current ones and retrying', 'certificates fetched from the admin process again');
    this.#unsubscribe = bus.onCertificateNotice((notice) => {
      this.#notice = notice;
      void this.#update();
    });
  }

  onCertificates(listener: (certificates: ManagedCertificates) => void): () => void {
    this.#listeners.add(listener);
    if (this.#latest !== undefined) listener(this.#latest);
    return () => this.#listeners.delete(listener);
  }

  /** Stops following notices and retrying. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#unsubscribe();
    this.#listeners.clear();
  }

  /** Fetches for the latest notice, one fetch at a time; a notice arriving meanwhile is fetched for next. */
  async #update(): Promise<void> {
    if (this.#fetching || this.#closed) return;
    this.#fetching = true;
    clearTimeout(this.#retry);
    let notice: CertificateNotice | undefined;
    try {
      do {
        notice = this.#notice!;
        this.#publish(notice, await this.#fetch(notice));
      } while (notice !== this.#notice && !this.#closed);
      this.#outage.succeeded();
      this.#retryMs = FIRST_RETRY_MS;
    } catch (error) {
      this.#outage.failed(error);
      this.#retry = setTimeout(() => void this.#update(), this.#retryMs).unref();
      this.#retryMs = Math.min(this.#retryMs * 2, MAX_RETRY_MS);
    } finally {
      this.#fetching = false;
    }
  }

  /** The pairs of `notice`'s hosts that have a certificate (none asked for when no host has one). */
  async #fetch(notice: CertificateNotice): Promise<CertificateBundle> {
    if (notice.certificates.every((entry) => entry.fingerprint === null)) return { certificates: [] };
    const response = await request(new URL(CERTIFICATE_FETCH_PATH, this.#adminInternalUrl), {
      headers: { authorization: `Bearer ${notice.fetchToken}` },
      headersTimeout: FETCH_TIMEOUT_MS,
      bodyTimeout: FETCH_TIMEOUT_MS,
    });
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new Error(`the admin process answered ${response.statusCode}`);
    }
    const bundle: unknown = await response.body.json();
    if (!isCertificateBundle(bundle)) throw new Error('the admin process answered something that is no certificate bundle');
    return bundle;
  }

  #publish(notice: CertificateNotice, bundle: CertificateBundle): void {
    const pairs = new Map<string, CertificatePair>(bundle.certificates.map((entry) => [entry.host, { cert: Buffer.from(entry.cert), key: Buffer.from(entry.key) }]));
    const certificates = new Map(notice.certificates.map((entry) => [entry.host, pairs.get(entry.host) ?? null]));
    this.#latest = certificates;
    for (const listener of this.#listeners) listener(certificates);
  }
}
